"""journalctl's export format (`journalctl -o export`), and journal fields -> Record.

Export is the journal's own serialization: `KEY=value` lines; a value that holds a newline or
other control bytes is written as `KEY` + LF + its length as a 64-bit little-endian integer +
the bytes + LF; an empty line ends an entry. It is binary-safe, so it is parsed from bytes
here, never split into text lines first.

Memory stays bounded whatever the stream holds: a value longer than the cap keeps its first
`MESSAGE_CAP` bytes (marked) and the rest is skipped without being stored. An entry cut by the
end of the stream, or garbage where a field should be, is skipped and counted in ReadProblems.

`entry_record` (journal fields -> Record) is shared by every reader of structured journal
output: json, verbose, the native journal and the journalctl fallback.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import BinaryIO, Iterator, Mapping

from logsift.lazy import compile_lazily
from logsift.read.lines import MAX_LINE, TRUNCATED
from logsift.read.relay import Unwrapped, unwrap
from logsift.records import ReadProblems, Record
from logsift.sanitize import strip_ansi

MESSAGE_CAP = MAX_LINE  # bytes of MESSAGE kept; like a text line
FIELD_CAP = 4096  # characters kept of any other field in Record.fields
MAX_FIELDS = 256  # fields kept per entry (journald allows 1024)
DATA_MAX = 768 << 20  # journald's own limit for one field (DATA_SIZE_MAX): longer is garbage
CHUNK = 1 << 20
FAST_MAX = 64 * 1024  # an entry longer than this takes the careful path
# A binary value this long or shorter is checked whole before it is believed (see ExportReader).
LOOKAHEAD = 16 << 20

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FIELD_NAME = compile_lazily(rb"[A-Z_][A-Z0-9_]{0,63}")
_KNOWN_CAP = 4096  # valid field names remembered, so that each is checked once


def journal_time(usec: str | None) -> datetime | None:
    """A journal timestamp (microseconds since the epoch, as text) as an aware UTC datetime."""
    if not usec or not usec.isascii() or not usec.isdigit():
        return None
    try:
        return _EPOCH + timedelta(microseconds=int(usec))
    except OverflowError:
        return None


def sequence_number(fields: Mapping[str, str]) -> int | None:
    """The journal's sequence number of an entry: `__SEQNUM` (systemd 254+), else the `i=` part
    of its cursor (`s=...;i=1a2b;b=...`). Stable whatever the filters of the reader."""
    text = fields.get("__SEQNUM")
    if text and text.isascii() and text.isdigit():
        return int(text)
    cursor = fields.get("__CURSOR") or ""
    start = cursor.find(";i=")
    if start < 0:
        return None
    end = cursor.find(";", start + 3)
    try:
        return int(cursor[start + 3:end if end >= 0 else None], 16)
    except ValueError:
        return None


def entry_record(fields: Mapping[str, str], message: str, line: int, source: str, lines: int = 1,
                 numbered: bool = False) -> Record:
    """The Record of one journal entry, from its fields (MESSAGE given apart, already decoded).

    Mirrors what journalctl shows: the identifier is SYSLOG_IDENTIFIER (else _COMM), the time
    _SOURCE_REALTIME_TIMESTAMP (else __REALTIME_TIMESTAMP). PID 1 logs about a unit with `UNIT=`
    and `INVOCATION_ID=` (its own _SYSTEMD_UNIT is init.scope), so those name the unit and run.
    `numbered`: the entry comes from journal files, so its sequence number is what reports show
    (Record.entry).
    """
    get = fields.get
    pid_text = get("_PID") or ""
    pid = int(pid_text) if pid_text.isascii() and pid_text.isdigit() else None
    identifier = get("SYSLOG_IDENTIFIER") or get("_COMM")
    if pid == 1:
        unit, invocation = get("UNIT"), get("INVOCATION_ID")
    elif identifier == "systemd" and get("USER_UNIT"):  # a user manager about one of its units
        unit, invocation = get("USER_UNIT"), get("USER_INVOCATION_ID")
    else:
        unit = get("_SYSTEMD_USER_UNIT") or get("_SYSTEMD_UNIT")
        invocation = get("_SYSTEMD_INVOCATION_ID")
    priority_text = get("PRIORITY") or ""
    text = strip_ansi(message) if "\x1b" in message else message
    said = Unwrapped(text) if pid == 1 and identifier == "systemd" else unwrap(text)  # PID 1: no prefixes
    return Record(
        line=line,
        message=said.message,
        timestamp=journal_time(get("_SOURCE_REALTIME_TIMESTAMP") or get("__REALTIME_TIMESTAMP")),
        host=get("_HOSTNAME"),
        unit=unit,
        identifier=identifier,
        pid=pid,
        priority=int(priority_text) if priority_text.isascii() and priority_text.isdigit() else None,
        cursor=get("__CURSOR"),
        invocation=invocation,
        boot=get("_BOOT_ID"),
        source=source,
        lines=lines,
        fields=fields,
        entry=sequence_number(fields) if numbered else None,
        relay=said.stream,
        level=said.level,
        origin=said.origin,
        logger=said.logger,
    )


def cap_message(data: bytes, dropped: int = 0) -> tuple[str, bool]:
    """MESSAGE bytes as text, cut at MESSAGE_CAP with the cut marked; (text, was it cut)."""
    if len(data) > MESSAGE_CAP:
        dropped += len(data) - MESSAGE_CAP
        data = data[:MESSAGE_CAP]
    text = data.decode("utf-8", "replace")
    if dropped:
        return text + TRUNCATED.format(dropped), True
    return text, False


class _Stream:
    """Buffered reads over a byte stream that count the LF bytes consumed (input line numbers)
    and the bytes consumed (`offset`, so that a skipped entry can say how much it cost). Bytes
    can be looked at before they are consumed (`ahead`), which is how a binary value is checked
    before it is believed."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.buffer = b""
        self.position = 0
        self.line = 1  # line number of the next unread byte
        self.offset = 0  # bytes consumed before `position`, from the start of the stream
        self.eof = False

    def _fill(self) -> bool:
        if self.eof:
            return False
        data = self.stream.read(CHUNK)
        if not data:
            self.eof = True
            return False
        self.buffer = self.buffer[self.position :] + data
        self.position = 0
        return True

    def ahead(self, size: int) -> bytes:
        """The next `size` bytes (fewer at the end of the stream), not consumed."""
        while len(self.buffer) - self.position < size and self._fill():
            pass
        return self.buffer[self.position : self.position + size]

    def consume(self, size: int) -> None:
        """Move past `size` bytes that `ahead` has shown."""
        piece = self.buffer[self.position : self.position + size]
        self.line += piece.count(b"\n")
        self.offset += len(piece)
        self.position += len(piece)

    def readline(self, cap: int) -> tuple[bytes, int, bool] | None:
        """(line without LF, bytes dropped past `cap`, ended by LF), or None at the end."""
        kept = b""
        dropped = 0
        while True:
            end = self.buffer.find(b"\n", self.position)
            if end >= 0:
                piece = self.buffer[self.position : end]
                self.offset += end + 1 - self.position
                self.position = end + 1
                self.line += 1
                return self._join(kept, piece, dropped, cap) + (True,)
            piece = self.buffer[self.position :]
            self.offset += len(piece)
            self.position = len(self.buffer)
            kept, dropped = self._join(kept, piece, dropped, cap)
            if not self._fill():
                return (kept, dropped, False) if kept or dropped else None

    @staticmethod
    def _join(kept: bytes, piece: bytes, dropped: int, cap: int) -> tuple[bytes, int]:
        room = cap - len(kept)
        if len(piece) > room:
            return kept + piece[: max(room, 0)], dropped + len(piece) - max(room, 0)
        return kept + piece, dropped

    def read(self, size: int, cap: int) -> tuple[bytes, int, str]:
        """Up to `size` bytes, keeping the first `cap`: (kept, dropped, "complete" or "eof")."""
        kept: list[bytes] = []
        have = 0
        dropped = 0
        while size:
            if self.position >= len(self.buffer) and not self._fill():
                return b"".join(kept), dropped, "eof"
            piece = self.buffer[self.position : self.position + size]
            self.position += len(piece)
            self.offset += len(piece)
            size -= len(piece)
            self.line += piece.count(b"\n")
            room = cap - have
            if room > 0:
                kept.append(piece[:room])
                have += min(room, len(piece))
            dropped += max(len(piece) - max(room, 0), 0)
        return b"".join(kept), dropped, "complete"


def _field_line(data: bytes, opening: bytes | None = None) -> bool:
    """Whether `data` starts with a field line, `NAME=...` or a binary field's `NAME` + LF (only
    the field `opening` when given: the one every entry of the stream starts with)."""
    head = data[:66]
    ends = [index for index in (head.find(b"="), head.find(b"\n")) if index > 0]
    if not ends:
        return False
    name = head[: min(ends)]
    if opening is not None:
        return name == opening
    return _FIELD_NAME.fullmatch(name) is not None


def _entry_boundary(data: bytes, opening: bytes | None, limit: int | None = None) -> int:
    """Where in `data` the first entry after an empty line starts whose first line is a field
    line (the stream's opening field, once known), looking at empty lines before `limit`; -1
    when none does."""
    at = data.find(b"\n\n", 0, limit)
    while at >= 0:
        if _field_line(data[at + 2 :], opening):
            return at + 2
        at = data.find(b"\n\n", at + 1, limit)
    return -1


class ExportReader:
    """Entries of an export stream as Records; bad entries are skipped and counted.

    A binary field's length can be corrupt (a flipped bit claims 100 MB, or a few bytes too
    many or too few): swallowing what it claims would lose the entries after it, or cut a value
    short and read the rest as fields. So a value is believed only when it is followed by its
    LF and then by a field line or the empty line that ends the entry; its bytes are never
    searched, so a MESSAGE that quotes export text (`\n\n__CURSOR=...`) stays one value. A
    length that fails the check is corrupt: the entry is skipped up to the first place where an
    entry can start, an empty line followed by the field the stream's entries start with
    (`__CURSOR` in journalctl's output), and the bytes skipped are counted, as
    systemd-journal-remote says "N bytes lost". Lengths over LOOKAHEAD are checked on their
    first LOOKAHEAD bytes only, so that memory stays bounded: such a value (a core dump) is
    believed unless an entry starts inside that much of it. A line that is not a field is
    skipped up to the next empty line that is followed by a field line."""

    def __init__(self, source: str = "-", problems: ReadProblems | None = None) -> None:
        self.source = source
        self.problems = problems if problems is not None else ReadProblems()
        self.known: set[bytes] = set()
        self.opening: bytes | None = None  # learnt from the first entry: the field entries start with

    def where(self, line: int) -> str:
        return f"line {line}" if self.source == "-" else f"{self.source}:{line}"

    def read(self, stream: BinaryIO) -> Iterator[Record]:
        data = _Stream(stream)
        first = True
        while True:
            entry: Record | _Skip | None = self._fast(data)
            if entry is None:
                entry = self._entry(data)
                if entry is None:
                    return
            if isinstance(entry, Record):
                if first and entry.fields:
                    self._learn(entry.fields)
                first = False
                yield entry

    def _learn(self, fields: Mapping[str, str]) -> None:
        opening = next(iter(fields), None)
        if opening is not None and opening.startswith("__"):
            self.opening = opening.encode("ascii")

    def _fast(self, data: _Stream) -> Record | _Skip | None:
        """The common entry, all `KEY=value` lines and already in the buffer, parsed in one go;
        None when the entry needs the careful path (binary fields, CRs, a buffer refill)."""
        buffer, start = data.buffer, data.position
        end = buffer.find(b"\n\n", start, start + FAST_MAX)
        if end <= start:
            return None
        fields: dict[str, str] = {}
        message: bytes | None = None
        message_index = 0
        lines = buffer[start:end].split(b"\n")
        for index, line in enumerate(lines):
            name, equals, value = line.partition(b"=")
            if not equals or not self._valid(name) or value[-1:] == b"\r":
                return None
            if name == b"MESSAGE":
                message, message_index = value, index
            elif len(fields) < MAX_FIELDS:
                fields[name.decode("ascii")] = (value if len(value) <= FIELD_CAP else value[:FIELD_CAP]).decode("utf-8", "replace")
        first = data.line
        data.position = end + 2
        data.offset += end + 2 - start
        data.line += len(lines) + 1
        if message is None:
            return self._bad(first, "entry has no MESSAGE field", end + 2 - start)
        text, cut = cap_message(message)
        if cut:
            self.problems.note("truncated", self.where(first + message_index))
        return entry_record(fields, text, first + message_index, self.source)

    def _valid(self, name: bytes) -> bool:
        if name in self.known:
            return True
        if _FIELD_NAME.fullmatch(name) is None:
            return False
        if len(self.known) < _KNOWN_CAP:
            self.known.add(name)
        return True

    def _entry(self, data: _Stream) -> Record | _Skip | None:
        """One entry: a Record, _SKIPPED (bad, counted), or None at the end of the stream.

        Once something in the entry is wrong (`broken` says what), the rest of it is read only
        to find where it ends: the next empty line that is followed by a field line."""
        fields: dict[str, str] = {}
        message: str | None = None
        message_line = start = data.line
        offset = data.offset
        message_lines = 1
        broken: str | None = None
        cut_short = "entry cut short by the end of the input"
        opening = self.opening + b"=" if self.opening is not None else None
        while True:
            line_number = data.line
            if opening is not None and (fields or message is not None) and data.ahead(len(opening)) == opening:
                # The next entry begins with no empty line before it: a length in this entry
                # took the empty line into its value. This entry is lost; the next one is not.
                why = "entry does not end with an empty line before the next one (a binary length is wrong)"
                return self._bad(start, broken or why, data.offset - offset)
            got = data.readline(MESSAGE_CAP + 65)  # NAME= (at most 64 + 1) and a capped value
            if got is None:
                if broken is not None:
                    return self._bad(start, broken, data.offset - offset)
                return self._finish(fields, message, start, message_line, message_lines, data.offset - offset)
            raw, dropped, ended = got
            if not ended:
                return self._bad(start, broken or cut_short, data.offset - offset)
            if not raw or raw == b"\r":
                if not fields and message is None and broken is None:
                    start, offset = data.line, data.offset  # blank lines between entries
                    continue
                if broken is None:
                    return self._finish(fields, message, start, message_line, message_lines, data.offset - offset)
                following = data.ahead(66)
                if not following or _field_line(following):
                    return self._bad(start, broken, data.offset - offset)
                continue
            name, equals, value = raw.partition(b"=")
            if not self._valid(name):
                broken = broken or "not a journal field"
                continue
            if equals:
                if value.endswith(b"\r"):  # CRLF: journalctl writes a CR inside a value as binary
                    value = value[:-1]
                if name == b"MESSAGE":
                    message, cut = cap_message(value, dropped)
                    message_line, message_lines = line_number, 1
                    if cut:
                        self.problems.note("truncated", self.where(line_number))
                elif len(fields) < MAX_FIELDS:
                    fields[name.decode("ascii")] = value[:FIELD_CAP].decode("utf-8", "replace")
                continue
            label = name.decode("ascii")
            size_bytes, _, how = data.read(8, 8)
            if how != "complete":
                return self._bad(start, broken or cut_short, data.offset - offset)
            size = int.from_bytes(size_bytes, "little")
            if size > DATA_MAX:
                broken = broken or f"field {label} claims {size:,} bytes"
                continue
            value_line = data.line
            got_value = self._value(data, size, MESSAGE_CAP if name == b"MESSAGE" else FIELD_CAP)
            if isinstance(got_value, str):
                if got_value == "boundary":
                    why = f"field {label} claims {size:,} bytes, but the next entry starts sooner"
                    return self._bad(start, broken or why, data.offset - offset)
                if got_value == "eof":
                    why = cut_short if size < CHUNK else f"field {label} claims {size:,} bytes, more than the input holds"
                    return self._bad(start, broken or why, data.offset - offset)
                broken = broken or f"field {label} is longer than its length says"
                continue
            value, dropped = got_value
            if name == b"MESSAGE":
                message, cut = cap_message(value, dropped)
                message_line, message_lines = value_line, message.count("\n") + 1
                if cut:
                    self.problems.note("truncated", self.where(value_line))
            elif len(fields) < MAX_FIELDS:
                fields[label] = value.decode("utf-8", "replace")

    def _value(self, data: _Stream, size: int, cap: int) -> tuple[bytes, int] | str:
        """A binary value of `size` bytes and its LF: (kept, dropped) when the length is right,
        else where the stream was left: "boundary" (at the start of the next entry), "eof", or
        "corrupt" (right after the claimed length, with no entry start found before it)."""
        span = min(size, LOOKAHEAD)
        window = data.ahead(span + 1 + 66)  # the value, its LF, and the line after it
        if size <= LOOKAHEAD and window[size : size + 1] == b"\n" and _after_value(window[size + 1 :]):
            value, dropped, _ = data.read(size, cap)
            data.consume(1)
            return value, dropped
        # Past a long value's first LOOKAHEAD bytes, the entry's own next fields are no sign.
        found = _entry_boundary(window, self.opening, None if size <= LOOKAHEAD else span)
        if found >= 0:
            data.consume(found)
            return "boundary"
        if size <= LOOKAHEAD:
            if len(window) <= size:
                data.consume(len(window))
                return "eof"
            data.consume(size)
            return "corrupt"
        # Longer than can be looked at first: read it through, then check what follows.
        value, dropped, how = data.read(size, cap)
        if how == "eof":
            return "eof"
        following = data.ahead(1 + 66)
        if following[:1] != b"\n" or not _after_value(following[1:]):
            return "corrupt"
        data.consume(1)
        return value, dropped

    def _finish(self, fields: dict[str, str], message: str | None, start: int, line: int, lines: int,
                size: int) -> Record | _Skip | None:
        if message is None:
            if not fields:
                return None
            return self._bad(start, "entry has no MESSAGE field", size)
        return entry_record(fields, message, line, self.source, lines)

    def _bad(self, start: int, why: str, size: int = 0) -> _Skip:
        self.problems.skip(self.where(start), why, size)
        return _SKIPPED


def _after_value(data: bytes) -> bool:
    """Whether what follows a binary value's LF is what can follow it: the end of the stream,
    the empty line that ends the entry, or the entry's next field."""
    return not data or data[:1] == b"\n" or data[:2] == b"\r\n" or _field_line(data)


class _Skip:
    """What _entry returns for a bad entry, skipped and counted."""


_SKIPPED = _Skip()


def read_export(stream: BinaryIO, source: str = "-", problems: ReadProblems | None = None,
                skipping: object = None) -> Iterator[Record]:
    # Structured entries are parsed whole: `skipping` is for the text reader.
    return ExportReader(source, problems).read(stream)
