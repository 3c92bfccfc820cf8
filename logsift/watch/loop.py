"""The watch's main loop: read what arrived, push it through the stages, save, hand to the sinks.

    restore the checkpoint (tracker, outbox, cursor) ─┐
    start reading at the replay cursor, or after the cursor, or at the source's default start
    loop: take records (or time out) → Follower.feed / tick → changes
          changes → outbox files (fsync) → checkpoint (cursor + tracker, fsync) → sink threads
          every `checkpoint_every` seconds, or when a sink took something: checkpoint
    at the end of the input, or on SIGTERM: last changes, checkpoint, let the sinks drain

On a restart the lines from the replay cursor up to the saved cursor are read again only to
rebuild the stages (runs still undecided, events still open): they make no changes, since the
saved tracker already counted them. Reading goes on from there as if the process had never
stopped, so the changes it makes are those the first process would have made, with the same
numbers and keys. A source that cannot seek (stdin) skips what it gives again up to the cursor.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Callable

from logsift.records import Record
from logsift.watch.changes import wall_clock
from logsift.watch.follower import Follower
from logsift.watch.metrics import Metrics
from logsift.watch.outbox import Outbox
from logsift.watch.sources import Source, Start, cursor_order
from logsift.watch.state import StateDir

TICK = 0.1  # seconds the loop waits for input before doing its timed work


@dataclass(frozen=True)
class LoopOptions:
    checkpoint_every: float = 1.0  # seconds between checkpoints that only move the cursor
    drain: float = 5.0  # seconds the sinks get at the end to take what is pending
    tick: float = TICK
    ignore_own_pid: bool = False  # the live journal: skip this process's own log lines


class Watch:
    def __init__(self, source: Source, follower: Follower, outbox: Outbox, state: StateDir | None = None,
                 metrics: Metrics | None = None, log: Callable[[str], None] = lambda _: None,
                 options: LoopOptions | None = None, on_change: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.source = source
        self.follower = follower
        self.tracker = follower.tracker
        self.outbox = outbox
        self.state = state
        self.metrics = metrics or Metrics()
        self.log = log
        self.options = options or LoopOptions()
        self.on_change = on_change
        self.position: dict[str, Any] = {"cursor": None, "replay": None, "runs": []}  # as last saved
        self.replaying_until: str | None = None
        self.skip_until: str | None = None
        self.changes = 0

    def run(self, stop: threading.Event) -> int:
        saved = self.state.load() if self.state is not None else None
        if saved:
            if saved.get("source") and saved["source"] != self.source.name:
                self.log(f"note: the state was saved while reading {saved['source']}; going on from its cursor")
            self.tracker.load(saved.get("tracker", {}))
            self.position = {"cursor": saved.get("cursor"), "replay": saved.get("replay"), "runs": saved.get("runs", [])}
            if self.source.resumable:
                self.follower.resume(self.position["runs"])
        self.outbox.restore(saved.get("outbox") if saved else None, self.state.entries() if self.state else [],
                            self.tracker.firing())
        self.metrics.open(self.tracker.open_counts())
        start = self._start()
        self.outbox.start()
        self.source.start(start)
        last_save = time.monotonic()
        saved_cursor = self.position["cursor"]
        consistent = True  # False while a batch is half way through the stages
        try:
            while not stop.is_set() and not self.outbox.closed.is_set():
                taken = self.source.take(self.options.tick)
                now = time.monotonic()
                if taken.error is not None:
                    if stop.is_set():
                        break  # the input went away because we are stopping (SIGTERM to the cgroup)
                    raise taken.error
                if taken.ended and stop.is_set():
                    break  # not the end of the input: a stop (nothing is settled on it)
                consistent = False
                changes = self._feed(taken.records, now) if taken.records else []
                if self.replaying_until is None:
                    changes += self.follower.tick(now)
                if taken.ended:
                    changes += self.follower.finish(now)
                if changes:
                    self._hand_over(changes)
                consistent = True
                if changes or taken.ended or (now - last_save >= self.options.checkpoint_every
                                              and (self.follower.cursor != saved_cursor or self.outbox.dirty)):
                    self.checkpoint()
                    last_save, saved_cursor = now, self.follower.cursor
                if taken.ended:
                    break
        finally:
            # A batch cut short by an error is not saved: a restart reads it again.
            self.source.close()
            if consistent:
                self.checkpoint()
            self.outbox.close(self.options.drain)
            if consistent:
                self.checkpoint()
            self.metrics.close()
        return 0

    def _start(self) -> Start:
        cursor, replay = self.position["cursor"], self.position["replay"]
        if not self.source.resumable:
            self.skip_until = cursor
            return self.source.default
        if replay and cursor:
            self.replaying_until = cursor
            return Start("cursor", replay)
        if cursor:
            return Start("after", cursor)
        return self.source.default

    def _feed(self, records: list[Record], now: float) -> list[dict[str, Any]]:
        if self.options.ignore_own_pid:
            own = os.getpid()
            records = [record for record in records if record.pid != own]
        if self.skip_until is not None:
            records = self._skip(records)
        self.metrics.lines(len(records))
        newest = next((record.timestamp for record in reversed(records) if record.timestamp is not None), None)
        if newest is not None:
            behind = (datetime.now(UTC) - newest).total_seconds() if self.source.backlog() else 0.0
            self.metrics.lag(behind)
        changes: list[dict[str, Any]] = []
        if self.replaying_until is not None:
            done = None
            for index, record in enumerate(records):
                order = cursor_order(record.cursor, self.replaying_until)
                if order is not None and order >= 0:
                    done = index + (1 if order == 0 else 0)
                    break
            if done is None:
                self.follower.feed(records, now, observe=False)
                return []
            self.follower.feed(records[:done], now, observe=False)
            self.replaying_until = None
            records = records[done:]
            changes += self.follower.observe(now)
        changes += self.follower.feed(records, now)
        return changes

    def _skip(self, records: list[Record]) -> list[Record]:
        assert self.skip_until is not None
        for index, record in enumerate(records):
            order = cursor_order(record.cursor, self.skip_until)
            if order is None or order > 0:
                self.skip_until = None
                return records[index:]
        return []

    def _hand_over(self, changes: list[dict[str, Any]]) -> None:
        self.outbox.add(changes)  # durable before the checkpoint that covers them is written
        for change in changes:
            self.metrics.change(change)
            if self.on_change is not None:
                self.on_change(change)
        self.changes += len(changes)
        self.metrics.open(self.tracker.open_counts())

    def checkpoint(self) -> None:
        """Save the cursor, the replay cursor and the tracker (after the outbox files)."""
        if self.state is None:
            return
        if self.replaying_until is None:
            cursor = self.follower.cursor or self.position["cursor"]
            replay = self.follower.anchor() if self.source.resumable else None
            self.position = {"cursor": cursor, "replay": replay, "runs": self.follower.stubs()}
        outbox = self.outbox.checkpoint()
        self.state.save({**self.position, "tracker": self.tracker.to_json(), "outbox": outbox,
                         "source": self.source.name, "saved_at": wall_clock()})
        self.outbox.prune(outbox["delivered"])
        self.metrics.checkpoint(time.time())
