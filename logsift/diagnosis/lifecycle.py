"""What systemd (PID 1) says about a unit's life: the run boundaries that diagnosis needs.

Wordings of systemd 219 to 256: "Started X.service - Description." (newer) and
"Started Description." (older, no unit name), "X.service: Main process exited, code=exited,
status=1/FAILURE" (older: lowercase "main process exited"), "X.service: Failed with result
'exit-code'." (older: "Unit X.service entered failed state." / "X.service failed.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from logsift.lazy import compile_lazily

_UNIT = r"(?P<unit>[\w@:.\\-]+\.(?:service|scope|socket|mount|timer))"
# Each wording with a word it cannot match without, tried first as a substring:
# a PID 1 line costs a few `in` tests and the one regex that can match, whatever the number of
# wordings (systemd's lines are a large share of a host's journal, and all of a unit flood).
_PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("exited", "ain process exited, code=",
     compile_lazily(_UNIT + r": [Mm]ain process exited, code=(?P<code>\w+), status=(?P<status>\S+?)\.?$")),
    ("failed", ": Failed with result '", compile_lazily(_UNIT + r": Failed with result '(?P<result>[^']+)'")),
    ("failed", " entered failed state", compile_lazily(r"^Unit " + _UNIT + r" entered failed state")),
    ("failed", " failed.", compile_lazily(r"^" + _UNIT + r" failed\.$")),
    ("restart", " restart",
     compile_lazily(_UNIT + r": (?:Scheduled restart job|Service (?:hold-off time over|RestartSec=\S+ expired), scheduling restart)")),
    ("deactivated", ": Deactivated successfully", compile_lazily(_UNIT + r": Deactivated successfully")),
    ("limit", "tart request repeated too quickly", compile_lazily(_UNIT + r": [Ss]tart request repeated too quickly")),
    ("timeout", "tart operation timed out", compile_lazily(_UNIT + r": [Ss]tart operation timed out")),
    ("starting", "Starting ", compile_lazily(r"^Starting " + _UNIT + r"(?: - |\.\.\.)")),
    ("started", "Started ", compile_lazily(r"^Started " + _UNIT + r"(?: - |\.$)")),
    ("stopping", "Stopping ", compile_lazily(r"^Stopping " + _UNIT + r"(?: - |\.\.\.)")),
    ("stopped", "Stopped ", compile_lazily(r"^Stopped " + _UNIT + r"(?: - |\.$)")),
    ("failed-start", "Failed to start ", compile_lazily(r"^Failed to start " + _UNIT + r"(?: - |\.$)")),
    # `systemctl daemon-reload`: unit files (and drop-ins) were read again, so the next start of a
    # unit may run with a changed Environment= or ExecStart=.
    ("reloading", "Reloading", compile_lazily(r"^Reloading(?:\.|\.\.\.)$|^Reloading requested from client PID \d+")),
    # Older systemd names only the Description: the unit is whichever this input is about.
    ("starting", "Starting ", compile_lazily(r"^Starting (?P<description>.+?)\.\.\.$")),
    ("started", "Started ", compile_lazily(r"^Started (?P<description>.+?)\.$")),
    ("stopping", "Stopping ", compile_lazily(r"^Stopping (?P<description>.+?)\.\.\.$")),
    ("stopped", "Stopped ", compile_lazily(r"^Stopped (?P<description>.+?)\.$")),
    ("failed-start", "Failed to start ", compile_lazily(r"^Failed to start (?P<description>.+?)\.$")),
)


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """One lifecycle line: `what` happened to `unit` (None when only a description was given)."""

    what: str
    unit: str | None
    description: str | None = None
    code: str | None = None
    status: str | None = None
    result: str | None = None

    @property
    def exit(self) -> str | None:
        return f"status={self.status}" if self.status else None

    @property
    def success(self) -> bool:
        return self.code == "exited" and (self.status or "").split("/")[0] == "0"


@lru_cache(maxsize=4096)  # systemd repeats itself: the same lines on every restart
def parse(message: str) -> Lifecycle | None:
    for what, word, pattern in _PATTERNS:
        if word not in message:
            continue
        match = pattern.search(message)
        if match:
            groups = match.groupdict()
            return Lifecycle(
                what=what,
                unit=groups.get("unit"),
                description=groups.get("description"),
                code=groups.get("code"),
                status=groups.get("status"),
                result=groups.get("result"),
            )
    return None


_NAMED = compile_lazily(r"^" + _UNIT + r": ")


def unit_named(message: str) -> str | None:
    """The unit a systemd line is about when it starts with "X.service: " (any wording)."""
    match = _NAMED.match(message)
    return match.group("unit") if match else None
