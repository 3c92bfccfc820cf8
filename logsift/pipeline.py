"""The stages wired together: source -> Record -> Event -> Finding -> Incident.

Batch mode and follow mode use the same stage functions; batch mode just reaches the end.
A `Pipeline` is made before its source is opened, so that the source's text readers can be
given `Pipeline.skipping` and leave lines that cannot matter unparsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Collection, Iterable, Iterator, Sequence

from logsift.diagnosis import Diagnoser, Diagnosis
from logsift.group import GroupedEvent, Grouper
from logsift.match import LEVEL_MARK, Matched, Matcher, RegexBudget, level_hits
from logsift.read.text import Skipping
from logsift.records import Record
from logsift.rules import RuleSet
from logsift.rules.prefilter import EMPTY, Prefilter


@dataclass
class Counts:
    """What went through the pipeline: input lines (skipped ones included), the records parsed
    (journal entries), events, and the units, hosts and time window the records name."""

    lines: int = 0
    events: int = 0
    entries: int = 0
    units: set[str] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)
    first: datetime | None = None
    last: datetime | None = None
    prioritized: int = 0  # records that carry a syslog priority (structured input)
    kernel: bool = False  # whether any line of the kernel was read (journalctl -u leaves them out)

    def see(self, record: Record) -> None:
        self.entries += 1
        end = record.line + record.lines - 1
        if end > self.lines:
            self.lines = end
        if record.unit is not None:
            self.units.add(record.unit)
        if record.host is not None:
            self.hosts.add(record.host)
        if record.priority is not None:
            self.prioritized += 1
        if not self.kernel and (record.identifier == "kernel" or " kernel: " in record.message):
            self.kernel = True  # (the second: a paste whose prefix lost its host, "Mar 27 17:40:36 kernel: ")
        if record.timestamp is not None:
            self.widen(record.timestamp)

    def widen(self, stamp: datetime) -> None:
        if self.first is None or stamp < self.first:
            self.first = stamp
        if self.last is None or stamp > self.last:
            self.last = stamp


@dataclass(frozen=True)
class Analysis:
    diagnosis: Diagnosis
    counts: Counts
    rules: RuleSet
    regex_timeouts: int = 0
    regex_budget: RegexBudget | None = None


# A second opinion for events that no rule claimed (the learned fallback): takes a matched
# event and returns it, possibly with model findings added.
Fallback = Callable[[Matched], Matched]


class _Skipping:
    """What the text readers need to skip lines that cannot matter (read.text.Skipping): the
    prefilter's candidates, the grouper's open streams, and a place for the hits of the record
    the reader is about to yield, confirmed once."""

    def __init__(self, matcher: Matcher, grouper: Grouper, counts: Counts) -> None:
        self._counts = counts
        self._matcher = matcher
        self.wanted = grouper.streams
        self.lines = 0  # lines the text readers went through, skipped ones included
        self._record: Record | None = None
        self._hits = EMPTY
        self._plain_only: frozenset[int] | None = None

    @property
    def _prefilter(self) -> Prefilter:
        return self._matcher.prefilter

    @property
    def plain_only(self) -> frozenset[int]:
        """The prefilter entries that matter only on plain text lines, never on a journal entry:
        an excerpt's error-level shapes (match.LEVEL_MARK). Readers leave such candidates
        unparsed where the line is a journal entry."""
        if self._plain_only is None:
            self._plain_only = frozenset(index for index, entry in enumerate(self._prefilter.entries)
                                         if entry.owner == LEVEL_MARK)
        return self._plain_only

    def candidates(self, block: bytes) -> list[tuple[int, list[int]]]:
        if not self._counts.kernel:  # the kernel's healthy lines are skipped, but were they there?
            self._counts.kernel = b" kernel: " in block
        return self._prefilter.candidates(block)

    def found(self, record: Record, ids: Sequence[int]) -> None:
        self._record = record
        self._hits = level_hits(record, self._prefilter.confirm(record.message, ids, record.line) if ids else EMPTY)

    def hits(self, record: Record) -> frozenset[int] | None:
        """The hits of `record` when a reader already told them (`found`), else None."""
        if record is not self._record:
            return None
        self._record = None
        return self._hits

    def done(self, lines: int, first: datetime | None, last: datetime | None, hosts: Collection[str],
             units: Collection[str]) -> None:
        self.lines += lines
        self._counts.hosts.update(hosts)
        self._counts.units.update(units)
        for stamp in (first, last):
            if stamp is not None:
                self._counts.widen(stamp)


class Pipeline:
    """One pass over one input: prefilter, grouping, rules, the fallback, diagnosis.

    Text readers skip unflagged lines while no event is open; an unflagged line could only have
    continued an open event, so the events (and so the diagnosis) are the same as when every
    line is parsed. The records they do yield are grouped one by one, so that `busy` is
    current when the reader asks.
    """

    def __init__(self, rules: RuleSet, matcher: Matcher | None = None, fallback: Fallback | None = None,
                 skip: bool = True, counts: Counts | None = None) -> None:
        self.rules = rules
        self.matcher = matcher or Matcher(rules, near=fallback is not None)
        self.fallback = fallback
        self.grouper = Grouper()
        self.counts = counts if counts is not None else Counts()
        self._skipping = _Skipping(self.matcher, self.grouper, self.counts)
        # Give this to the source's readers; None when every line must be parsed.
        self.skipping: _Skipping | None = self._skipping if skip else None

    def events(self, records: Iterable[Record], batch: int = 2048) -> Iterator[Matched]:
        """Records in, matched events out, in order of their first line. A record whose hits a
        text reader told is grouped at once (the reader looks at the open streams next); others
        are scanned `batch` at a time."""
        counts, grouper, skipping, scan = self.counts, self.grouper, self._skipping, self.matcher.scan
        pending: list[Record] = []

        def drain() -> Iterator[Matched]:
            for record, hits in zip(pending, scan(pending), strict=True):
                for grouped in grouper.feed(record, level_hits(record, hits)):
                    yield self._finish(grouped)
            pending.clear()

        for record in records:
            counts.see(record)
            hits = skipping.hits(record)
            if hits is None:
                pending.append(record)
                if len(pending) >= batch:
                    yield from drain()
                continue
            if pending:
                yield from drain()
            for grouped in grouper.feed(record, hits):
                yield self._finish(grouped)
        if pending:
            yield from drain()
        for grouped in grouper.flush():
            yield self._finish(grouped)
        counts.lines = max(counts.lines, skipping.lines)

    def step(self, records: Sequence[Record]) -> list[Matched]:
        """Follow mode: the records that arrived together in, the events they closed out
        (matched, in order of their first line). Never waits for more input."""
        if not records:
            return []
        matched: list[Matched] = []
        for record, hits in zip(records, self.matcher.scan(records), strict=True):
            self.counts.see(record)
            for grouped in self.grouper.feed(record, level_hits(record, hits)):
                matched.append(self._finish(grouped))
        return matched

    def close(self, events: Iterable[GroupedEvent]) -> list[Matched]:
        """Follow mode: match the events that the grouper let go of (quiet, or flushed)."""
        return [self._finish(grouped) for grouped in events]

    def analyze(self, records: Iterable[Record]) -> Analysis:
        diagnoser = Diagnoser(self.rules)
        for matched in self.events(records):
            diagnoser.feed(matched)
        return Analysis(diagnoser.finish(), self.counts, self.rules, self.matcher.timeouts, self.matcher.budget)

    def _finish(self, grouped: GroupedEvent) -> Matched:
        self.counts.events += 1
        matched = self.matcher.match(grouped)
        return self.fallback(matched) if self.fallback is not None else matched


def match_events(matcher: Matcher, records: Iterable[Record], counts: Counts | None = None,
                 fallback: Fallback | None = None) -> Iterator[Matched]:
    """Matched events of records that were parsed in full (samples, training, explain)."""
    return Pipeline(matcher.rules, matcher, fallback, skip=False, counts=counts).events(records)


def analyze(records: Iterable[Record], rules: RuleSet, matcher: Matcher | None = None,
            fallback: Fallback | None = None) -> Analysis:
    """The diagnosis of records that were parsed in full."""
    return Pipeline(rules, matcher, fallback, skip=False).analyze(records)


# Opens the input given what its text readers may skip (None: parse every line).
Source = Callable[[Skipping | None], Iterable[Record]]


def analyze_source(source: Source, rules: RuleSet, matcher: Matcher | None = None,
                   fallback: Fallback | None = None, skip: bool = True) -> Analysis:
    """The diagnosis of an input that is opened once the pipeline exists, so that its text
    readers can leave lines that cannot matter unparsed (what `logsift FILE` does)."""
    pipeline = Pipeline(rules, matcher, fallback, skip)
    return pipeline.analyze(source(pipeline.skipping))
