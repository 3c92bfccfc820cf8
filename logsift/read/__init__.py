"""Readers: one module per input format, each turning bytes into Records.

`open_input` and `read` are the entry points; `REGISTRY` maps a format name (as given to
`--input-format`) to the function that reads it. Adding a format is one module plus one line
in `REGISTRY` (and one in `detect` if it can be recognised from its first bytes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Protocol, cast

from logsift.exceptions import InputError
from logsift.lazy import compile_lazily
from logsift.read.export_skim import read_export
from logsift.read.json import garbage, read_json, read_json_pretty
from logsift.read.lines import entry_blocks, iter_line_batches
from logsift.read.text import Skipping, TextReader
from logsift.read.verbose import HEADER as VERBOSE_HEADER
from logsift.read.verbose import read_verbose
from logsift.records import ReadProblems, Record
from logsift.sanitize import strip_ansi


class Reader(Protocol):
    """Bytes in, Records out; records it had to skip or cut are counted in `problems`. A reader
    may leave lines that `skipping` says cannot matter unparsed (the text reader does)."""

    def __call__(self, stream: BinaryIO, source: str, problems: ReadProblems | None = None, /,
                 skipping: Skipping | None = None) -> Iterator[Record]: ...


JOURNAL_MAGIC = b"LPKSHHRH"
SNIFF = 64 * 1024


def read_text(stream: BinaryIO, source: str, problems: ReadProblems | None = None,
              skipping: Skipping | None = None) -> Iterator[Record]:
    denoised = cast(BinaryIO, _Denoised(stream, source, problems))
    if skipping is not None:
        return TextReader(source).read_blocks(entry_blocks(denoised, strip_ansi), skipping)
    return TextReader(source).read_batches(iter_line_batches(denoised))


class _Denoised:
    """A byte stream whose lines of binary noise (a NUL-filled block after a crash) are emptied,
    their LF kept so that the numbers of the lines after them stay right, and counted as bad
    records. A chunk without a NUL byte passes untouched: the cost is one scan per chunk."""

    def __init__(self, stream: BinaryIO, source: str, problems: ReadProblems | None) -> None:
        self.stream = stream
        self.source = source
        self.problems = problems
        self.line = 1  # the line number of the next byte read

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        if self.problems is not None and b"\0" in data:
            pieces = data.split(b"\n")
            for index, piece in enumerate(pieces):
                if b"\0" in piece and garbage(piece.decode("utf-8", "replace")):
                    line = self.line + index
                    where = f"line {line}" if self.source == "-" else f"{self.source}:{line}"
                    self.problems.skip(where, "binary data, not a log line", len(piece) + 1)
                    pieces[index] = b""
            data = b"\n".join(pieces)
        self.line += len(data) - len(data.replace(b"\n", b""))  # faster than bytes.count
        return data


REGISTRY: dict[str, Reader] = {
    "text": read_text,
    "json": read_json,
    "json-seq": read_json,
    "json-sse": read_json,
    "json-pretty": read_json_pretty,
    "export": read_export,
    "verbose": read_verbose,
}
# journalctl -o NAME for every text variant: one reader, the prefix is recognised per line.
TEXT_FORMATS = ("short", "short-iso", "short-iso-precise", "short-precise", "short-full",
                "short-unix", "short-monotonic", "with-unit", "cat", "plain")
for _name in TEXT_FORMATS:
    REGISTRY[_name] = read_text


def detect(head: bytes) -> str:
    """Name the format of an input from its first bytes; "text" when nothing else fits."""
    return detection(head).format


BOM = b"\xef\xbb\xbf"
NOISE_LINES = 16  # leading lines that detection looks past (a stray line, a marker, garbage)


@dataclass(frozen=True, slots=True)
class Detection:
    """What detection made of an input's first bytes: the format, and the leading lines it had
    to look past to see it (1-based numbers of lines that are neither blank nor a journal
    marker: the readers skip and count them)."""

    format: str
    noise: tuple[int, ...] = ()
    skipped: int = 0  # leading lines (blank, markers, noise) blanked before the reader sees them
    bom: bool = False


def detection(head: bytes) -> Detection:
    if head.startswith(JOURNAL_MAGIC):
        return Detection("journal-file")
    bom = head.startswith(BOM)
    sample = head[len(BOM):SNIFF] if bom else head[:SNIFF]
    found = _structured(sample.lstrip(b"\r\n"))
    if found is not None:
        return Detection(found, bom=bom)
    # Look past leading lines that fit no format: a line of garbage or NULs, a broken JSON line,
    # spaces, journalctl's own "-- Journal begins at ... --", before an export or JSON stream.
    lines = sample.split(b"\n", NOISE_LINES + 1)
    noise: list[int] = []
    for index in range(min(NOISE_LINES, len(lines) - 1)):
        line = lines[index]
        if line.strip() and not line.startswith(b"-- "):
            noise.append(index + 1)
        rest = b"\n".join(lines[index + 1:]).lstrip(b"\r\n")
        found = _structured(rest)
        if found is not None and _journal_stream(found, rest):
            return Detection(found, tuple(noise), index + 1, bom)
    for name, test in DETECTORS:
        if name == "binary" and test(sample):
            return Detection("binary")
    return Detection("text", bom=bom)


def _journal_stream(found: str, sample: bytes) -> bool:
    """Whether what follows leading noise is the journal's own output, not an application's
    JSON that a text log prints (a pretty-printed config after "Running with config:"): its
    first record names one of the journal's fields."""
    if found in ("export", "verbose"):
        return True  # their detectors already ask for journal fields or journalctl's header
    first = sample[:SNIFF].split(b"\n}", 1)[0] if found == "json-pretty" else sample.split(b"\n", 1)[0]
    return any(key in first for key in _JOURNAL_KEYS)


def _structured(sample: bytes) -> str | None:
    for name, test in DETECTORS:
        if name != "binary" and test(sample):
            return name
    return None


def _binary(sample: bytes) -> bool:
    # Most of it noise, by bytes and by lines: a log with a block of garbage in it (a NUL-filled
    # page after a crash) is still a log; its garbage lines are skipped and counted.
    if not sample or not garbage(sample.decode("utf-8", "replace")):
        return False
    lines = [line for line in sample.split(b"\n", 400)[:400] if line.strip()]
    noisy = sum(1 for line in lines if garbage(line.decode("utf-8", "replace")))
    return noisy * 2 > len(lines)


def _lines(sample: bytes, count: int = 40) -> list[bytes]:
    """The first complete, non-empty lines of a sample (the last one may be cut)."""
    lines = sample.split(b"\n", count)[:count]
    if len(lines) > 1 and not sample.endswith(b"\n"):
        lines = lines[:-1]
    return [line for line in lines if line.strip() and not line.startswith(b"-- ")]


_EXPORT_FIELD = compile_lazily(rb"^[A-Z_][A-Z0-9_]*(?:=|$)")
_JOURNAL_KEYS = (b'"MESSAGE"', b'"__CURSOR"', b'"__REALTIME_TIMESTAMP"')


def _export(sample: bytes) -> bool:
    # Field lines up to the first empty line, naming at least one of the journal's own fields.
    entry = sample.split(b"\n\n", 1)[0]
    first = entry.split(b"\n", 1)[0]
    if not _EXPORT_FIELD.match(first):
        return False
    return any(key in entry for key in (b"__CURSOR=", b"__REALTIME_TIMESTAMP=", b"\nMESSAGE=", b"\nMESSAGE\n"))


def _json_seq(sample: bytes) -> bool:
    return sample.lstrip()[:2] == b"\x1e{"


def _json_sse(sample: bytes) -> bool:
    return sample.startswith(b"data: {")


def _json_pretty(sample: bytes) -> bool:
    lines = _lines(sample, 3)
    return len(lines) >= 2 and lines[0].strip() == b"{" and lines[1].lstrip().startswith(b'"')


def _json(sample: bytes) -> bool:
    # Journal records (not an application's JSON logs) outnumber the other lines: a paste that
    # mixes them is read by the JSON reader, which hands the text lines to the text reader.
    lines = _lines(sample)
    records = sum(1 for line in lines if line.lstrip()[:1] == b"{" and any(key in line for key in _JOURNAL_KEYS))
    return records > 0 and records * 2 >= len(lines)


def _verbose(sample: bytes) -> bool:
    lines = _lines(sample, 3)
    return (len(lines) >= 2 and lines[1].startswith(b"    ")
            and VERBOSE_HEADER.match(lines[0].decode("utf-8", "replace").rstrip("\r")) is not None)


DETECTORS: list[tuple[str, Callable[[bytes], bool]]] = [
    ("export", _export),
    ("json-seq", _json_seq),
    ("json-sse", _json_sse),
    ("json-pretty", _json_pretty),
    ("json", _json),
    ("verbose", _verbose),
    ("binary", _binary),
]


class _Peeked:
    """A binary stream with its first bytes read ahead for detection and put back."""

    def __init__(self, stream: BinaryIO, head: bytes) -> None:
        self._stream = stream
        self._head = head

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size < 0:
                data, self._head = self._head + self._stream.read(), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            if len(data) < size:
                data += self._stream.read(size - len(data))
            return data
        return self._stream.read(size)


def read(stream: BinaryIO, source: str = "-", fmt: str = "auto", problems: ReadProblems | None = None,
         skipping: Skipping | None = None) -> Iterator[Record]:
    """Records from one input; `fmt` is a REGISTRY name or "auto". Skipped and cut records are
    counted in `problems` (see logsift.read.sources for reading the journal itself); with
    `skipping`, lines that cannot matter may be left unparsed."""
    head = stream.read(SNIFF)
    if fmt == "auto":
        found = detection(head)
        fmt = found.format
        if fmt == "journal-file":
            raise InputError("this is a native journal file, which cannot be read from a pipe; "
                             "name it: logsift --file PATH", source)
        if fmt == "binary":
            raise InputError(
                "input looks like binary data, not a log (many NUL/control bytes in the first "
                f"{min(len(head), SNIFF)} bytes); give a journalctl text, json or export stream",
                source,
            )
        head = _past_noise(head, found, source, problems)
    if b"\r" in head and b"\n" not in head and fmt not in ("export", "journal-file"):
        # Old Mac (CR-only) line endings: without this the whole input is one line.
        if problems is not None:
            problems.guess(source, "read CR (carriage return) line endings as line breaks")
        stream = cast(BinaryIO, _CarriageReturns(stream))
        head = head.replace(b"\r", b"\n")
    peeked = _Peeked(stream, head)
    reader = REGISTRY.get(fmt)
    if reader is None:
        raise InputError(f"unknown input format {fmt!r}; known: {', '.join(sorted(REGISTRY))}")
    return reader(peeked, source, problems, skipping=skipping)  # type: ignore[arg-type]


PIPE_SIZE = 1 << 20


def _widen_pipe(stream: BinaryIO) -> None:
    """A 1 MiB pipe buffer (F_SETPIPE_SZ) lets `journalctl | logsift` run journalctl ahead
    instead of in lockstep with the 64 KiB default (PERFORMANCE.md: 41% -> 10% over journalctl)."""
    import fcntl
    import stat

    try:
        descriptor = stream.fileno()
        if stat.S_ISFIFO(os.fstat(descriptor).st_mode):
            fcntl.fcntl(descriptor, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
    except (OSError, ValueError, AttributeError):
        pass  # not a pipe, or not allowed (pipe-max-size): only speed is lost


def _past_noise(head: bytes, found: Detection, source: str, problems: ReadProblems | None) -> bytes:
    """The head with the lines detection looked past blanked (their LF kept, so that line
    numbers stay right), each noise line counted as a bad record; the format named as a guess."""
    if found.bom:
        head = head[len(BOM):]
    if not found.skipped:
        return head
    lines = head.split(b"\n", found.skipped)
    if problems is not None:
        for number in found.noise:
            where = f"line {number}" if source == "-" else f"{source}:{number}"
            problems.skip(where, f"not part of the {found.format} stream", len(lines[number - 1]) + 1)
        if found.noise:
            count = len(found.noise)
            problems.guess(source, f"read as {found.format} after {count} leading line{'s' if count > 1 else ''} "
                           f"that {'are' if count > 1 else 'is'} not (give -i {found.format} to say so)")
    return b"\n" * found.skipped + lines[-1]


class _CarriageReturns:
    """A byte stream with CR line endings read as LF."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        return self.stream.read(size).replace(b"\r", b"\n")


def open_input(path: str) -> BinaryIO:
    """Open a log file for reading, with an InputError that says what went wrong."""
    if path == "-":
        import sys

        _widen_pipe(sys.stdin.buffer)
        return sys.stdin.buffer
    target = Path(path)
    try:
        if target.is_dir():
            raise InputError("is a directory; for a journal directory use --directory", path)
        return open(target, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except OSError as error:
        raise InputError(describe_os_error(error), path) from None


def describe_os_error(error: OSError) -> str:
    """What went wrong, in the system's words, without repeating the file name."""
    return (os.strerror(error.errno) if error.errno else None) or error.strerror or type(error).__name__
