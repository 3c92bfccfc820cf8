"""The stages wired together: source -> Record -> Event -> Finding -> Incident.

Batch mode and follow mode use the same stage functions; batch mode just reaches the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from logsift.diagnosis import Diagnoser, Diagnosis
from logsift.group import GroupedEvent, Grouper
from logsift.match import Matched, Matcher
from logsift.read.text import ACCELERATION
from logsift.records import Record
from logsift.rules import RuleSet


@dataclass
class Counts:
    lines: int = 0
    events: int = 0


@dataclass(frozen=True)
class Analysis:
    diagnosis: Diagnosis
    counts: Counts
    rules: RuleSet
    regex_timeouts: int = 0
    warnings: tuple[str, ...] = ()  # what the readers skipped or cut, one sentence each


# A second opinion for events that no rule claimed (the learned fallback): takes a matched
# event and returns it, possibly with model findings added.
Fallback = Callable[[Matched], Matched]


class _Acceleration:
    """What the text reader needs to skip lines that cannot matter (see TextReader.read)."""

    def __init__(self, matcher: Matcher, grouper: Grouper) -> None:
        self.used = False
        self.lines = 0  # lines the text readers went through, skipped ones included
        self._scan = matcher.prefilter.scan
        self._grouper = grouper

    def flagged(self, batch: list[str]) -> list[bool]:
        self.lines += len(batch)
        return [bool(hits) for hits in self._scan(batch)]

    def busy(self) -> bool:
        return bool(self._grouper.open)


def match_events(
    matcher: Matcher,
    records: Iterable[Record],
    counts: Counts,
    fallback: Fallback | None = None,
    accelerate: bool = True,
) -> Iterator[Matched]:
    """Records in, matched events out: the prefilter, grouping, rule and fallback stages.

    Text readers skip unflagged lines while no event is open; an unflagged line could only have
    continued an open event, so the events (and so the diagnosis) are the same as when every
    line is parsed. The records they do yield are annotated one by one, so that `busy` is
    current when the reader asks.
    """
    grouper = Grouper()
    acceleration = _Acceleration(matcher, grouper)
    token = ACCELERATION.set(acceleration if accelerate else None)

    def counted() -> Iterator[Record]:
        for record in records:
            end = record.line + record.lines - 1
            if end > counts.lines:
                counts.lines = end
            yield record

    def finish(grouped: GroupedEvent) -> Matched:
        counts.events += 1
        matched = matcher.match(grouped)
        return fallback(matched) if fallback is not None else matched

    try:
        for record, hits in matcher.annotate(counted(), adaptive=acceleration):
            for grouped in grouper.feed(record, hits):
                yield finish(grouped)
        for grouped in grouper.flush():
            yield finish(grouped)
        counts.lines = max(counts.lines, acceleration.lines)
    finally:
        ACCELERATION.reset(token)


def analyze(
    records: Iterable[Record],
    rules: RuleSet,
    matcher: Matcher | None = None,
    fallback: Fallback | None = None,
    accelerate: bool = True,
) -> Analysis:
    matcher = matcher or Matcher(rules)
    counts = Counts()
    diagnoser = Diagnoser(rules)
    for matched in match_events(matcher, records, counts, fallback, accelerate):
        diagnoser.feed(matched)
    return Analysis(diagnoser.finish(), counts, rules, matcher.timeouts)
