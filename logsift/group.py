"""Join the lines of one failure into one Event, per stream (host + unit + pid).

Streams of several processes interleave (tensor-parallel ranks, other units); an event only
ever holds lines of its own stream. Recognised shapes:

- Python tracebacks, chained ones included ("The above exception was the direct cause...",
  "During handling of the above exception..."), with an exception message that runs on over
  several lines (torch puts the whole ninja output into "Error building extension").
- Compiler and build output: ninja's `[1/3]`, `FAILED:`, nvcc/gcc diagnostics, `ninja: build stopped`.
- CUDA error banners ("CUDA kernel errors might be asynchronously reported...").
- NCCL warning bursts (consecutive `NCCL WARN`/`NCCL INFO` lines of one rank).
- Any other line the prefilter flagged, or that systemd logged about a unit, alone.

Events come out in the order of their first line, so diagnosis sees a traceback before the
"Main process exited" that followed it, even though the traceback closes later.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Iterable, Iterator, KeysView

from logsift.lazy import compile_lazily
from logsift.read.relay import PYTHON_LOGGERS
from logsift.records import Event, Record

MAX_EVENT_RECORDS = 400
IDLE = timedelta(seconds=10)
LINE_GAP = 2000  # input lines after which an event with no news is closed
SWEEP = 256  # input lines between looks for events that can no longer continue
SWEEP_TIME = timedelta(seconds=1)  # and log time

_TRACEBACK = "Traceback (most recent call last)"
_PROGRESS_LEVELS = ("info", "debug")  # a logger line at these levels lends no level to a traceback after it
_CHAIN = ("The above exception was the direct cause", "During handling of the above exception")
_BUILD_START = compile_lazily(
    r"^\[\d+/\d+\] |^FAILED: |^ninja: build stopped|^In file included from |\bfatal error: |"
    r"^nvcc fatal|\berror: |^\S+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)(?:\(\d+\)|:\d+:)"
)
_NINJA_STEP = compile_lazily(r"\[\d+/\d+\] ")
_BUILD_MORE = compile_lazily(
    r"^\[\d+/\d+\] |^FAILED: |^ninja: |^In file included from |^\s+from |\berror\b|\bwarning\b|"
    r"^\s|^\S+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)(?:\(\d+\)|:\d+)|^compilation terminated|"
    r"^nvcc |^ptxas|^/bin/sh: |^/usr/bin/ld|^collect2|^\d+ errors? detected|^make(?:\[\d+\])?: |"
    r"^gmake|^Remark|^\S*(?:nvcc|c\+\+|g\+\+|gcc|clang\+*) |^\s*\d* \||^(?:stdout|stderr):$"
)
_BANNER = ("CUDA kernel errors might be asynchronously reported", "For debugging consider passing",
           "Compile with `TORCH_USE_CUDA_DSA`", "Search for `cudaError")
# A line that starts a new log record rather than continuing an exception message.
_NEW_RECORD = compile_lazily(
    r"^(?:\[?\d{4}-\d\d-\d\d[ T]|\[?\d\d-\d\d \d\d:|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|"
    r"[IWEF]\d{4} \d\d:|\(\w+ pid=\d+)"
)
_NCCL = ("NCCL WARN", "NCCL INFO")
# A Python frame line, which opens a traceback when its header is not in the input (a paste or
# an excerpt that starts below "Traceback (most recent call last):").
_FRAME = compile_lazily(r'^\s*File "[^"\n]+", line \d+, in ')


@dataclass
class _Open:
    kind: str
    records: list[Record] = field(default_factory=list)
    hits: list[frozenset[int]] = field(default_factory=list)
    state: str = "body"
    last_index: int = 0
    level: str | None = None  # the logger's level for the whole event (see Grouper._level)
    origin: str | None = None  # the logger location of its first line (read/relay.py)
    number: int = 0  # which open event this is, for the heap of first lines

    def add(self, record: Record, hits: frozenset[int]) -> None:
        self.records.append(record)
        self.hits.append(hits)
        self.last_index = record.line


@dataclass(frozen=True, slots=True)
class GroupedEvent:
    """An Event with the prefilter's rule hits for each of its records."""

    event: Event
    hits: tuple[frozenset[int], ...]


class Grouper:
    """Stateful so that follow mode can feed it forever and flush on idle."""

    def __init__(self, idle: timedelta = IDLE) -> None:
        self.idle = idle
        # Open events by stream, least recently fed first (a stream fed moves to the end), so
        # that expiry looks only at the front: the cost per record does not grow with the number
        # of streams that have an event open (2,000 ranks with open tracebacks).
        self.open: OrderedDict[tuple[object, ...], _Open] = OrderedDict()
        self.ready: list[tuple[int, int, GroupedEvent]] = []  # heap by first line
        self.starts: list[tuple[int, int, tuple[object, ...]]] = []  # open events by first line (lazy)
        self.sequence = 0
        # The record fed last: the one right before a traceback, when it is of the same stream
        # (one record, not one per stream: a crash loop makes a stream per restart).
        self.previous: Record | None = None
        self._sweep_at = 0  # the line, and the log time, of the next look for stale events
        self._sweep_time: datetime | None = None
        self._clock: datetime | None = None  # the latest time seen, while times only grow
        self.ordered = True  # whether the times seen so far never went back
        self.opened = 0

    @property
    def streams(self) -> KeysView[tuple[object, ...]]:
        """The streams with an open event, live: their next lines may continue it, so a reader
        that skips lines must not skip theirs. Lines of other streams never change an event."""
        return self.open.keys()

    def feed(self, record: Record, hits: frozenset[int]) -> Iterator[GroupedEvent]:
        key = record.stream
        current = self.open.get(key)
        message = record.message
        if current is not None and self._stale(current, record):
            self._close(key)
            current = None
        if current is not None and self._continues(current, record, message):
            current.add(record, hits)
            self.open.move_to_end(key)
            if len(current.records) >= MAX_EVENT_RECORDS:
                self._close(key)
        else:
            if current is not None:
                self._close(key)
            kind = self._starts(record, message, hits)
            if kind in ("line", "lifecycle") and not self.open and not self.ready:
                # A one-line event with nothing open or waiting before it goes out at once: the
                # common case of a healthy journal's flagged lines and of PID 1's lines.
                event = Event(kind, (record,), self._level(key, record))
                self.previous = record
                self._tick(record.timestamp)
                yield GroupedEvent(event, (hits,))
                return
            if kind is not None:
                opened = _Open(kind, level=self._level(key, record), origin=record.origin)
                opened.add(record, hits)
                if kind in ("line", "lifecycle"):
                    self._emit(opened)
                else:
                    self.opened += 1
                    opened.number = self.opened
                    self.open[key] = opened
                    heapq.heappush(self.starts, (record.line, opened.number, key))
        self.previous = record
        stamp = record.timestamp
        self._tick(stamp)
        if self.open and (record.line >= self._sweep_at
                          or (self.ordered and stamp is not None and self._sweep_time is not None
                              and stamp >= self._sweep_time)):
            self._sweep(record.line, stamp)
        yield from self._release()

    def _tick(self, stamp: datetime | None) -> None:
        """Whether the log's times have only grown so far (the time-based sweep relies on it)."""
        if stamp is not None and self.ordered:
            if self._clock is not None and stamp < self._clock:
                self.ordered = False
            self._clock = stamp

    def flush(self) -> Iterator[GroupedEvent]:
        for key in list(self.open):
            self._close(key)
        yield from self._release()

    def close_quiet(self, last_line: int) -> Iterator[GroupedEvent]:
        """Follow mode: close the open events that got no line after input line `last_line`
        (the caller knows which lines arrived longer ago than its idle timeout, in wall time), so
        that a traceback is diagnosed without waiting for the next line of the journal."""
        for key, opened in list(self.open.items()):
            if opened.last_index <= last_line:
                self._close(key)
        yield from self._release()

    def close_streams(self, keys: Iterable[tuple[object, ...]]) -> Iterator[GroupedEvent]:
        """Follow mode: close the open events of these streams now (their process has exited:
        nothing more will continue them)."""
        for key in keys:
            if key in self.open:
                self._close(key)
        yield from self._release()

    # -- shapes -------------------------------------------------------------------------

    def _starts(self, record: Record, message: str, hits: frozenset[int]) -> str | None:
        if record.is_systemd:
            return "lifecycle"
        if _TRACEBACK in message or (message[:1] in (" ", "\t", "F") and _FRAME.match(message)):
            return "traceback"
        if _NCCL[0] in message or (_NCCL[1] in message and hits):
            return "nccl"
        if hits and (
            (("error" in message or "FAILED" in message) and _BUILD_START.search(message))
            or (message[:1] == "[" and _NINJA_STEP.match(message))
        ):
            return "build"
        if hits and any(marker in message for marker in _BANNER):
            return "banner"
        return "line" if hits else None

    def _level(self, key: tuple[object, ...], record: Record) -> str | None:
        """The logger level of an event: its first line's, or, for a traceback printed right
        after a logger's warning or error line (python logging's exc_info: "WARNING ... failed to
        import x:" then the traceback), that line's. A traceback right after an INFO or DEBUG
        line is the interpreter's own report of an uncaught exception that followed a progress
        line ("INFO loading weights", then the crash): exc_info at those levels is rare, crashes
        after progress lines are everyday, so it keeps no level."""
        if record.level is not None:
            return record.level
        before = self.previous
        if (before is not None and before.stream == key and before.line + before.lines == record.line
                and _TRACEBACK in record.message
                and before.logger in PYTHON_LOGGERS and before.level not in _PROGRESS_LEVELS):
            return before.level
        return None

    def _continues(self, current: _Open, record: Record, message: str) -> bool:
        kind = current.kind
        if kind == "traceback":
            if record.level is not None and current.state == "exception" and record.origin != current.origin:
                return False  # another logger line: a new log record, not the exception's message
            return self._traceback_continues(current, message)
        if kind == "build":
            return bool(_BUILD_MORE.search(message)) or message == ""
        if kind == "nccl":
            return any(marker in message for marker in _NCCL)
        if kind == "banner":
            return any(marker in message for marker in _BANNER) or message.startswith("CUDA ")
        return False

    def _traceback_continues(self, current: _Open, message: str) -> bool:
        state = current.state
        if any(marker in message for marker in _CHAIN):
            current.state = "chain"
            return True
        if state == "chain":
            if _TRACEBACK in message:
                current.state = "body"
            return True
        if state == "body":
            if message == "" or message[:1] in (" ", "\t") or _TRACEBACK in message:
                return True
            if message.startswith('File "') and _FRAME.match(message):
                return True  # a frame whose indentation the paste lost
            current.state = "exception"  # the exception line, e.g. "RuntimeError: ..."
            return True
        # After the exception line: its message may go on (build output, CUDA banner).
        if message == "":
            return True
        if _TRACEBACK in message or _NEW_RECORD.match(message):
            return False
        return bool(
            message[:1] in (" ", "\t")
            or _BUILD_MORE.search(message)
            or any(marker in message for marker in _BANNER)
        )

    # -- closing and ordering -------------------------------------------------------------

    def _close(self, key: tuple[object, ...]) -> None:
        opened = self.open.pop(key)
        # Blank lines at the end belong to nothing.
        while len(opened.records) > 1 and opened.records[-1].message == "":
            opened.records.pop()
            opened.hits.pop()
        self._emit(opened)

    def _emit(self, opened: _Open) -> None:
        event = GroupedEvent(Event(opened.kind, tuple(opened.records), opened.level), tuple(opened.hits))
        self.sequence += 1
        heapq.heappush(self.ready, (event.event.line, self.sequence, event))

    def _stale(self, opened: _Open, record: Record) -> bool:
        """Whether `record`, the next line of the event's stream, comes too late to continue it:
        more than `idle` of log time or LINE_GAP input lines after the event's last line. Decided
        by the stream's own lines only, so that the lines of other streams (which a reader may
        leave unparsed) never change an event."""
        if record.line - opened.last_index > LINE_GAP:
            return True
        now, last = record.timestamp, opened.records[-1].timestamp
        return now is not None and last is not None and now - last > self.idle

    def _sweep(self, line: int, stamp: datetime | None) -> None:
        """Close the events that no later line can continue, so that the events after them are
        released, open streams stay few and memory stays bounded: those LINE_GAP lines behind
        (line numbers only grow), and, while the log's times have only grown (a journal is in
        time order), those `idle` behind the latest time."""
        self._sweep_at = line + SWEEP
        now = stamp if self.ordered else None
        if now is not None:
            self._sweep_time = now + SWEEP_TIME
        # Open events are kept least recently fed first: their last lines are in input order, and
        # while times only grow, so are their last times. The walk stops at the first event that
        # is still fresh; one with no time is passed over when only its time could close it.
        passed: list[tuple[object, ...]] = []
        for key, opened in self.open.items():
            if line - opened.last_index > LINE_GAP:
                passed.append(key)
                continue
            last = opened.records[-1].timestamp
            if now is None:
                break
            if last is None:
                continue
            if now - last > self.idle:
                passed.append(key)
                continue
            break
        for key in passed:
            self._close(key)

    def _oldest_open(self) -> int | None:
        """The first line of the oldest event still open (the heap drops closed ones lazily)."""
        while self.starts:
            line, number, key = self.starts[0]
            opened = self.open.get(key)
            if opened is not None and opened.number == number:
                return line
            heapq.heappop(self.starts)
        return None

    def _release(self) -> Iterator[GroupedEvent]:
        oldest_open = self._oldest_open() if self.open else None
        while self.ready and (oldest_open is None or self.ready[0][0] < oldest_open):
            yield heapq.heappop(self.ready)[2]


def group(items: Iterable[tuple[Record, frozenset[int]]]) -> Iterator[GroupedEvent]:
    grouper = Grouper()
    for record, hits in items:
        yield from grouper.feed(record, hits)
    yield from grouper.flush()
