"""The outbox: state changes on their way to the sinks, in order, retried until each sink has them.

Changes are numbered as they are made and written to the state directory before anything is sent
(a crash after that finds them there). Each sink has its own thread and its own watermark (the
number of the last change it took): it sends the next change, and on a failure that a retry may
cure (connection refused, a timeout, 5xx) waits and sends the same change again, with a backoff
that doubles up to `retry_max`, for as long as it takes: a sink that was down for ten minutes gets
every change when it is back, in order. A change the sink refuses outright (a 4xx) is logged,
counted and skipped. Watermarks are saved with the next checkpoint: a crash before that sends
some changes again, under the same idempotency key. A file is deleted once every sink took it.
Sinks that re-post firing alerts (Alertmanager) are given the latest change of each firing alert
every `repost` seconds.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Sequence

from logsift.exceptions import SinkClosed, SinkError
from logsift.sanitize import redact
from logsift.sinks import Sink
from logsift.watch.metrics import Metrics
from logsift.watch.state import StateDir

RETRY_FIRST = 0.25
RETRY_MAX = 30.0
CAP = 10_000  # changes kept for a sink that never comes back; the oldest are dropped past this
LOG_EVERY = 60.0  # seconds between log lines about a sink that keeps failing


class Outbox:
    def __init__(self, sinks: Sequence[Sink], state: StateDir | None = None, metrics: Metrics | None = None,
                 repost: float = 60.0, retry_max: float = RETRY_MAX, log: Callable[[str], None] = lambda _: None,
                 cap: int = CAP) -> None:
        self.sinks = list(sinks)
        self.state = state
        self.metrics = metrics or Metrics()
        self.repost = repost
        self.retry_max = retry_max
        self.log = log
        self.cap = cap
        self.entries: dict[int, dict[str, Any]] = {}
        self.next = 1
        self.delivered: dict[str, int] = {sink.name: 0 for sink in self.sinks}
        self.firing: dict[str, dict[str, dict[str, Any]]] = {sink.name: {} for sink in self.sinks}
        self.condition = threading.Condition()
        self.stopping = threading.Event()
        self.closed = threading.Event()  # a sink went away for good (stdout closed): the watch stops
        self.threads: list[threading.Thread] = []
        self.dirty = False  # a watermark moved since the last checkpoint

    # -- the main thread's side -------------------------------------------------------------

    def restore(self, saved: dict[str, Any] | None, entries: list[tuple[int, dict[str, Any]]],
                firing: list[dict[str, Any]]) -> None:
        """Take up where a previous run stopped: its numbering, watermarks and undelivered changes.
        Files numbered at or past the checkpoint's `next` were written by a run that died before
        its checkpoint: the lines that made them will be read again and make them again."""
        if saved:
            self.next = int(saved.get("next", 1))
            known = saved.get("delivered", {})
            for name in self.delivered:
                # A sink added since starts with the changes still to come (and is re-sent what fires).
                self.delivered[name] = int(known.get(name, self.next - 1))
        orphans = [number for number, _ in entries if number >= self.next]
        if orphans and self.state is not None:
            self.state.remove(orphans)
        self.entries = {number: change for number, change in entries if number < self.next}
        for name in self.firing:
            self.firing[name] = {change["alert"]: change for change in firing}
        self._gauge()

    def add(self, changes: list[dict[str, Any]]) -> None:
        """Number the changes, write them to the state directory, then hand them to the sinks."""
        if not changes:
            return
        numbered = [(self.next + index, change) for index, change in enumerate(changes)]
        if self.state is not None:
            self.state.add(numbered)
        with self.condition:
            self.entries.update(numbered)
            self.next += len(numbered)
            self._drop_over_cap()
            self.condition.notify_all()
        self._gauge()

    def checkpoint(self) -> dict[str, Any]:
        with self.condition:
            self.dirty = False
            return {"next": self.next, "delivered": dict(self.delivered)}

    def prune(self, delivered: dict[str, int]) -> None:
        """Forget the changes every sink has taken, by the watermarks a checkpoint has saved."""
        if not self.sinks:
            return
        lowest = min(delivered.get(sink.name, 0) for sink in self.sinks)
        with self.condition:
            done = [number for number in self.entries if number <= lowest]
            for number in done:
                del self.entries[number]
        if done and self.state is not None:
            self.state.remove(done)
        self._gauge()

    def pending(self) -> int:
        with self.condition:
            return sum(self._depth(sink.name) for sink in self.sinks)

    def start(self) -> None:
        for sink in self.sinks:
            thread = threading.Thread(target=self._work, args=(sink,), name=f"logsift-sink-{sink.name}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def close(self, drain: float = 5.0) -> None:
        """Give the sinks up to `drain` seconds to take what is pending, then stop them."""
        deadline = time.monotonic() + drain
        while self.pending() and not self.closed.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.stopping.set()
        with self.condition:
            self.condition.notify_all()
        for thread in self.threads:
            thread.join(timeout=max(0.1, deadline - time.monotonic()))

    # -- each sink's thread -----------------------------------------------------------------

    def _work(self, sink: Sink) -> None:
        name = sink.name
        wait = RETRY_FIRST
        failing = 0
        last_log = 0.0
        refreshed = time.monotonic()
        while not self.stopping.is_set():
            with self.condition:
                number = self._next_for(name)
                if number is None:
                    self.condition.wait(timeout=max(0.05, min(1.0, self.repost - (time.monotonic() - refreshed))))
                    number = self._next_for(name)
                change = self.entries.get(number) if number is not None else None
                firing = list(self.firing[name].values())
            if self.stopping.is_set():
                return
            try:
                if change is None:
                    if firing and time.monotonic() - refreshed >= self.repost:
                        sink.refresh(firing)
                        refreshed = time.monotonic()
                    continue
                sink.send(change)
            except SinkClosed:
                self.closed.set()
                return
            except Exception as error:  # noqa: BLE001 - a sink's failure must not end its thread
                retry = error.retry if isinstance(error, SinkError) else True
                self.metrics.sink_error(name)
                failing += 1
                now = time.monotonic()
                if not retry or failing == 1 or now - last_log >= LOG_EVERY:
                    what = f"change {change['key']}" if change is not None else "the re-post of firing alerts"
                    self.log(redact(f"sink {name}: {what} not delivered: {error}"
                                    + ("; retrying" if retry else "; the sink refuses it, skipped")))
                    last_log = now
                if change is None:
                    refreshed = time.monotonic()
                    continue
                if retry:
                    self.stopping.wait(wait)
                    wait = min(wait * 2, self.retry_max)
                    continue
            if failing and change is not None:
                self.log(f"sink {name}: delivering again after {failing} failed attempt{'s' if failing != 1 else ''}")
            failing = 0
            wait = RETRY_FIRST
            with self.condition:
                self.delivered[name] = max(self.delivered[name], number or 0)
                self.dirty = True
                if change.get("state") == "firing":
                    self.firing[name][change["alert"]] = change
                else:
                    self.firing[name].pop(change["alert"], None)
            self.metrics.delivered(name)
            self._gauge()

    def _next_for(self, name: str) -> int | None:
        after = self.delivered[name]
        if after + 1 in self.entries:
            return after + 1
        later = [number for number in self.entries if number > after]
        return min(later) if later else None

    def _depth(self, name: str) -> int:
        after = self.delivered[name]
        return sum(1 for number in self.entries if number > after)

    def _drop_over_cap(self) -> None:
        over = len(self.entries) - self.cap
        if over <= 0:
            return
        dropped = sorted(self.entries)[:over]
        for number in dropped:
            del self.entries[number]
        for name in self.delivered:
            self.delivered[name] = max(self.delivered[name], dropped[-1])
        self.log(f"outbox over {self.cap} changes: dropped the {over} oldest (a sink has been down a long time)")
        self.metrics.dropped(over)

    def _gauge(self) -> None:
        with self.condition:
            depths = {sink.name: self._depth(sink.name) for sink in self.sinks}
        for name, depth in depths.items():
            self.metrics.outbox_depth(name, depth)
