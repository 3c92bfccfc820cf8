"""The export reader that leaves entries unparsed when they cannot matter (the `Skipping` of
logsift.read.text, for export files and for the `journalctl -o export` fallback).

journalctl prints every field of every entry, some thirty lines an entry, and turning each into
a Record costs tens of microseconds of Python: eight times what journalctl takes to print them.
So, as the text reader does, the raw bytes are scanned a buffer at a time by the prefilter, and
an entry is parsed only when one of its lines is a candidate, when PID 1 (or systemd without a
_PID, or the user manager) wrote it, when a process with an open event wrote it, or when
something about it needs the careful path (a binary field, an overlong MESSAGE, no _PID, the
first entry, the first kernel entry). Any other entry is looked at with a few C searches: one
regex that checks it is all `NAME=value` lines, and the values of the fields that the summary
counts (time, host, unit, boot), which `done` hands over at the end, as the text reader does.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from datetime import datetime
from typing import BinaryIO, Callable, Iterator

from logsift.read.export import FAST_MAX, MESSAGE_CAP, ExportReader, _Skip, _Stream, journal_time
from logsift.read.text import Skipping
from logsift.records import ReadProblems, Record

# A line that is not `NAME=value` (a binary field's name line): the careful path decides such
# an entry (as a CR before an LF). The first line is checked with _PLAIN_START.
_NOT_PLAIN = re.compile(rb"\n(?![A-Z_][A-Z0-9_]{0,63}=)")
_PLAIN_START = re.compile(rb"[A-Z_][A-Z0-9_]{0,63}=")
# The fields an unparsed entry is looked at for, in one C search of the entry.
_NAMES = (b"_PID", b"MESSAGE", b"_BOOT_ID", b"_HOSTNAME", b"_SYSTEMD_UNIT", b"_SYSTEMD_USER_UNIT",
          b"__REALTIME_TIMESTAMP", b"_SOURCE_REALTIME_TIMESTAMP", b"SYSLOG_IDENTIFIER", b"_COMM", b"_TRANSPORT")
_WANTED = b"|".join(_NAMES)
_FIELDS = re.compile(rb"\n(" + _WANTED + rb")=([^\n]*)")
_FIRST = re.compile(rb"(" + _WANTED + rb")=([^\n]*)")
# Called for each entry left unparsed, with its _BOOT_ID (journalctl's line numbering).
Skipped = Callable[[bytes | None], None]


def _fields(block: bytes) -> dict[bytes, bytes]:
    """The values of the _NAMES fields of an entry of plain field lines."""
    found = dict(_FIELDS.findall(block))
    first = _FIRST.match(block)
    if first is not None:
        found.setdefault(first.group(1), first.group(2))
    return found


class SkimmingExportReader(ExportReader):
    def __init__(self, source: str, problems: ReadProblems | None, skipping: Skipping,
                 skipped: Skipped | None = None, numbered: Callable[[Record], Record] | None = None) -> None:
        """`skipped`: told of each entry left unparsed, with its _BOOT_ID; `numbered`: gives each
        record its final line number (the journalctl fallback's), before `found` is told of it."""
        super().__init__(source, problems)
        self.skipping = skipping
        self.skipped = skipped
        self.numbered = numbered
        self._scanned: bytes | None = None  # the buffer the candidates are of
        self._starts: list[int] = []
        self._ids: list[list[int]] = []
        self._entries = 0
        self._kernel = False  # a kernel entry was parsed (the summary says whether there were any)
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.hosts: set[str] = set()
        self.units: set[str] = set()
        self._earliest: int | None = None  # microseconds, of the entries left unparsed
        self._latest: int | None = None
        self._raw_hosts: set[bytes | None] = set()
        self._raw_units: set[bytes | None] = set()

    def read(self, stream: BinaryIO) -> Iterator[Record]:
        yield from super().read(stream)
        self.skipping.done(self._lines(), *self._summary())

    # What `done` says was read, when the lines are numbered otherwise (journalctl's fallback
    # numbers them as `journalctl -o short` would): called at the end.
    count_lines: Callable[[], int] | None = None
    _last_skipped: tuple[int, bytes] | None = None  # the first line and the bytes of the last entry left unparsed

    def _lines(self) -> int:
        """The lines read, as a reader that parses every entry counts them: up to the MESSAGE
        line of the last entry (a record's line is its MESSAGE's)."""
        if self.count_lines is not None:
            return self.count_lines()
        if self._last_skipped is None:
            return 0
        line, block = self._last_skipped
        at = block.find(b"\nMESSAGE=")
        return line + (block.count(b"\n", 0, at + 1) if at >= 0 else 0)

    def _entry(self, data: _Stream) -> Record | _Skip | None:
        entry = super()._entry(data)
        if isinstance(entry, Record):
            # The careful path reads across buffer fills: its message is scanned on its own.
            found = self._structured(self.skipping.candidates(entry.message.encode("utf-8", "surrogateescape")))
            return self._parsed(entry, [index for _, ids in found for index in ids])
        return entry

    def _parsed(self, entry: Record, ids: list[int]) -> Record:
        if entry.identifier == "kernel":
            self._kernel = True
        if self.numbered is not None:
            entry = self.numbered(entry)
        self.skipping.found(entry, ids)  # the very record yielded: the pipeline knows it by identity
        self._widen(entry.timestamp)
        return entry

    def _fast(self, data: _Stream) -> Record | _Skip | None:
        buffer, start = data.buffer, data.position
        end = buffer.find(b"\n\n", start, start + FAST_MAX)
        if end <= start:
            return None  # the careful path: its entries are all parsed
        if buffer is not self._scanned:
            self._scan(buffer)
        block = buffer[start:end]
        self._entries += 1
        ids = self._candidate_ids(start, end)
        if ids is None and self._entries > 1 and self._plain(block):
            fields = _fields(block)
            if not self._needed(fields):
                lines = block.count(b"\n") + 2
                self._last_skipped = (data.line, block)
                data.position = end + 2
                self._advance(data, end + 2 - start)
                data.line += lines
                self._count(fields)
                if self.skipped is not None:
                    self.skipped(fields.get(b"_BOOT_ID"))
                return _SKIPPED_QUIETLY
        entry = super()._fast(data)
        if isinstance(entry, Record):
            return self._parsed(entry, ids or [])
        return entry

    @staticmethod
    def _advance(data: _Stream, size: int) -> None:
        if hasattr(data, "offset"):  # the bytes consumed, where the stream counts them
            data.offset += size

    def _structured(self, found: list[tuple[int, list[int]]]) -> list[tuple[int, list[int]]]:
        """Without the candidates for what matters only on plain text lines (an export entry
        never is one: Skipping.plain_only)."""
        plain = self.skipping.plain_only
        return [item for item in found if not (plain and plain.issuperset(item[1]))] if plain else found

    def _scan(self, buffer: bytes) -> None:
        found = self._structured(self.skipping.candidates(buffer))
        self._scanned = buffer
        self._starts = [start for start, _ in found]
        self._ids = [ids for _, ids in found]

    def _candidate_ids(self, start: int, end: int) -> list[int] | None:
        index = bisect_left(self._starts, start)
        found: list[int] | None = None
        starts = self._starts
        while index < len(starts) and starts[index] < end:
            found = (found or []) + self._ids[index]
            index += 1
        return found

    @staticmethod
    def _plain(block: bytes) -> bool:
        """Whether the entry is all `NAME=value` lines, with no CR at a line's end."""
        return _PLAIN_START.match(block) is not None and _NOT_PLAIN.search(block) is None \
            and b"\r\n" not in block and not block.endswith(b"\r")

    def _needed(self, fields: dict[bytes, bytes]) -> bool:
        """Whether an entry with no candidate line must be parsed anyway: systemd's (runs), one
        with no _PID or MESSAGE, or too long a MESSAGE (the parser says so), the first kernel
        entry (the summary says whether there were any), a process with an open event."""
        pid = fields.get(b"_PID")
        if pid is None or pid == b"1" or fields.get(b"SYSLOG_IDENTIFIER") == b"systemd" or fields.get(b"_COMM") == b"systemd":
            return True
        message = fields.get(b"MESSAGE")
        if message is None or len(message) > MESSAGE_CAP:
            return True
        if not self._kernel and fields.get(b"_TRANSPORT") == b"kernel":
            return True
        wanted = self.skipping.wanted
        if wanted:
            number = int(pid) if pid.isdigit() else None
            if any(stream[2] == number for stream in wanted):
                return True
        return False

    def _count(self, fields: dict[bytes, bytes]) -> None:
        """What the summary counts of an entry left unparsed: its time, host and unit (kept
        raw, turned into text once at the end)."""
        stamp = fields.get(b"_SOURCE_REALTIME_TIMESTAMP") or fields.get(b"__REALTIME_TIMESTAMP")
        if stamp is not None and stamp.isdigit():
            usec = int(stamp)
            if self._earliest is None or usec < self._earliest:
                self._earliest = usec
            if self._latest is None or usec > self._latest:
                self._latest = usec
        elif stamp is not None:
            self._widen(journal_time(stamp.decode("ascii", "replace")))
        self._raw_hosts.add(fields.get(b"_HOSTNAME"))
        self._raw_units.add(fields.get(b"_SYSTEMD_USER_UNIT") or fields.get(b"_SYSTEMD_UNIT"))

    def _summary(self) -> tuple[datetime | None, datetime | None, set[str], set[str]]:
        for usec in (self._earliest, self._latest):
            if usec is not None:
                self._widen(journal_time(str(usec)))
        hosts = self.hosts | {host.decode("utf-8", "replace") for host in self._raw_hosts if host is not None}
        units = self.units | {unit.decode("utf-8", "replace") for unit in self._raw_units if unit is not None}
        return self.first, self.last, hosts, units

    def _widen(self, stamp: datetime | None) -> None:
        if stamp is None:
            return
        if self.first is None or stamp < self.first:
            self.first = stamp
        if self.last is None or stamp > self.last:
            self.last = stamp


class _Quiet(_Skip):
    """An entry left unparsed on purpose: not a bad one."""


_SKIPPED_QUIETLY = _Quiet()


def read_export(stream: BinaryIO, source: str = "-", problems: ReadProblems | None = None,
                skipping: Skipping | None = None) -> Iterator[Record]:
    """Records of an export stream; with `skipping`, only of the entries that may matter."""
    if skipping is not None:
        return SkimmingExportReader(source, problems, skipping).read(stream)
    return ExportReader(source, problems).read(stream)
