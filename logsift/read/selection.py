"""Which journal entries to read: the journal options of a command line (or of
`logsift.diagnose`), checked and turned into a Selection, as journalctl selects them:
`--file`, `--directory`, `-u`, `--since`, `--until`, `-b`, `--after-cursor`.
"""

from __future__ import annotations

import glob
import math
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Iterable

from logsift.exceptions import UsageError
from logsift.lazy import compile_lazily

UNIT_TYPES = (".service", ".socket", ".target", ".device", ".mount", ".automount", ".swap", ".timer",
              ".path", ".slice", ".scope")
_BOOT = compile_lazily(r"^(?:[0-9a-fA-F]{32})?(?:[+-]?\d+)?$")
_RELATIVE = compile_lazily(r"^(?P<sign>[+-])?\s*(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+)(?P<ago>\s+ago)?$")
_UNITS_S = {
    "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1, "sec": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800,
    "M": 2629800, "month": 2629800, "months": 2629800, "y": 31557600, "year": 31557600, "years": 31557600,
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
NO_JOURNAL = ("no journal files on this machine (is systemd-journald running?); "
              "read copied journals with --directory DIR or --file FILE")


@dataclass(frozen=True)
class Selection:
    """Which journal entries to read: the journal options of the command line, checked."""

    files: tuple[str, ...] = ()
    directory: str | None = None
    units: tuple[str, ...] = ()
    since_usec: int | None = None
    until_usec: int | None = None
    boot: str | None = None  # None: every boot; "0": the latest; "-1", "2", or a boot ID
    after_cursor: str | None = None

    @property
    def source(self) -> str:
        """The name used in messages and in each Record's `source`."""
        if self.directory:
            return self.directory
        if len(self.files) == 1:
            return self.files[0]
        return "journal"

    @property
    def wanted_entries(self) -> bool:
        """Whether only some entries of the journal are read (a unit, a time window, a boot)."""
        return bool(self.units or self.since_usec is not None or self.until_usec is not None or self.boot is not None
                    or self.after_cursor)

    @property
    def wanted(self) -> bool:
        """Whether the command line asked for the journal at all."""
        return bool(self.files or self.directory or self.units or self.since_usec is not None
                    or self.until_usec is not None or self.boot is not None or self.after_cursor)


JOURNAL_DEPTH = 4  # host subfolders, machine-id folders below them, and one more level


def journal_files(directory: str) -> tuple[str, ...]:
    """The journal files under `directory`, at any depth up to JOURNAL_DEPTH: journalctl -D looks
    only in the directory and its machine-id subfolders, but copies from a fleet are often kept
    as one folder per host (`DIR/gpu-node-07/system.journal`)."""
    found: list[str] = []
    root = os.path.abspath(directory)
    for path, folders, names in os.walk(root):
        depth = path[len(root):].count(os.sep)
        if depth >= JOURNAL_DEPTH:
            folders[:] = []
        folders.sort()
        found.extend(os.path.join(path, name) for name in sorted(names) if name.endswith((".journal", ".journal~")))
    return tuple(found)


def mangle_unit(name: str) -> str:
    """`sglang-k26` -> `sglang-k26.service`, as journalctl does; globs are left alone."""
    if any(char in name for char in "*?[") or name.endswith(UNIT_TYPES):
        return name
    return name + ".service"


def select(files: Iterable[str] = (), directory: str | None = None, units: Iterable[str] = (),
           since: str | None = None, until: str | None = None, boot: str | None = None,
           after_cursor: str | None = None, now: datetime | None = None) -> Selection:
    """A Selection from the option values as typed, with a UsageError for any that is wrong."""
    paths: list[str] = []
    for pattern in files:
        matched = sorted(glob.glob(pattern)) if any(char in pattern for char in "*?[") else [pattern]
        if not matched or not all(os.path.isfile(path) for path in matched):
            raise UsageError(f"--file {pattern}: no such file")
        paths.extend(matched)
    if directory and not os.path.isdir(directory):
        raise UsageError(f"--directory {directory}: no such directory")
    if paths and directory:
        raise UsageError("give either --file or --directory, not both")
    if boot is not None and not _BOOT.match(boot.strip()):
        raise UsageError(f"-b {boot!r}: give a boot ID (journalctl --list-boots) or an offset such as 0 or -1")
    if after_cursor and since:
        raise UsageError("give either --since or --after-cursor, not both")
    since_usec = parse_time(since, "--since", now) if since else None
    until_usec = parse_time(until, "--until", now) if until else None
    if since_usec is not None and until_usec is not None and since_usec > until_usec:
        raise UsageError("--since is after --until")
    return Selection(tuple(paths), directory, tuple(units), since_usec, until_usec,
                     boot.strip() if boot is not None else None, after_cursor or None)


def parse_time(text: str, option: str = "--since", now: datetime | None = None) -> int:
    """A journalctl time (local time unless it says otherwise) as microseconds since the epoch:
    "2026-05-25 20:11:00", "2026-05-25T20:11:00Z", "20:11", "today", "yesterday", "now",
    "-1h", "30min ago", "@1779739862". What is not a time, or is before 1970 or after 9999 (as
    journalctl, which refuses them: no journal entry can be dated so), is a UsageError."""
    out_of_range = UsageError(f"{option} {text!r}: out of range; give a time between 1970 and 9999")
    try:
        usec = _parse_time(text, option, now)
    except (OverflowError, ValueError, OSError):
        raise out_of_range from None
    if not 0 <= usec <= MAX_USEC:
        raise out_of_range
    return usec


MAX_USEC = round((datetime(9999, 12, 31, tzinfo=UTC) - _EPOCH).total_seconds() * 1e6)


def _parse_time(text: str, option: str, now: datetime | None) -> int:
    now = (now or datetime.now(UTC)).astimezone()
    value = text.strip()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    named = {"now": now, "today": midnight, "yesterday": midnight - timedelta(days=1),
             "tomorrow": midnight + timedelta(days=1)}
    stamp: datetime | None = named.get(value)
    if stamp is None and value.startswith("@"):
        try:
            seconds = float(value[1:])
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds):
            return round(seconds * 1e6)
    if stamp is None:
        relative = _RELATIVE.match(value)
        if relative is not None and relative.group("unit") in _UNITS_S and (relative.group("sign") or relative.group("ago")):
            seconds = float(relative.group("amount")) * _UNITS_S[relative.group("unit")]
            future = relative.group("sign") == "+" and not relative.group("ago")
            stamp = now + timedelta(seconds=seconds if future else -seconds)
    if stamp is None:
        stamp = _absolute(value, now)
    if stamp is None:
        raise UsageError(f"{option} {text!r}: not a time; use e.g. '2026-05-25 20:11:00', '-1h', 'today' or '@1779739862'")
    return round((stamp - _EPOCH).total_seconds() * 1e6)


def from_usec(usec: int) -> datetime:
    """Microseconds since the epoch as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=usec)


def _absolute(value: str, now: datetime) -> datetime | None:
    if re.fullmatch(r"\d\d:\d\d(?::\d\d)?", value):
        value = f"{now:%Y-%m-%d} {value}"
    try:
        stamp = datetime.fromisoformat(value.replace(" UTC", "+00:00").replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo:
        return stamp
    if stamp.year < 1970:
        raise OverflowError("before 1970")  # astimezone() of year 1 fails; journalctl refuses it too
    return stamp.astimezone()  # a naive time is local time, as journalctl reads it


