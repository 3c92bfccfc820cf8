"""Bounded line splitting for untrusted byte streams.

Reads fixed-size chunks, so memory stays bounded whatever the input: a line longer than
`max_line` is cut there, marked, and the rest of it skipped. Invalid UTF-8 is replaced, not fatal.
"""

from __future__ import annotations

from typing import BinaryIO, Callable, Iterator

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


ENTRY_BLOCK_MAX = 8 << 20  # an entry longer than this (continuation lines) is cut between blocks


def entry_blocks(stream: BinaryIO, clean: Callable[[str], str], max_line: int = MAX_LINE,
                 chunk: int = CHUNK) -> Iterator[bytes]:
    """The stream as blocks of whole entries: lines joined by LF, with no line ending of their
    own, CRLF turned into LF, each overlong line cut and marked, and `clean` (stripping
    terminal sequences) applied to the lines that have an ESC byte, so that a block says what
    `iter_line_batches` would decode, byte for byte. A block never ends before an indented
    line (a continuation of the entry above it), unless the entry is over ENTRY_BLOCK_MAX.
    Readers scan these blocks as bytes and decode only the lines they need."""
    carry: bytes | None = None  # the last entry of the previous block: lines may follow it
    for block, dropped in line_blocks(stream, max_line, chunk):
        if dropped:
            data = (_decode(block) + TRUNCATED.format(dropped)).encode("utf-8")
        else:
            data = _clean_block(block, clean, max_line)
        data = carry + b"\n" + data if carry is not None else data
        cut = _last_head(data)
        if cut < 0:
            if len(data) < ENTRY_BLOCK_MAX:
                carry = data  # one entry so far: wait for the lines after it
                continue
            yield data
            carry = None
            continue
        yield data[: cut - 1]
        carry = data[cut:]
    if carry is not None:
        yield carry


def _last_head(data: bytes) -> int:
    """The offset of the last line that is not indented (where the last entry starts); 0 or
    -1 when there is none after the first line."""
    position = data.rfind(b"\n")
    while position >= 0 and data[position + 1 : position + 2] in (b" ", b"\t"):
        position = data.rfind(b"\n", 0, position)
    return position + 1 if position >= 0 else -1


def _has_long_line(block: bytes, max_line: int) -> bool:
    """Whether a line of `block` is longer than `max_line`: such a line covers a whole window
    of max_line / 2 bytes that starts at a multiple of it, so a few byte searches tell."""
    if len(block) <= max_line:
        return False
    step = max(max_line // 2, 1)
    return any(block.find(b"\n", start, start + step) < 0 for start in range(0, len(block) - step + 1, step))


def _clean_block(block: bytes, clean: Callable[[str], str], max_line: int) -> bytes:
    if b"\r" in block:
        block = block.replace(b"\r\n", b"\n")
        if block.endswith(b"\r"):
            block = block[:-1]
    if b"\x1b" not in block and not _has_long_line(block, max_line):
        return block
    lines = block.decode("utf-8", "replace").split("\n")
    cleaned = []
    for line in lines:
        if len(line) > max_line:
            line = line[:max_line] + TRUNCATED.format(len(line) - max_line)
        cleaned.append(clean(line) if "\x1b" in line else line)
    return "\n".join(cleaned).encode("utf-8")
