"""Byte streams that keep growing (follow mode): a pipe (`journalctl -f -o json | logsift -f`, or
a journalctl child) and a file another process appends to (`tail -F`).

The readers pull bytes with `read(size)` and parse whatever is complete; a live stream returns
what is there as soon as something is (never waits for `size` bytes), and while nothing is, it
tells the consumer (`on_idle`, so that what was parsed so far is handed on) and waits in short
polls (`check` may end the stream between them: a stop, a rotation). Memory stays bounded: a
read returns at most `size` bytes, and line splitting caps lines as batch mode does.
"""

from __future__ import annotations

import os
import select
import time
from typing import Callable, Iterator, Protocol

from logsift.read.lines import MAX_LINE, TRUNCATED

POLL = 0.1  # seconds between checks while nothing arrives


class LiveStream:
    """A pipe or other descriptor read as it fills; b"" only at its end (or when `check` says so)."""

    def __init__(self, descriptor: int, on_idle: Callable[[], None] = lambda: None,
                 check: Callable[[], bool] = lambda: True, poll: float = POLL) -> None:
        self.descriptor = descriptor
        self.on_idle = on_idle
        self.check = check  # False: end the stream now
        self.poll = poll

    def read(self, size: int = -1) -> bytes:
        size = size if size > 0 else 1 << 20
        told = False
        while True:
            ready, _, _ = select.select([self.descriptor], [], [], 0 if not told else self.poll)
            if ready:
                return os.read(self.descriptor, size)
            if not told:
                self.on_idle()
                told = True
            if not self.check():
                return b""

    def has_more(self) -> bool:
        """Whether something can be read right now."""
        ready, _, _ = select.select([self.descriptor], [], [], 0)
        return bool(ready)


class FollowedFile:
    """A file read as another process appends to it, like `tail -F`: from its start, then what is
    added; when it is replaced (rotated: a new file under the name) the rest of the old one is
    read and then the new one from its start; when it is cut short (truncated), from its start."""

    def __init__(self, path: str, on_idle: Callable[[], None] = lambda: None,
                 check: Callable[[], bool] = lambda: True, poll: float = POLL) -> None:
        self.path = path
        self.on_idle = on_idle
        self.check = check
        self.poll = poll
        self.handle = open(path, "rb")  # noqa: SIM115 - kept open while following
        self.inode = os.fstat(self.handle.fileno()).st_ino

    def read(self, size: int = -1) -> bytes:
        size = size if size > 0 else 1 << 20
        told = False
        while True:
            data = self.handle.read(size)
            if data:
                return data
            if self._switched():
                continue
            if not told:
                self.on_idle()
                told = True
            if not self.check():
                return b""
            time.sleep(self.poll)

    def _switched(self) -> bool:
        try:
            status = os.stat(self.path)
        except OSError:
            return False  # gone for now: keep the old one until a new file appears
        if status.st_ino != self.inode:
            self.handle.close()
            self.handle = open(self.path, "rb")  # noqa: SIM115
            self.inode = os.fstat(self.handle.fileno()).st_ino
            return True
        if status.st_size < self.handle.tell():
            self.handle.seek(0)
            return True
        return False

    def has_more(self) -> bool:
        return os.fstat(self.handle.fileno()).st_size > self.handle.tell()

    def close(self) -> None:
        self.handle.close()


class Live(Protocol):
    def read(self, size: int = -1) -> bytes: ...

    def has_more(self) -> bool: ...


def live_batches(stream: Live, max_line: int = MAX_LINE) -> Iterator[list[str]]:
    """Decoded lines as they arrive, a read's worth at a time, and an empty batch each time the
    stream has nothing more for now: the text reader then lets go of the entry it held back for
    continuation lines that may never come."""
    carry = b""
    dropped = 0  # bytes of the line in `carry` dropped past `max_line`
    while True:
        data = stream.read(1 << 20)
        if not data:
            break
        data = carry + data
        end = data.rfind(b"\n")
        if end < 0:
            carry = data
        else:
            carry = data[end + 1:]
            lines = []
            for index, raw in enumerate(data[:end].split(b"\n")):
                extra = max(0, len(raw) - max_line) + (dropped if index == 0 else 0)
                text = raw[:max_line].decode("utf-8", "replace").removesuffix("\r")
                lines.append(text + TRUNCATED.format(extra) if extra else text)
            dropped = 0
            yield lines
        if len(carry) > max_line:
            dropped += len(carry) - max_line
            carry = carry[:max_line]
        if not stream.has_more():
            yield []
    if carry:
        text = carry.decode("utf-8", "replace").removesuffix("\r")
        yield [text + TRUNCATED.format(dropped) if dropped else text]


def journal_set(files: tuple[str, ...], directory: str | None) -> tuple[tuple[str, int], ...]:
    """Which journal files a selection means now, by path and inode: when this changes, a file was
    rotated (replaced by a new one under its name, or a new one appeared in the directory) or
    vacuumed (deleted), and a follower reopens the journal where it was."""
    from logsift.read.selection import journal_files

    paths = files if files else (journal_files(directory) if directory else ())
    found = []
    for path in paths:
        try:
            found.append((path, os.stat(path).st_ino))
        except OSError:
            found.append((path, 0))
    return tuple(found)


def replaced(before: tuple[tuple[str, int], ...], now: tuple[tuple[str, int], ...]) -> bool:
    """Whether to reopen: the set changed, and every file named is there (a --file that is gone
    for now is waited for: the old one is read to its end meanwhile)."""
    return now != before and all(inode for _, inode in now) and bool(now)
