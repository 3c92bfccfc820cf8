"""journalctl's `verbose` format: a header line per entry, then its fields indented.

    Mon 2026-05-25 20:11:03.000000 UTC [s=...;i=2;b=...;m=0;t=652a9fa53a3c0;x=...]
        _PID=42
        MESSAGE=line1
                line2

A value's continuation lines are indented to its column (4 + len(NAME) + 1), which a field
line (exactly 4 spaces, then NAME=) never is, so the two cannot be confused. The time comes
from _SOURCE_REALTIME_TIMESTAMP when shown, else from the cursor's `t=` (the entry's realtime in
hex, exact whatever the time zone the header was printed in). Without `--all` journalctl shows
binary values as `[NB blob data]`: counted in ReadProblems.
"""

from __future__ import annotations

from typing import BinaryIO, Iterable, Iterator

from logsift.lazy import compile_lazily
from logsift.read.export import FIELD_CAP, MAX_FIELDS, MESSAGE_CAP, entry_record
from logsift.read.lines import TRUNCATED, iter_lines
from logsift.read.text import TextReader
from logsift.records import ReadProblems, Record

HEADER = compile_lazily(
    r"^(?:[A-Z][a-z]{2} )?(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)(?: (?P<zone>\S+))? \[(?P<cursor>[^\]\s]+)\]$"
)
_NAME = compile_lazily(r"[A-Z_][A-Z0-9_]{0,63}")
_INDENTS: dict[str, str] = {}  # field name -> the indentation of its continuation lines
_CURSOR_TIME = compile_lazily(r"(?:^|;)t=([0-9a-f]+)(?:;|$)")
_BLOB = compile_lazily(r"^\[[\d.]+[KMG]?B? blob data\]$")


class VerboseReader:
    """Entries of `journalctl -o verbose` output as Records."""

    def __init__(self, source: str = "-", problems: ReadProblems | None = None) -> None:
        self.source = source
        self.problems = problems if problems is not None else ReadProblems()
        self.text = TextReader(source)

    def where(self, line: int) -> str:
        return f"line {line}" if self.source == "-" else f"{self.source}:{line}"

    def read(self, lines: Iterable[str]) -> Iterator[Record]:
        entry: _Entry | None = None
        for number, line in enumerate(lines, 1):
            if entry is not None and (line.startswith("    ") or not line):
                entry.add(line, number)  # an empty line: a blank line of a value, trailing spaces eaten
                continue
            header = HEADER.match(line)
            if header is not None:
                if entry is not None:
                    yield from self._finish(entry)
                entry = _Entry(header.group("cursor"), number)
                continue
            if entry is not None:
                yield from self._finish(entry)
                entry = None
            if line.strip() and not line.startswith("-- "):
                yield from self.text.read([line], number)  # a stray text line in a paste
        if entry is not None:
            yield from self._finish(entry)

    def _finish(self, entry: _Entry) -> Iterator[Record]:
        fields = entry.fields
        message = fields.pop("MESSAGE", None)
        if message is None:
            self.problems.skip(self.where(entry.start), "no MESSAGE field")
            return
        if entry.blobs:
            self.problems.note("blob", self.where(entry.start))
        if entry.dropped:
            message += TRUNCATED.format(entry.dropped)
        if entry.cut or entry.dropped:
            self.problems.note("truncated", self.where(entry.start))
        fields["__CURSOR"] = entry.cursor
        if "__REALTIME_TIMESTAMP" not in fields:
            stamp = _CURSOR_TIME.search(entry.cursor)
            if stamp is not None:
                fields["__REALTIME_TIMESTAMP"] = str(int(stamp.group(1), 16))
        yield entry_record(fields, message, entry.message_line, self.source, message.count("\n") + 1)


class _Entry:
    """Fields of one verbose entry as they are read, each value bounded."""

    __slots__ = ("cursor", "start", "fields", "name", "indent", "message_line", "blobs", "cut", "size", "dropped")

    def __init__(self, cursor: str, start: int) -> None:
        self.cursor = cursor
        self.start = start
        self.fields: dict[str, str] = {}
        self.name = ""
        self.indent = ""
        self.message_line = start
        self.blobs = 0
        self.cut = False
        self.size = 0
        self.dropped = 0  # characters of MESSAGE's continuation lines past the cap

    def add(self, line: str, number: int) -> None:
        if self.name and line.startswith(self.indent):
            self._extend(line[len(self.indent) :])
            return
        equals = line.find("=", 5)
        name = line[4:equals] if equals > 0 and line[4:5] != " " else ""
        if not name or (name not in _INDENTS and not _NAME.fullmatch(name)):
            if self.name and not line.strip():
                self._extend("")
            return
        value = line[equals + 1 :]
        indent = _INDENTS.get(name)
        if indent is None:
            indent = " " * (len(name) + 5)
            if len(_INDENTS) < 4096:
                _INDENTS[name] = indent
        self.name, self.indent, self.size = name, indent, len(value)
        if value[:1] == "[" and value.endswith(" blob data]") and _BLOB.match(value):
            self.blobs += 1
        if name in self.fields or len(self.fields) >= MAX_FIELDS:
            self.name = ""  # a repeated field: keep the first value, as the other readers do
            return
        if name == "MESSAGE":
            self.message_line = number
        cap = MESSAGE_CAP if name == "MESSAGE" else FIELD_CAP
        if len(value) > cap:
            # Only a cut MESSAGE is worth a warning: other fields are kept for reference only.
            value = value[:cap] + TRUNCATED.format(len(value) - cap)
            self.cut = self.cut or name == "MESSAGE"
        self.fields[name] = value

    def _extend(self, text: str) -> None:
        cap = MESSAGE_CAP if self.name == "MESSAGE" else FIELD_CAP
        if self.size >= cap:
            if self.name == "MESSAGE":
                self.dropped += len(text) + 1
            return
        self.size += len(text) + 1
        self.fields[self.name] += "\n" + text


def read_verbose(stream: BinaryIO, source: str = "-", problems: ReadProblems | None = None,
                 skipping: object = None) -> Iterator[Record]:
    # Structured entries are parsed whole: `skipping` is for the text reader.
    return VerboseReader(source, problems).read(iter_lines(stream))
