"""The stages of batch mode, fed as the journal grows: records in, alert state changes out.

The same Pipeline (prefilter, grouping, rules, the fallback) and Diagnoser as `logsift FILE`;
only the driving differs. Batch mode exhausts its input; here each batch of records that arrived
together is pushed through at once (`Pipeline.step`) and nothing waits for more input:

- an event that nothing continues is closed after `idle` seconds of wall time
  (`Grouper.close_quiet`), so a traceback is diagnosed without waiting for the next line, and at
  once when systemd says that the unit's process exited (nothing more will continue it);
- after each batch, only the units whose runs changed are looked at again
  (`Diagnoser.take_changed`, `Diagnoser.progress`), and the Tracker turns what is new into changes;
- runs that have been reported are forgotten but the last two (`Diagnoser.forget`), and units
  whose runs all ended a few minutes of journal time ago, so memory stays flat over days of a
  crash loop and of ssh sessions.

`anchor()` is where a restart must read the journal again from so that the stages are rebuilt as
they are now: the first line of every run still undecided, every open or unreleased event and
every kernel line not yet given to a run, no further back than `window` of journal time.
"""

from __future__ import annotations

from collections import deque
from datetime import UTC, datetime, timedelta
from typing import Any, Iterable, Sequence

from logsift.diagnosis import Diagnoser, lifecycle
from logsift.match import Matched
from logsift.pipeline import Counts, Fallback, Pipeline
from logsift.records import Record
from logsift.rules import RuleSet
from logsift.watch.tracker import Tracker

IDLE = 0.5  # seconds of wall time after which an event nothing continued is closed
WINDOW = timedelta(minutes=30)  # how far back in journal time a restart reads again, at most
_ENDS = ("exited", "failed", "failed-start", "timeout", "limit")
_FAR = datetime.max.replace(tzinfo=UTC)
SWEEP = timedelta(seconds=10)  # of journal time between looks at the units that linger


class _Tally(Counts):
    """What follow mode counts of what it read: entries and lines, not the set of every unit and
    host ever seen (one scope per ssh session, for months)."""

    def see(self, record: Record) -> None:
        self.entries += 1
        self.lines = max(self.lines, record.line + record.lines - 1)


class Follower:
    def __init__(self, rules: RuleSet, tracker: Tracker, fallback: Fallback | None = None, idle: float = IDLE,
                 window: timedelta = WINDOW) -> None:
        self.pipeline = Pipeline(rules, fallback=fallback, skip=False, counts=_Tally())
        self.diagnoser = Diagnoser(rules)
        self.tracker = tracker
        self.idle = idle
        self.window = window
        self.arrivals: deque[tuple[float, int]] = deque()  # (when, last input line) per batch
        self.latest: datetime | None = None  # the newest journal time read
        self.cursor: str | None = None  # the cursor of the last record read
        self.records = 0
        self.lingering: set[tuple[str | None, str | None]] = set()  # units whose runs all ended (Diagnoser.forget)
        self.swept: datetime | None = None  # the journal time lingering units were last looked at

    def feed(self, records: Sequence[Record], now: float, observe: bool = True) -> list[dict[str, Any]]:
        """Push a batch through the stages; the changes it made (none when not `observe`: a
        restart reading again what it had already reported)."""
        if not records:
            return []
        matched = self.pipeline.step(records)
        ended = self._ended(records)
        if ended:
            grouper = self.pipeline.grouper
            streams = [key for key in grouper.open if (key[0], key[1]) in ended]
            matched += self.pipeline.close(grouper.close_streams(streams))
        self._diagnose(matched)
        last = records[-1]
        self.arrivals.append((now, last.line + last.lines - 1))
        self.records += len(records)
        for record in reversed(records):
            if record.cursor is not None:
                self.cursor = record.cursor
                break
        for record in records:
            if record.timestamp is not None and (self.latest is None or record.timestamp > self.latest):
                self.latest = record.timestamp
        return self.observe(now) if observe else []

    def tick(self, now: float, observe: bool = True) -> list[dict[str, Any]]:
        """Time passed with no new record: close the events that went quiet, settle runs."""
        quiet = None
        while self.arrivals and now - self.arrivals[0][0] >= self.idle:
            quiet = self.arrivals.popleft()[1]
        if quiet is not None and self.pipeline.grouper.open:
            self._diagnose(self.pipeline.close(self.pipeline.grouper.close_quiet(quiet)))
        return self.observe(now) if observe else []

    def finish(self, now: float) -> list[dict[str, Any]]:
        """The input ended: close everything, and every failed run counts."""
        self._diagnose(self.pipeline.close(self.pipeline.grouper.flush()))
        self.diagnoser.place_host_events(_FAR)
        return self.observe(now, final=True, every=True)

    def observe(self, now: float, final: bool = False, every: bool = False) -> list[dict[str, Any]]:
        diagnoser = self.diagnoser
        if diagnoser.host_events:
            diagnoser.place_host_events(self.latest)
        keys = diagnoser.take_changed() | self.tracker.waiting_keys()
        if every:
            keys |= set(diagnoser.runs)
        changes: list[dict[str, Any]] = []
        for key in sorted(keys, key=lambda key: (key[0] or "", key[1] or "")):
            changes.extend(self.tracker.observe(key, diagnoser.progress(key), now, final))
            self._forget(key)
        if self.lingering and self.latest is not None and (self.swept is None or self.latest - self.swept >= SWEEP):
            self.swept = self.latest
            for key in list(self.lingering):
                self._forget(key)
        return changes

    def _forget(self, key: tuple[str | None, str | None]) -> None:
        if self.diagnoser.forget(key, latest=self.latest):
            self.lingering.add(key)
            return
        self.lingering.discard(key)
        if key not in self.diagnoser.runs:
            self.tracker.forget(key)

    def anchor(self) -> str | None:
        """The cursor a restart reads again from (inclusive), or None: nothing undecided."""
        found: list[tuple[int, str, datetime | None]] = []
        for key in self.diagnoser.runs:
            for progress in self.diagnoser.progress(key):
                if progress.replay is not None:
                    found.append(progress.replay)
        records = [matched.event.event.first for matched in self.diagnoser.pending_host_events()]
        grouper = self.pipeline.grouper
        records += [opened.records[0] for opened in grouper.open.values()]
        records += [item[2].event.first for item in grouper.ready]
        found += [(record.line, record.cursor, record.timestamp) for record in records if record.cursor]
        oldest = self.latest - self.window if self.latest is not None else None
        kept = [item for item in found if oldest is None or item[2] is None or item[2] >= oldest]
        return min(kept, key=lambda item: item[0])[1] if kept else None

    def stubs(self) -> list[dict[str, Any]]:
        """The runs still open whose beginning a restart will not read again (`Diagnoser.resume`)."""
        found: list[dict[str, Any]] = []
        for key in self.diagnoser.runs:
            progress = self.diagnoser.progress(key)
            if not progress or progress[-1].closed:
                continue
            last = progress[-1]
            if last.replay is not None and last.replay[0] == last.run.first_line:
                continue  # read again from its first line
            run = last.run
            found.append({"host": run.host, "unit": run.unit, "invocation": run.invocation,
                          "started": run.started.isoformat() if run.started is not None else None,
                          "observed_start": run.observed_start})
        return found

    def resume(self, stubs: Iterable[dict[str, Any]]) -> None:
        for stub in stubs:
            started = datetime.fromisoformat(stub["started"]) if stub.get("started") else None
            self.diagnoser.resume(stub.get("host"), stub.get("unit"), started, stub.get("invocation"),
                                  bool(stub.get("observed_start")))

    def _diagnose(self, matched: Iterable[Matched]) -> None:
        for item in matched:
            self.diagnoser.feed(item)

    @staticmethod
    def _ended(records: Sequence[Record]) -> set[tuple[str | None, str | None]]:
        """Units whose main process systemd says exited in this batch."""
        ended: set[tuple[str | None, str | None]] = set()
        for record in records:
            if record.is_systemd and record.message[:1] != " ":
                parsed = lifecycle.parse(record.message)
                if parsed is not None and parsed.what in _ENDS and parsed.unit:
                    ended.add((record.host, parsed.unit))
        return ended
