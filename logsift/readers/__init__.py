"""Readers: one module per input format, each turning bytes into Records.

`open_input` and `read` are the entry points; `REGISTRY` maps a format name (as given to
`--input-format`) to the function that reads it. Adding a format is one module plus one line
in `REGISTRY` (and one in `detect` if it can be recognised from its first bytes).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from logsift.exceptions import InputError
from logsift.readers.lines import iter_lines
from logsift.readers.text import TextReader
from logsift.records import Record

Reader = Callable[[BinaryIO, str], Iterator[Record]]

JOURNAL_MAGIC = b"LPKSHHRH"
SNIFF = 64 * 1024


def read_text(stream: BinaryIO, source: str) -> Iterator[Record]:
    return TextReader(source).read(iter_lines(stream))


REGISTRY: dict[str, Reader] = {
    "text": read_text,
}
# journalctl -o NAME for every text variant: one reader, the prefix is recognised per line.
TEXT_FORMATS = ("short", "short-iso", "short-iso-precise", "short-precise", "short-full",
                "short-unix", "short-monotonic", "with-unit", "cat", "plain")
for _name in TEXT_FORMATS:
    REGISTRY[_name] = read_text


def detect(head: bytes) -> str:
    """Name the format of an input from its first bytes; "text" when nothing else fits."""
    if head.startswith(JOURNAL_MAGIC):
        return "journal-file"
    sample = head[:SNIFF]
    for name, test in DETECTORS:
        if test(sample):
            return name
    return "text"


def _binary(sample: bytes) -> bool:
    if not sample:
        return False
    # Printable text has almost no NULs or C0 controls; a few (one bad record) are fine.
    bad = sum(sample.count(bytes([c])) for c in range(0, 32) if c not in (9, 10, 12, 13, 27))
    return bad > max(16, len(sample) // 20)


DETECTORS: list[tuple[str, Callable[[bytes], bool]]] = [
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


def read(stream: BinaryIO, source: str = "-", fmt: str = "auto") -> Iterator[Record]:
    """Records from one input; `fmt` is a REGISTRY name or "auto"."""
    head = stream.read(SNIFF)
    peeked = _Peeked(stream, head)
    if fmt == "auto":
        fmt = detect(head)
        if fmt == "journal-file":
            raise InputError("this is a native journal file; read it with --file", source)
        if fmt == "binary":
            raise InputError(
                "input looks like binary data, not a log (many NUL/control bytes in the first "
                f"{min(len(head), SNIFF)} bytes); give a journalctl text, json or export stream",
                source,
            )
    reader = REGISTRY.get(fmt)
    if reader is None:
        raise InputError(f"unknown input format {fmt!r}; known: {', '.join(sorted(REGISTRY))}")
    return reader(peeked, source)  # type: ignore[arg-type]


def open_input(path: str) -> BinaryIO:
    """Open a log file for reading, with an InputError that says what went wrong."""
    if path == "-":
        import sys

        return sys.stdin.buffer
    target = Path(path)
    if not target.exists():
        raise InputError("no such file", path)
    if target.is_dir():
        raise InputError("is a directory; for a journal directory use --directory", path)
    try:
        return open(target, "rb")  # noqa: SIM115 - closed by the caller
    except OSError as error:
        raise InputError(os.strerror(error.errno or 0) or str(error), path) from None
