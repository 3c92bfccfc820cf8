"""journalctl's JSON formats: `json` (one object a line), `json-seq` (RFC 7464: each record
after an RS byte), `json-sse` (`data: ` lines) and `json-pretty` (one object over many lines).

What journalctl writes: every value is a string; a value with control characters or invalid
UTF-8 is an array of byte values; a field that occurs several times is an array of those;
a value over 4096 bytes is `null` unless journalctl ran with `--all` (counted in ReadProblems,
so that the CLI can say to rerun with --all).

Lines are split from bytes with a cap: a record over the cap is salvaged (the complete fields
and the beginning of the cut one), never held whole. A line that is not JSON at all is read as
text (a paste that mixes formats); a line that looks like JSON and does not parse, or has no
MESSAGE, is skipped and counted.
"""

from __future__ import annotations

import json
import re
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from logsift.lazy import compile_lazily
from logsift.read.export import FIELD_CAP, MAX_FIELDS, MESSAGE_CAP, cap_message, entry_record
from logsift.read.lines import TRUNCATED, raw_lines
from logsift.read.text import TextReader
from logsift.records import ReadProblems, Record
from logsift.sanitize import scrub

try:  # orjson parses journal JSON about 2x faster; optional (the `fast` extra)
    import orjson  # type: ignore[import-not-found, unused-ignore]

    _loads: Callable[[bytes], Any] = orjson.loads
    _DECODE_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError, ValueError, RecursionError)
    _SURROGATES = False  # orjson refuses lone surrogates: invalid JSON, skipped and counted
except ImportError:  # pragma: no cover - depends on the installed extras
    _loads = json.loads
    _DECODE_ERRORS = (ValueError, RecursionError)  # 1000 nested arrays exhaust json's recursion
    _SURROGATES = True

LINE_CAP = MESSAGE_CAP + 64 * 1024  # a record holds MESSAGE plus its other fields
TEXT_BATCH = 256  # non-JSON lines handed to the text reader at a time
NULL_MESSAGE = "[logsift: MESSAGE was null: journalctl drops values over 4096 bytes unless given --all]"
# Deletes what binary noise is made of: C0 controls (but tab, CR, ESC) and U+FFFD from bad UTF-8.
_NOISE = {code: None for code in [*range(0, 9), *range(10, 13), *range(14, 27), *range(28, 32), 0xFFFD]}
# Unrolled and possessive: a 1 MiB string costs no backtracking stack (re keeps a state per
# repetition of an alternation, over 100 MiB for one such string).
_BODY = r'[^"\\]*+(?:\\.[^"\\]*+)*+'
_STRING = r'"(' + _BODY + r')"'
_PAIR = compile_lazily(r'"([A-Za-z0-9_]+)"\s*:\s*(' + _STRING + r'|\[[^\[\]]*\]|\[(?:\[[^\[\]]*\],?\s*)*\]|null)')
_OPEN_STRING = compile_lazily(r'"([A-Za-z0-9_]+)"\s*:\s*"(' + _BODY + r'\\?)$')
_OPEN_BYTES = compile_lazily(r'"([A-Za-z0-9_]+)"\s*:\s*\[([\d,\s]*)$')


class JsonReader:
    """Journal JSON records (and any text lines between them) as Records."""

    def __init__(self, source: str = "-", problems: ReadProblems | None = None) -> None:
        self.source = source
        self.problems = problems if problems is not None else ReadProblems()
        self.text = TextReader(source)
        self.pending: list[str] = []  # text lines waiting for the text reader
        self.pending_start = 0

    def where(self, line: int) -> str:
        return f"line {line}" if self.source == "-" else f"{self.source}:{line}"

    # -- one object per line: json, json-seq, json-sse ----------------------------------------

    def read_lines(self, lines: Iterable[tuple[bytes, int]]) -> Iterator[Record]:
        for number, (raw, dropped) in enumerate(lines, 1):
            yield from self._line(number, raw, dropped)
        yield from self._flush()

    def _line(self, number: int, raw: bytes, dropped: int) -> Iterator[Record]:
        body = raw.strip(b" \t\r\x1e")
        if body.startswith(b"data: "):
            body = body[6:].lstrip()
        if body[:1] == b"{":
            yield from self._flush()
            record = self._object(body, dropped, number)
            if record is not None:
                yield record
            return
        if not body and not dropped:
            return
        text = raw.decode("utf-8", "replace")
        if garbage(text):
            self.problems.skip(self.where(number), "binary data, not a log line", len(raw) + 1)
            return
        if not self.pending:
            self.pending_start = number
        self.pending.append(text + TRUNCATED.format(dropped) if dropped else text)
        if len(self.pending) >= TEXT_BATCH:
            yield from self._flush()

    def _flush(self) -> Iterator[Record]:
        if self.pending:
            lines, self.pending = self.pending, []
            yield from self.text.read(lines, self.pending_start)

    def _object(self, body: bytes, dropped: int, number: int) -> Record | None:
        cut: str | None = None
        if dropped:
            self.problems.note("truncated", self.where(number))
            fields, cut = salvage(body.decode("utf-8", "replace"))
            fields = _scrubbed(fields)
        else:
            try:
                fields = _loads(body)
            except _DECODE_ERRORS:
                fields = _lenient(body)
                if fields is None:
                    self.problems.skip(self.where(number), "invalid JSON", len(body))
                    return None
            if not isinstance(fields, dict):
                self.problems.skip(self.where(number), "JSON that is not an object", len(body))
                return None
            if _SURROGATES:
                fields = _scrubbed(fields)
        if "MESSAGE" not in fields:
            self.problems.skip(self.where(number), "no MESSAGE field", len(body))
            return None
        return self._record(fields, number, dropped if cut == "MESSAGE" else 0)

    def _record(self, fields: dict[str, Any], number: int, dropped: int) -> Record:
        value = fields.pop("MESSAGE")
        # journalctl's values are strings: then the parsed dict is kept as it is (no copy).
        kept: dict[str, str] = {name: text for name, text in fields.items() if type(text) is str}
        nulls = 0
        if len(kept) != len(fields):
            nulls = sum(1 for text in fields.values() if text is None)
            kept.update((name, _text(other)) for name, other in fields.items() if other is not None and type(other) is not str)
        if len(kept) > MAX_FIELDS or (kept and max(map(len, kept.values())) > FIELD_CAP):
            kept = {name: text[:FIELD_CAP] for name, text in list(kept.items())[:MAX_FIELDS]}
        if type(value) is str and len(value) <= MESSAGE_CAP and not dropped:
            message = value
        elif value is None:
            nulls += 1
            message = NULL_MESSAGE
        else:
            message, cut = cap_message(_bytes(value), dropped)
            if cut and not dropped:
                self.problems.note("truncated", self.where(number))
        for _ in range(nulls):
            self.problems.note("null", self.where(number))
        return entry_record(kept, message, number, self.source)

    # -- json-pretty: one object over many lines ------------------------------------------------

    def read_pretty(self, lines: Iterable[tuple[bytes, int]]) -> Iterator[Record]:
        body: list[bytes] = []
        size = dropped = start = 0
        for number, (raw, cut) in enumerate(lines, 1):
            line = raw.rstrip(b"\r")
            if not body:
                if line.strip() == b"{":
                    yield from self._flush()
                    body, size, dropped, start = [line], len(line), cut, number
                else:  # a compact record or a text line between objects
                    yield from self._line(number, raw, cut)
                continue
            if size + len(line) <= LINE_CAP:
                body.append(line)
                size += len(line) + 1
            else:
                dropped += len(line) + 1
            dropped += cut
            if line == b"}":
                record = self._object(b"\n".join(body), dropped, start)
                if record is not None:
                    yield record
                body = []
        yield from self._flush()
        if body:
            self.problems.skip(self.where(start), "JSON object cut short by the end of the input")


def _first(value: Any) -> Any:
    """A field given more than once is a list of its values: journalctl shows the first. Nested
    lists (not journalctl's, but JSON allows 1000 levels) are unwrapped without recursion."""
    while isinstance(value, list) and value and not all(type(item) is int for item in value):
        value = value[0]
    return value


def _text(value: Any) -> str:
    """A JSON field value as text: byte arrays decoded; repeated fields: the first value."""
    value = _first(value)
    if isinstance(value, list):
        return _bytes(value).decode("utf-8", "replace") if value else ""
    if isinstance(value, dict):
        return "{...}"  # not a journal value: keep the record, not a copy of the structure
    return scrub(str(value))


def _bytes(value: Any) -> bytes:
    value = _first(value)
    if type(value) is str:
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, list):
        try:
            return bytes(item for item in value if type(item) is int)
        except ValueError:  # a number over 255: not a byte array
            return b"[" + b",".join(str(item).encode() for item in value[:64]) + b"]"
    if isinstance(value, dict):
        return b"{...}"
    return str(value).encode()


def _lenient(body: bytes) -> Any:
    """What the standard library makes of a line orjson refused: it takes lone surrogate
    escapes (`\\ud800`), which are then scrubbed; None when it is not JSON either."""
    if not _SURROGATES and b"\\u" in body:
        try:
            return _scrubbed(json.loads(body.decode("utf-8", "replace")))
        except (ValueError, RecursionError):
            return None
    return None


def _scrubbed(fields: Any) -> Any:
    """Parsed fields without lone surrogates (`"\\ud800"` parses; it cannot be printed)."""
    if not isinstance(fields, dict):
        return fields
    return {name: scrub(value) if type(value) is str else value for name, value in fields.items()}


def salvage(text: str) -> tuple[dict[str, Any], str | None]:
    """The fields of a JSON object cut after `LINE_CAP` bytes: the complete ones, and the
    beginning of the value that the cut went through (journalctl orders keys at random)."""
    fields: dict[str, Any] = {}
    end = 0
    for match in _PAIR.finditer(text):
        try:
            fields[match.group(1)] = json.loads(match.group(2))
        except ValueError:
            continue
        end = match.end()
    tail = text[end:]
    open_string = _OPEN_STRING.search(tail)
    open_bytes = _OPEN_BYTES.search(tail) if open_string is None else None
    cut: tuple[str, Any] | None = None
    if open_string is not None:
        partial = _drop_partial_escape(open_string.group(2))
        try:
            cut = (open_string.group(1), json.loads('"' + partial + '"'))
        except ValueError:
            cut = (open_string.group(1), open_string.group(2))
    elif open_bytes is not None:
        numbers = [int(part) for part in open_bytes.group(2).replace(" ", "").split(",") if part.isdigit()]
        cut = (open_bytes.group(1), [number for number in numbers if number < 256])
    if cut is None:
        return fields, None
    fields[cut[0]] = cut[1]
    return fields, cut[0]


def _drop_partial_escape(text: str) -> str:
    """The cut went through an escape (`\\`, `\\u00`): drop what of it was read."""
    escape = re.search(r"\\+(?:u[0-9a-fA-F]{0,3})?$", text)
    if escape is None:
        return text
    slashes = len(escape.group(0)) - len(escape.group(0).lstrip("\\"))
    # Pairs of backslashes are complete escapes; an odd one out starts the cut escape.
    return text[: escape.start() + slashes - slashes % 2] if slashes % 2 else text


def garbage(text: str) -> bool:
    """Binary noise rather than a log line: many control characters or undecodable bytes."""
    head = text[:4096]
    bad = len(head) - len(head.translate(_NOISE))
    return bad > 2 and bad > len(head) // 10


def read_json(stream: BinaryIO, source: str = "-", problems: ReadProblems | None = None,
              skipping: object = None) -> Iterator[Record]:
    # Structured entries are parsed whole: `skipping` is for the text reader.
    return JsonReader(source, problems).read_lines(raw_lines(stream, LINE_CAP))


def read_json_pretty(stream: BinaryIO, source: str = "-", problems: ReadProblems | None = None,
                     skipping: object = None) -> Iterator[Record]:
    # Structured entries are parsed whole: `skipping` is for the text reader.
    return JsonReader(source, problems).read_pretty(raw_lines(stream, LINE_CAP))
