"""Bounded line splitting for untrusted byte streams.

Reads fixed-size chunks, so memory stays bounded whatever the input: a line longer than
`max_line` is cut there, marked, and the rest of it skipped. Invalid UTF-8 is replaced, not fatal.
"""

from __future__ import annotations

from typing import BinaryIO, Iterator

CHUNK = 1 << 20
MAX_LINE = 1 << 20
TRUNCATED = " [logsift: line truncated, {0} bytes dropped]"


def line_blocks(stream: BinaryIO, max_line: int = MAX_LINE, chunk: int = CHUNK) -> Iterator[tuple[bytes, int]]:
    """The stream cut at line ends, in blocks, with memory bounded by `chunk` + `max_line`.

    Yields (block, dropped). With dropped == 0 the block is one or more whole lines joined by
    LF (a line in it may still be longer than `max_line`: callers cut it). With dropped > 0 the
    block is the first `max_line` bytes of one line whose other `dropped` bytes were skipped.
    """
    carry = b""
    dropped = 0  # > 0 while skipping the rest of an overlong line
    while True:
        data = stream.read(chunk)
        if not data:
            break
        if dropped:
            cut = data.find(b"\n")
            if cut < 0:
                dropped += len(data)
                continue
            yield carry, dropped + cut
            carry, dropped, data = b"", 0, data[cut + 1 :]
        data = carry + data if carry else data
        end = data.rfind(b"\n")
        if end < 0:
            carry = data
        else:
            carry = data[end + 1 :]
            yield data[:end], 0
        if len(carry) > max_line:
            dropped = len(carry) - max_line
            carry = carry[:max_line]
    if dropped or carry:
        yield carry, dropped


def iter_line_batches(stream: BinaryIO, max_line: int = MAX_LINE, chunk: int = CHUNK) -> Iterator[list[str]]:
    """Decoded lines without their line ending (LF or CRLF), a chunk's worth at a time: the
    work is done per block in C (decode, CRLF, split), not per line in Python."""
    for block, dropped in line_blocks(stream, max_line, chunk):
        if dropped:
            yield [_decode(block) + TRUNCATED.format(dropped)]
            continue
        text = block.decode("utf-8", "replace")
        if "\r" in text:
            text = text.replace("\r\n", "\n")
            if text.endswith("\r"):
                text = text[:-1]
        lines = text.split("\n")
        if len(block) > max_line and max(map(len, lines)) > max_line:
            lines = [
                line[:max_line] + TRUNCATED.format(len(line) - max_line) if len(line) > max_line else line
                for line in lines
            ]
        yield lines


def iter_lines(stream: BinaryIO, max_line: int = MAX_LINE, chunk: int = CHUNK) -> Iterator[str]:
    """Yield decoded lines without their line ending (LF or CRLF)."""
    for batch in iter_line_batches(stream, max_line, chunk):
        yield from batch


def raw_lines(stream: BinaryIO, max_line: int = MAX_LINE, chunk: int = CHUNK) -> Iterator[tuple[bytes, int]]:
    """(line without LF, bytes dropped past `max_line`) for each line, undecoded."""
    for block, dropped in line_blocks(stream, max_line, chunk):
        if dropped:
            yield block, dropped
            continue
        for line in block.split(b"\n"):
            if len(line) > max_line:
                yield line[:max_line], len(line) - max_line
            else:
                yield line, 0


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text[:-1] if text.endswith("\r") else text
