"""Why an event got its class: every decision of the pipeline for one event, for `logsift explain`.

For the event: its lines, kind and stream; the rules the prefilter selected for it (and by which
literal); the rules that matched (line and captures). For the run it belongs to: every finding
and its fate (root cause, explained by another finding, outranked, not a cause), and why the
winner won. The ranking mirrors `Diagnoser.choose_root`; the winner itself is always the one
the diagnosis chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from logsift.diagnosis import Diagnoser, Diagnosis
from logsift.exceptions import UsageError
from logsift.match import REGEX_TIMEOUT, Fact, Matched, Matcher
from logsift.pipeline import Counts, Fallback, match_events
from logsift.records import Event, Finding, Record, Run, Severity
from logsift.rules import RuleSet


@dataclass(frozen=True, slots=True)
class Tried:
    """A rule the prefilter selected for the event: one of its literals occurs on `line`."""

    rule_id: str
    kind: str  # "match" or "context"
    line: int
    literal: str


@dataclass(frozen=True, slots=True)
class Dropped:
    """A rule whose regex matched a line that another rule's finding on the same line explains:
    the matcher keeps only the explaining reading of a line."""

    rule_id: str
    line: int
    by: str


@dataclass(frozen=True, slots=True)
class Fate:
    """What became of one finding of the run."""

    finding: Finding
    status: str  # "root cause", "repeat", "explained", "outranked", "not a cause"
    reason: str


@dataclass(frozen=True)
class EventExplanation:
    event: Event
    tried: tuple[Tried, ...]
    matched: tuple[Finding, ...]
    dropped: tuple[Dropped, ...]
    facts: tuple[Fact, ...]
    run: Run | None
    fates: tuple[Fate, ...]
    why: str  # why the run's root cause won; "" when the run did not fail

    @property
    def not_matched(self) -> tuple[str, ...]:
        found = {finding.rule_id for finding in self.matched} | {item.rule_id for item in self.dropped}
        return tuple(sorted({tried.rule_id for tried in self.tried if tried.kind == "match"} - found))


@dataclass(frozen=True)
class LineOutsideEvents:
    """The asked-for line belongs to no event: the prefilter selected no rule for it."""

    line: int
    text: str


Explanation = EventExplanation | LineOutsideEvents


def explain(records: Iterable[Record], rules: RuleSet, line: int | None = None,
            fallback: Fallback | None = None) -> list[Explanation]:
    """The event holding `line`, or (without a line) the root-cause event of each failed run.

    Every line is parsed (no fast path), so that a line outside every event can be shown."""
    matcher = Matcher(rules, near=fallback is not None)
    counts = Counts()
    diagnoser = Diagnoser(rules)  # as in pipeline.analyze, but keeping the events
    events: list[Matched] = []
    seen: list[Record] = []
    for matched in match_events(matcher, _watch(records, line, seen), counts, fallback):
        diagnoser.feed(matched)
        events.append(matched)
    diagnosis = diagnoser.finish()
    if line is not None:
        if line < 1 or line > counts.lines:
            raise UsageError(f"--line {line} is outside the input (lines 1 to {counts.lines})")
        for matched in events:
            if any(_holds(record, line) for record in matched.event.event.records):
                return [_explain_event(matched, diagnosis, rules)]
        text = ""
        if seen:
            record = seen[0]
            text = record.message.split("\n")[line - record.line] if "\n" in record.message else record.message
        return [LineOutsideEvents(line, text)]
    explanations: list[Explanation] = []
    for run in diagnosis.runs:
        if run.failed and run.root_cause is not None:
            # By its first record: diagnosis keeps a slimmer copy of the events of past runs.
            root_first = run.root_cause.event.first
            for matched in events:
                if matched.event.event.first is root_first:
                    explanations.append(_explain_event(matched, diagnosis, rules))
                    break
    return explanations


def _watch(records: Iterable[Record], line: int | None, seen: list[Record]) -> Iterator[Record]:
    for record in records:
        if line is not None and not seen and _holds(record, line):
            seen.append(record)
        yield record


def _holds(record: Record, line: int) -> bool:
    return record.line <= line < record.line + record.lines


def _explain_event(matched: Matched, diagnosis: Diagnosis, rules: RuleSet) -> EventExplanation:
    event = matched.event.event
    run = _run_of(event, diagnosis)
    fates, why = _fates(run, rules) if run is not None else ((), "")
    tried = tuple(_tried(matched, rules))
    return EventExplanation(
        event=event,
        tried=tried,
        matched=tuple(matched.findings),
        dropped=tuple(_dropped(matched, tried, rules)),
        facts=tuple(_distinct(matched.facts)),
        run=run,
        fates=fates,
        why=why,
    )


def _distinct(facts: Iterable[Fact]) -> Iterator[Fact]:
    """The first line that gave each rule each set of values."""
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for fact in facts:
        key = (fact.rule_id, tuple(sorted(fact.fields.items())))
        if key not in seen:
            seen.add(key)
            yield fact


def _tried(matched: Matched, rules: RuleSet) -> Iterator[Tried]:
    done: set[tuple[str, str]] = set()
    # Every rule whose literals occur, not only the hits (which are the lines a regex matched).
    owners = range(2 * len(rules.rules))
    for record in matched.event.event.records:
        lowered = record.message.lower()
        for owner in owners:
            rule = rules.rules[owner // 2]
            kind = "match" if owner % 2 == 0 else "context"
            if (rule.id, kind) in done:
                continue
            patterns = rule.matches if kind == "match" else rule.context
            for pattern in patterns:
                literal = next((item for item in pattern.literals if item in lowered), None)
                if literal is not None:
                    offset = lowered[: lowered.find(literal)].count("\n")
                    done.add((rule.id, kind))
                    yield Tried(rule.id, kind, record.line + offset, literal)
                    break


def _dropped(matched: Matched, tried: tuple[Tried, ...], rules: RuleSet) -> Iterator[Dropped]:
    found = {finding.rule_id for finding in matched.findings}
    by_line: dict[int, list[str]] = {}
    for finding in matched.findings:
        by_line.setdefault(finding.line, []).append(finding.rule_id)
    for rule_id in dict.fromkeys(item.rule_id for item in tried if item.kind == "match"):
        if rule_id in found:
            continue
        rule = rules.by_id[rule_id]
        for number, text in _lines(matched.event.event):
            explainers = [other for other in by_line.get(number, ()) if rule_id in rules.by_id[other].explains]
            if explainers and any(_search(pattern, text) for pattern in rule.matches):
                yield Dropped(rule_id, number, explainers[0])
                break


def _lines(event: Event) -> Iterator[tuple[int, str]]:
    for record in event.records:
        for offset, text in enumerate(record.message.split("\n")):
            yield record.line + offset, text


def _search(pattern: Any, text: str) -> bool:
    try:
        return pattern.compiled.search(text, timeout=REGEX_TIMEOUT) is not None
    except TimeoutError:
        return False


def _run_of(event: Event, diagnosis: Diagnosis) -> Run | None:
    for run in diagnosis.runs:
        if any(finding.event.first is event.first for finding in run.findings):
            return run
    first = event.first
    inside = [
        run for run in diagnosis.runs
        if run.first_line <= event.line <= run.last_line and run.host == first.host
        and (first.unit is None or run.unit == first.unit)
    ]
    return inside[-1] if inside else None


def _fates(run: Run, rules: RuleSet) -> tuple[tuple[Fate, ...], str]:
    """Each finding's fate in the run, and why the root cause won."""
    winner = run.root_cause
    causes = [finding for finding in run.findings if finding.severity >= Severity.WARNING]
    present = {finding.rule_id for finding in causes}
    explained: dict[str, Finding] = {}
    # The strongest finding that explains a class gets the credit for it.
    for finding in sorted(causes, key=_rank, reverse=True):
        rule = rules.by_id.get(finding.rule_id)
        for other in rule.explains if rule is not None else ():
            if other != finding.rule_id and other in present and other not in explained:
                explained[other] = finding
    candidates = [finding for finding in causes if finding.rule_id not in explained] or causes
    ranked = sorted(candidates, key=_rank, reverse=True)
    fates: list[Fate] = []
    for finding in run.findings:
        if winner is not None and _same(finding, winner):
            fates.append(Fate(finding, "root cause", f"priority {finding.priority}, {finding.severity.label}"))
        elif winner is not None and finding.rule_id == winner.rule_id:
            fates.append(Fate(finding, "repeat", f"the root cause's class again; line {winner.line} is the evidence"))
        elif finding.severity < Severity.WARNING:
            fates.append(Fate(finding, "not a cause", f"severity {finding.severity.label} is below warning"))
        elif finding.rule_id in explained and finding not in candidates:
            by = explained[finding.rule_id]
            fates.append(Fate(finding, "explained", f"a symptom: {by.rule_id} (line {by.line}) explains it"))
        else:
            fates.append(Fate(finding, "outranked", f"priority {finding.priority}, {finding.severity.label}"))
    if not run.failed:
        return tuple(fates), ""
    if winner is None:
        return tuple(fates), "no finding of warning severity or above: the cause is not in these lines"
    return tuple(fates), _why(winner, ranked, explained)


def _rank(finding: Finding) -> tuple[int, int, int]:
    return (finding.priority, finding.severity, -finding.line)


def _same(one: Finding, other: Finding) -> bool:
    return one.rule_id == other.rule_id and one.line == other.line


def _why(winner: Finding, ranked: list[Finding], explained: dict[str, Finding]) -> str:
    parts = []
    symptoms = sorted(rule_id for rule_id, by in explained.items() if by.rule_id == winner.rule_id)
    if symptoms:
        parts.append(f"it explains {', '.join(symptoms)}, which therefore count as symptoms")
    if not ranked or not _same(ranked[0], winner):
        parts.append("the diagnosis ranks findings after the service reported ready first")
        return "; ".join(parts)
    others = [finding for finding in ranked[1:] if finding.rule_id != winner.rule_id]
    if not others:
        parts.append("it is the only cause left" if explained else "it is the only cause found in the run")
        if len(ranked) > 1:
            parts.append(f"its earliest finding (line {winner.line}) is the evidence")
        return "; ".join(parts)
    runner = others[0]
    if winner.priority > runner.priority:
        parts.append(f"highest priority, {winner.priority} over {runner.rule_id} ({runner.priority})")
    elif winner.severity > runner.severity:
        parts.append(f"same priority {winner.priority} as {runner.rule_id}, higher severity "
                     f"({winner.severity.label} over {runner.severity.label})")
    else:
        parts.append(f"same priority {winner.priority} and severity as {runner.rule_id}; the earliest line "
                     f"({winner.line} before {runner.line})")
    return "; ".join(parts)


__all__ = ["Dropped", "EventExplanation", "Explanation", "Fate", "LineOutsideEvents", "Tried", "explain"]
