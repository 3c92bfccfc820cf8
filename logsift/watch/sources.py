"""Live inputs, each read on a thread of its own so that the main loop never blocks on input:
it takes what has arrived (`take`), and meanwhile closes quiet events, checkpoints and reports.

- `JournalSource`: the live journal, `--file` or `--directory` journal files that another process
  keeps writing, through systemd-python (`Reader.wait()`) or a `journalctl --follow -o export`
  child; it can start at a cursor (a restart goes on, or reads again, from there).
- `StreamSource`: stdin (`journalctl -f -o json | logsift watch -`) or a FILE another process
  appends to (`tail -F`), in any format the batch readers know, detected from its first bytes.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterable, Iterator, cast

from logsift import read as readers
from logsift.exceptions import InputError, LogsiftError
from logsift.read import sources as batch_sources
from logsift.read.live import FollowedFile, Live, LiveStream, live_batches
from logsift.read.selection import Selection
from logsift.read.text import TextReader
from logsift.records import ReadProblems, Record

BATCH = 1024  # records handed over at once while the input has more


@dataclass(frozen=True)
class Start:
    """Where reading starts: "head", "tail", "since" (the selection's), "cursor" (inclusive: a
    restart reading again) or "after" (after `cursor`: a restart going on)."""

    mode: str
    cursor: str | None = None


@dataclass
class Taken:
    records: list[Record]
    ended: bool = False
    error: LogsiftError | None = None


_END = object()


class Source:
    """A producer thread and a bounded queue between it and the main loop."""

    resumable = False  # whether it can start at a cursor
    default = Start("head")

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems = ReadProblems()
        self.queue: queue.Queue[object] = queue.Queue(maxsize=64)  # of record batches: backpressure
        self.stop = threading.Event()
        self.pending: list[Record] = []
        self.thread: threading.Thread | None = None

    def items(self, start: Start) -> Iterable[Record | None]:
        """Records as they come, None whenever the input has nothing more for now."""
        raise NotImplementedError

    def start(self, start: Start) -> None:
        self.thread = threading.Thread(target=self._produce, args=(start,), name=f"logsift-read-{self.name}",
                                       daemon=True)
        self.thread.start()

    def take(self, timeout: float) -> Taken:
        """What arrived: waits up to `timeout` seconds for the first batch, not for more."""
        taken = Taken([])
        try:
            item = self.queue.get(timeout=timeout)
            while True:
                if item is _END:
                    taken.ended = True
                    break
                if isinstance(item, LogsiftError):
                    taken.error = item
                    break
                taken.records.extend(cast(list[Record], item))
                if len(taken.records) >= 4 * BATCH:
                    break
                item = self.queue.get_nowait()
        except queue.Empty:
            pass
        return taken

    def backlog(self) -> bool:
        return not self.queue.empty()

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=1.0)

    def flush(self) -> None:
        if self.pending:
            batch, self.pending = self.pending, []
            self._put(batch)

    def _put(self, item: object) -> None:
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _produce(self, start: Start) -> None:
        try:
            for item in self.items(start):
                if self.stop.is_set():
                    return
                if item is None:
                    self.flush()
                    continue
                self.pending.append(item)
                if len(self.pending) >= BATCH:
                    self.flush()
            self.flush()
            self._put(_END)
        except LogsiftError as error:
            self.flush()
            self._put(error)
        except OSError as error:
            self.flush()
            self._put(InputError(f"cannot read it: {error.strerror or error}", self.name))


class JournalSource(Source):
    resumable = True

    def __init__(self, selection: Selection, backend: str = "auto", default: Start | None = None) -> None:
        super().__init__(selection.source)
        self.selection = selection
        self.backend = backend
        if default is not None:
            self.default = default
        if backend not in batch_sources.BACKENDS:
            raise InputError(f"unknown journal reader {backend!r}")
        self.native = None
        if backend != "journalctl":
            try:
                from logsift.read import native
            except ImportError:
                if backend == "python":
                    raise InputError("systemd-python is not installed: pip install 'logsift[journal]'") from None
            else:
                self.native = native

    def items(self, start: Start) -> Iterable[Record | None]:
        if self.native is not None:
            followed: Iterable[Record | None] = self.native.follow_journal(self.selection, self.problems, start.mode,
                                                                           start.cursor, self.stop)
            return followed
        from logsift.read.journalctl import follow_journalctl

        return follow_journalctl(self.selection, self.problems, start.mode, start.cursor, self.stop, self.flush)


class StreamSource(Source):
    """stdin ("-") or a growing FILE, in the format given or detected."""

    def __init__(self, path: str, fmt: str = "auto") -> None:
        super().__init__(path)
        self.path = path
        self.fmt = fmt
        if fmt != "auto" and fmt not in readers.REGISTRY:
            raise InputError(f"unknown input format {fmt!r}; known: {', '.join(sorted(readers.REGISTRY))}")
        if path != "-" and not os.path.isfile(path):
            raise InputError("no such file" if not os.path.exists(path) else "not a regular file", path)

    def items(self, start: Start) -> Iterable[Record | None]:
        check = lambda: not self.stop.is_set()  # noqa: E731
        stream: Live
        if self.path == "-":
            stream = _stdin(self.flush, check)
        else:
            stream = FollowedFile(self.path, self.flush, check)
        head = _head(stream)
        fmt = self.fmt
        if fmt == "auto":
            fmt = readers.detect(head)
            if fmt == "journal-file":
                raise InputError("this is a native journal file: follow it with --file PATH", self.path)
            if fmt == "binary":
                raise InputError("input looks like binary data, not a log; give a journalctl text, json or export "
                                 "stream", self.path)
        joined = _Prefixed(head, stream)
        if readers.REGISTRY[fmt] is readers.read_text:
            return TextReader(self.path).read_batches(live_batches(joined))
        return readers.REGISTRY[fmt](cast(BinaryIO, joined), self.path, self.problems)


def _stdin(on_idle: Callable[[], None], check: Callable[[], bool]) -> Live:
    """Standard input as a live stream: its descriptor when it has a real one (a pipe), else the
    file object it was replaced with (tests, embedding), read as it gives."""
    try:
        descriptor = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return _Blocking(getattr(sys.stdin, "buffer", sys.stdin))
    return LiveStream(descriptor, on_idle, check)


class _Blocking:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        read = getattr(self.stream, "read1", self.stream.read)
        data = read(size if size > 0 else 1 << 20)
        return data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)

    def has_more(self) -> bool:
        return False


def _head(stream: Live) -> bytes:
    """The first bytes, enough to tell the format: at least one whole line (or all there is)."""
    head = b""
    while b"\n" not in head and len(head) < readers.SNIFF:
        data = stream.read(readers.SNIFF)
        if not data:
            break
        head += data
    return head


class _Prefixed:
    """A live stream with bytes already read put back in front."""

    def __init__(self, head: bytes, stream: Live) -> None:
        self.head = head
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        if self.head:
            data, self.head = (self.head, b"") if size < 0 else (self.head[:size], self.head[size:])
            return data
        return self.stream.read(size)

    def has_more(self) -> bool:
        return bool(self.head) or self.stream.has_more()


def cursor_order(cursor: str | None, other: str | None) -> int | None:
    """-1, 0, 1 as journal cursor `cursor` is before, at or after `other`; None when they cannot
    be compared. Within one journal file's sequence (`s=`) the sequence number (`i=`) orders
    entries; across files, the realtime stamp (`t=`)."""
    first, second = _cursor_fields(cursor), _cursor_fields(other)
    if first is None or second is None:
        return None
    if cursor == other:
        return 0
    for field in (("i" if first.get("s") == second.get("s") else "t"), "t"):
        try:
            left, right = int(first[field], 16), int(second[field], 16)
        except (KeyError, ValueError):
            continue
        return (left > right) - (left < right)
    return None


def _cursor_fields(cursor: str | None) -> dict[str, str] | None:
    if not cursor:
        return None
    fields = dict(part.split("=", 1) for part in cursor.split(";") if "=" in part)
    return fields or None


def records_after(records: Iterable[Record], cursor: str) -> Iterator[Record]:
    """Records past `cursor` (what a source that cannot seek gives again after a restart)."""
    for record in records:
        order = cursor_order(record.cursor, cursor)
        if order is None or order > 0:
            yield record
