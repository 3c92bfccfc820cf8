"""The stages wired together: source -> Record -> Event -> Finding -> Incident.

Batch mode and follow mode use the same stage functions; batch mode just reaches the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from logsift.diagnosis import Diagnoser, Diagnosis
from logsift.grouping import GroupedEvent, Grouper
from logsift.matching import Matched, Matcher
from logsift.records import Record
from logsift.rules import RuleSet


@dataclass
class Counts:
    lines: int = 0
    records: int = 0
    events: int = 0


@dataclass(frozen=True)
class Analysis:
    diagnosis: Diagnosis
    counts: Counts
    rules: RuleSet
    regex_timeouts: int = 0


# A second opinion for events that no rule claimed (the learned fallback): takes a matched
# event and returns it, possibly with model findings added.
Fallback = Callable[[Matched], Matched]


def match_events(
    matcher: Matcher, records: Iterable[Record], counts: Counts, fallback: Fallback | None = None
) -> Iterator[Matched]:
    """Records in, matched events out: the prefilter, grouping, rule and fallback stages."""
    grouper = Grouper()

    def counted() -> Iterator[Record]:
        for record in records:
            counts.records += 1
            end = record.line + record.lines - 1
            if end > counts.lines:
                counts.lines = end
            yield record

    def finish(grouped: GroupedEvent) -> Matched:
        counts.events += 1
        matched = matcher.match(grouped)
        return fallback(matched) if fallback is not None else matched

    for record, hits in matcher.annotate(counted()):
        for grouped in grouper.feed(record, hits):
            yield finish(grouped)
    for grouped in grouper.flush():
        yield finish(grouped)


def analyze(
    records: Iterable[Record], rules: RuleSet, matcher: Matcher | None = None, fallback: Fallback | None = None
) -> Analysis:
    matcher = matcher or Matcher(rules)
    counts = Counts()
    diagnoser = Diagnoser(rules)
    for matched in match_events(matcher, records, counts, fallback):
        diagnoser.feed(matched)
    return Analysis(diagnoser.finish(), counts, rules, matcher.timeouts)
