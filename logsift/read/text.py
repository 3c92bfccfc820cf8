"""journalctl's text formats (short, short-iso, short-precise, short-full, short-unix,
short-monotonic, with-unit), `cat`, and plain application logs, line by line.

Each line is tried against the journal prefix of the format seen last, then the others, so a
paste where journal lines and plain lines alternate still reads. A line with no prefix that is
indented right after a journal entry is a continuation line of that entry's multi-line MESSAGE.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Iterable, Iterator, Protocol

from logsift.read.relay import unwrap
from logsift.records import Record, SinceBoot
from logsift.sanitize import strip_ansi

_MONTHS = {m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}
_TAIL = r" (?P<host>\S+) (?P<ident>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: ?(?P<msg>.*)$"
# A paste may have lost the host ("Mar 27 17:40:36 kernel: NVRM: Xid ..."): a host never ends in ":".
_TAIL_HOSTLESS = r" (?:(?P<host>\S*[^\s:]) )?(?P<ident>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: (?P<msg>.*)$"

# Order matters only for speed: the format that matched last is tried first.
PREFIXES: dict[str, re.Pattern[str]] = {
    "short-iso": re.compile(
        r"^(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)" + _TAIL
    ),
    "short": re.compile(
        r"^(?P<mon>[A-Z][a-z]{2}) (?P<day>[ \d]\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d+)?" + _TAIL_HOSTLESS
    ),
    "short-full": re.compile(
        r"^[A-Z][a-z]{2} (?P<full>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (?P<tz>[A-Za-z+\-\d]+)"
        + _TAIL
    ),
    "short-unix": re.compile(r"^(?P<unix>\d{9,11}\.\d{1,9})" + _TAIL),
    "short-monotonic": re.compile(r"^\[\s*(?P<mono>\d+\.\d+)\]" + _TAIL),
}
_MARKER = re.compile(r"^-- (?:Boot (?P<boot>[0-9a-f]{32})|No entries|Reboot|Logs begin at |Journal begins at )")
_TRACEBACK = "Traceback (most recent call last)"
_PID = re.compile(r"\bpid=(\d+)\b")
_UNIT_SUFFIX = (".service", ".scope", ".socket", ".timer", ".mount", ".slice", ".target")
# `-o cat` drops the prefix, but systemd's own lines about a unit still say who wrote them.
_SYSTEMD_WORDING = re.compile(
    r"^(?:(?:Starting|Started|Stopping|Stopped|Failed to start) [\w@:.\\-]+\.(?:service|scope|socket|mount|timer)\b"
    r"|[\w@:.\\-]+\.(?:service|scope|socket|mount|timer): )"
)


BATCH = 2048


class Skipping(Protocol):
    """What a consumer of records tells a text reader so that it can leave lines unparsed.

    `flagged(batch)`: for each raw line of a batch, whether it could matter (a prefilter hit);
    `busy()`: whether the consumer wants every line now (an event is open and unflagged lines
    may continue it). The pipeline gives one (`Pipeline.skipping`); see TextReader.read_batches.
    """

    def flagged(self, batch: list[str]) -> list[bool]: ...

    def busy(self) -> bool: ...

    def span(self, first: datetime | None, last: datetime | None) -> None:
        """Told at the end the times of the first and last entries skipped, so that the time
        window read is known although most lines were never parsed."""


def _batches(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class TextReader:
    """Turns lines into Records; one instance per input, because it keeps a little state."""

    def __init__(self, source: str = "-", year: int | None = None) -> None:
        self.source = source
        now = datetime.now().astimezone()
        self.year = year or now.year
        self.month = now.month if year is None else 12
        self.order = list(PREFIXES.items())
        self.boot: str | None = None
        self.lines = 0  # input lines read so far, skipped ones included

    def read(
        self,
        lines: Iterable[str],
        first_line: int = 1,
        skipping: Skipping | None = None,
    ) -> Iterator[Record]:
        return self.read_batches(_batches(lines, BATCH), first_line, skipping)

    def read_batches(
        self,
        batches: Iterable[list[str]],
        first_line: int = 1,
        skipping: Skipping | None = None,
    ) -> Iterator[Record]:
        """Records from lines. With `skipping`, an entry whose lines are not flagged is skipped
        unparsed while the consumer is not busy: most healthy lines then cost one prefilter pass
        and no parsing. Each record is yielded before the next entry is looked at, so `busy`
        sees the consumer's state after the previous record.
        """
        flagged = skipping.flagged if skipping is not None else None
        busy = skipping.busy if skipping is not None else None
        pending: Record | None = None
        continuation: list[str] = []
        skipped: tuple[str, int] | None = None  # the unparsed first line of a skipped entry
        first_skipped: str | None = None
        last_skipped: str | None = None
        number = first_line - 1
        for batch in batches:
            marks = flagged(batch) if flagged is not None else None
            for index, raw in enumerate(batch):
                number += 1
                line = strip_ansi(raw) if "\x1b" in raw else raw
                if line[:1] in (" ", "\t") and not self._prefix(line):
                    if pending is None and skipped is not None and marks is not None and marks[index]:
                        # A flagged continuation line: parse the entry it belongs to after all.
                        match = self._prefix(skipped[0])
                        if match is not None:
                            pending = self._journal(match, skipped[1])
                    if pending is not None:
                        continuation.append(line)
                        continue
                    if skipped is not None and (marks is None or not marks[index]):
                        continue  # a continuation line of a skipped entry
                if pending is not None:
                    yield self._finish(pending, continuation)
                    pending, continuation = None, []
                before, skipped = skipped, None
                if line.startswith("-- "):
                    marker = _MARKER.match(line)
                    if marker:
                        if marker.group("boot"):
                            self.boot = marker.group("boot")
                        continue
                if marks is not None and not marks[index] and not (busy is not None and busy()):
                    skipped = (line, number)
                    if first_skipped is None:
                        first_skipped = line
                    last_skipped = line
                    continue
                if before is not None and _TRACEBACK in line:
                    # The logger's line before a traceback says at which level it was logged
                    # (python's exc_info): parse it after all, as if no line had been skipped.
                    yield self._entry(*before)
                match = self._prefix(line)
                if match is not None:
                    pending = self._journal(match, number)
                else:
                    yield self._plain(line, number)
        if pending is not None:
            yield self._finish(pending, continuation)
        self.lines = number
        if skipping is not None and last_skipped is not None:
            skipping.span(self._time_of(first_skipped), self._time_of(last_skipped))

    def _time_of(self, line: str | None) -> datetime | None:
        match = self._prefix(line) if line is not None else None
        return self._timestamp(match) if match is not None else None

    def _entry(self, line: str, number: int) -> Record:
        match = self._prefix(line)
        return self._journal(match, number) if match is not None else self._plain(line, number)

    def _prefix(self, line: str) -> re.Match[str] | None:
        for index, (_name, pattern) in enumerate(self.order):
            match = pattern.match(line)
            if match is not None:
                if index:
                    self.order.insert(0, self.order.pop(index))
                return match
        return None

    def _finish(self, record: Record, continuation: list[str]) -> Record:
        if not continuation:
            return record
        width = len(continuation[0]) - len(continuation[0].lstrip(" "))
        body = [line[width:] if line[:width].isspace() else line.lstrip() for line in continuation]
        return replace(record, message="\n".join([record.message, *body]), lines=1 + len(continuation))

    def _journal(self, match: re.Match[str], number: int) -> Record:
        ident = match.group("ident")
        pid = int(match.group("pid")) if match.group("pid") else None
        unit = None
        if ident.endswith(_UNIT_SUFFIX):  # with-unit: the unit stands where the identifier would
            # PID 1's own unit is init.scope; the unit its line is about is named in the message.
            unit = None if ident == "init.scope" else ident
            ident = "systemd" if ident == "init.scope" else ident.rsplit(".", 1)[0]
        said = unwrap(match.group("msg"))
        return Record(
            line=number,
            message=said.message,
            timestamp=self._timestamp(match),
            host=match.group("host"),
            unit=unit,
            identifier=ident,
            pid=pid,
            boot=self.boot,
            source=self.source,
            relay=said.stream,
            level=said.level,
            origin=said.origin,
            logger=said.logger,
        )

    def _plain(self, line: str, number: int) -> Record:
        said = unwrap(line)
        ident: str | None = None
        pid: int | None = None
        if said.stream is not None:
            # The relayed process stands for the identifier and pid a journal line would have.
            ident = said.stream.split(" ", 1)[0].rstrip(",")
            found = _PID.search(said.stream)
            pid = int(found.group(1)) if found else None
        elif _SYSTEMD_WORDING.match(line):
            ident = "systemd"
        return Record(line=number, message=said.message, identifier=ident, pid=pid, boot=self.boot,
                      source=self.source, relay=said.stream, level=said.level, origin=said.origin,
                      logger=said.logger)

    def _timestamp(self, match: re.Match[str]) -> datetime | None:
        groups = match.groupdict()
        try:
            if groups.get("iso"):
                text = groups["iso"].replace(",", ".")
                if text.endswith("Z"):
                    text = text[:-1] + "+00:00"
                stamp = datetime.fromisoformat(text)
                return stamp if stamp.tzinfo else stamp.astimezone()  # local time, with its DST
            if groups.get("mon"):
                month = _MONTHS.get(groups["mon"])
                if month is None:
                    return None
                year = self.year if month <= self.month else self.year - 1
                hour, minute, second = (int(part) for part in groups["hms"].split(":"))
                micro = int((groups.get("frac") or ".0")[1:].ljust(6, "0")[:6])
                # Local time as journalctl printed it: astimezone() gives that date's own offset (DST).
                return datetime(year, month, int(groups["day"]), hour, minute, second, micro).astimezone()
            if groups.get("full"):
                stamp = datetime.fromisoformat(groups["full"])
                tz = groups.get("tz") or ""
                return stamp.replace(tzinfo=UTC) if tz in ("UTC", "GMT") else stamp.astimezone()
            if groups.get("unix"):
                return datetime.fromtimestamp(float(groups["unix"]), tz=UTC)
            if groups.get("mono"):
                # Seconds since boot: only differences mean anything, which is all runs need.
                return SinceBoot.fromtimestamp(float(groups["mono"]), tz=UTC)
        except (ValueError, OverflowError, OSError):
            return None
        return None
