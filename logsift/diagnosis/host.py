"""Which failed run a line of the host (the kernel's Xid or OOM kill, PID 1 about no unit) took
down: the failed run of a named unit on that host that was going on at that line and ended
first after it, within HOST_EVENT_WINDOW when both have times, else the one whose last line
comes first after it.

The runs are indexed once, when diagnosis finishes, so that placing each host line costs a
few binary searches, not a scan of every run of the host (100,000 units, thousands of Xid
lines): per host, the failed runs sorted by when they ended, and by their last line, each with
a tree of their first lines that finds the first run in that order which had started by then.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Iterable, Sequence, TypeVar

HOST_EVENT_WINDOW = timedelta(seconds=120)

Item = TypeVar("Item")


@dataclass(frozen=True, slots=True)
class Span:
    """What placing needs of a failed run: its lines, when it ended (or last logged), and its
    place in the order runs are otherwise looked at (ties go to the earliest)."""

    first_line: int
    last_line: int
    ended: datetime | None
    order: int


class _FirstAtMost:
    """Over a fixed list of numbers: the first index at or after `start` whose number is at
    most `limit` (a tree of minimums; O(log n) a query)."""

    def __init__(self, values: Sequence[int]) -> None:
        size = 1
        while size < len(values):
            size *= 2
        self.size = size
        self.tree = [float("inf")] * (2 * size)
        self.tree[size : size + len(values)] = values
        for node in range(size - 1, 0, -1):
            self.tree[node] = min(self.tree[2 * node], self.tree[2 * node + 1])

    def find(self, start: int, limit: int) -> int:
        return self._find(1, 0, self.size, start, limit)

    def _find(self, node: int, low: int, high: int, start: int, limit: int) -> int:
        if high <= start or self.tree[node] > limit:
            return -1
        if high - low == 1:
            return low
        middle = (low + high) // 2
        found = self._find(2 * node, low, middle, start, limit)
        return found if found >= 0 else self._find(2 * node + 1, middle, high, start, limit)


class _Sorted(Generic[Item]):
    """Spans sorted by a key, with the tree of their first lines."""

    def __init__(self, spans: Iterable[tuple[Span, Item]], by_time: bool) -> None:
        def key(pair: tuple[Span, Item]) -> tuple[object, ...]:
            span = pair[0]
            return (span.ended, span.last_line, span.order) if by_time else (span.last_line, span.order)

        self.pairs = sorted(spans, key=key)
        self.keys: list[Any] = [pair[0].ended if by_time else pair[0].last_line for pair in self.pairs]
        self.first_lines = _FirstAtMost([pair[0].first_line for pair in self.pairs])

    def first(self, lowest: Any, line: int) -> int:
        """The first index whose key is at least `lowest` and whose run had started by `line`."""
        return self.first_lines.find(bisect.bisect_left(self.keys, lowest), line)


class FailedRuns(Generic[Item]):
    """The failed runs of named units on each host, indexed for `taken_down_by`."""

    def __init__(self, runs: Iterable[tuple[str | None, Span, Item]]) -> None:
        by_host: dict[str | None, list[tuple[Span, Item]]] = {}
        for host, span, item in runs:
            by_host.setdefault(host, []).append((span, item))
        self.by_line = {host: _Sorted(pairs, by_time=False) for host, pairs in by_host.items()}
        self.untimed = {host: _Sorted([pair for pair in pairs if pair[0].ended is None], by_time=False)
                        for host, pairs in by_host.items()}
        self.by_time = {host: _Sorted([pair for pair in pairs if pair[0].ended is not None], by_time=True)
                        for host, pairs in by_host.items()}

    def taken_down_by(self, host: str | None, line: int, stamp: datetime | None) -> Item | None:
        """The run a host line at `line` (logged at `stamp`) belongs to, or None."""
        if host not in self.by_line:
            return None
        if stamp is None:
            return self._by_lines(self.by_line[host], line)
        # Runs with a time by the gap in seconds; those without one by the gap in lines, as
        # when the line itself has no time.
        best: tuple[float, int, int, Item] | None = None
        timed = self.by_time[host]
        start = timed.first(stamp, line)
        while start >= 0:
            span, item = timed.pairs[start]
            assert span.ended is not None
            if span.ended - stamp > HOST_EVENT_WINDOW:
                break
            if span.last_line >= line:
                best = ((span.ended - stamp).total_seconds(), span.last_line, span.order, item)
                break
            start = timed.first_lines.find(start + 1, line)
        untimed = self.untimed[host]
        found = untimed.first(line, line)
        if found >= 0:
            span, item = untimed.pairs[found]
            candidate = (float(span.last_line - line), span.last_line, span.order, item)
            if best is None or candidate[:3] < best[:3]:
                best = candidate
        return best[3] if best is not None else None

    @staticmethod
    def _by_lines(index: _Sorted[Item], line: int) -> Item | None:
        found = index.first(line, line)
        return index.pairs[found][1] if found >= 0 else None
