"""The post-mortem's story of each incident, as values the Markdown and HTML reporters render.

Per incident: a summary a manager reads (unit, hosts, first failure, resolved or still failing,
failed runs, downtime); the runs, with identical consecutive runs folded into one group (a crash
loop of forty restarts is one row with a count); each group's root cause with its evidence and
the lines around it; what changed between attempts (facts.toml, compared run by run); what the
healthy run had; the symptoms that were not causes. Text from the log is made printable and
redacted here (`safe`); escaping for the output format is the reporter's job.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from logsift.diagnosis import Noted
from logsift.diagnosis.changes import Change, Fix, changes, downtime, first_values, fix
from logsift.records import Finding, Incident, Run, RunFact
from logsift.report.common import RenderOptions, clip, fields_for
from logsift.report.document import Report
from logsift.report.terminal import blocks, context_command
from logsift.rules import Rule
from logsift.sanitize import clean, clean_block

CONTEXT_BEFORE = 3  # lines shown around an evidence line, from the event it belongs to
CONTEXT_AFTER = 3
MAX_CONTEXT_TEXT = 300


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    text: str
    evidence: bool = False


# Rule text with this log's values, as spans: (is it `code` in the rule's template, the text). The
# template is trusted and marks code with backticks; a value from the log may hold anything, so
# the spans are cut from the template before the values go in, and each reporter escapes a span
# for where it stands (Markdown prose, a Markdown code span, HTML).
Spans = tuple[tuple[bool, str], ...]


@dataclass(frozen=True)
class Cause:
    """A root cause as the report tells it: the rule's text with this log's values, the evidence
    line with the lines around it, and the lines that gave the other values."""

    finding: Finding
    described: dict[str, Any]
    window: tuple[Line, ...]
    context: tuple[Line, ...]
    where: str  # by whom the evidence line was logged
    title: Spans
    explanation: tuple[Spans, ...]  # paragraphs
    remediation: tuple[Spans, ...]
    avoid: tuple[Spans, ...]
    explained_in: str | None = None  # the group whose section already explains this same text

    @property
    def rule_id(self) -> str:
        return self.finding.rule_id

    @property
    def plain_title(self) -> str:
        return "".join(text for _, text in self.title)

    @property
    def references(self) -> tuple[str, ...]:
        return tuple(str(item) for item in self.described["references"])

    @property
    def suggestion(self) -> bool:
        return bool(self.described.get("suggestion"))

    @property
    def severity(self) -> str:
        return str(self.described["severity"])


@dataclass(frozen=True)
class Group:
    """Consecutive runs that tell the same thing: one outcome, one cause, the same facts."""

    first: int  # 1-based number of its first run in the incident
    runs: tuple[Run, ...]
    cause: Cause | None

    @property
    def count(self) -> int:
        return len(self.runs)

    @property
    def label(self) -> str:
        return str(self.first) if self.count == 1 else f"{self.first}-{self.first + self.count - 1}"

    @property
    def run(self) -> Run:
        return self.runs[0]

    @property
    def outcome(self) -> str:
        return self.run.outcome

    @property
    def time_to_failure(self) -> tuple[float, float] | None:
        """The shortest and longest time to failure of its runs."""
        values = [run.time_to_failure for run in self.runs if run.time_to_failure is not None]
        return (min(values), max(values)) if values else None

    @property
    def exit(self) -> str:
        run = self.run
        parts = [part for part in (run.exit, f"result {run.result}" if run.result else None) if part]
        return clean(", ".join(parts))

    @property
    def reloads(self) -> int:
        return sum(1 for run in self.runs if run.reload is not None)

    @property
    def ready_after(self) -> float | None:
        run = self.run
        if run.ready is None or run.started is None or run.ready.record.timestamp is None or not run.observed_start:
            return None
        return max(0.0, (run.ready.record.timestamp - run.started).total_seconds())


@dataclass(frozen=True)
class Cell:
    value: str | None  # None: the run did not show this fact
    mark: str = ""  # "new" (first shown after run 1), "changed"
    before: str | None = None


@dataclass(frozen=True)
class Changes:
    """The run-by-run table of the facts that differed, and the facts that never did."""

    columns: tuple[tuple[str, str], ...]  # (name, label) of each fact that changed
    rows: tuple[tuple[Group, tuple[Cell, ...]], ...]
    listed: tuple[Change, ...]
    same: tuple[RunFact, ...]  # shown by some run, the same in every run that showed it
    reloads: tuple[int, ...]  # runs that started after a daemon-reload


@dataclass(frozen=True)
class Symptom:
    rule_id: str
    title: str
    runs: tuple[int, ...]
    count: int
    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class Chapter:
    """One incident."""

    number: int
    incident: Incident
    groups: tuple[Group, ...]
    changes: Changes
    fix: Fix | None
    downtime: float | None
    downtime_complete: bool
    symptoms: tuple[Symptom, ...]
    findings: tuple[Noted, ...]  # on this unit and host, in runs that did not fail
    command: str | None  # journalctl that shows the last failed run in full
    fleet: tuple[str, ...] = ()  # other hosts where the same unit failed with the same cause

    @property
    def unit(self) -> str:
        return clean(self.incident.unit or "(unit unknown)")

    @property
    def host(self) -> str | None:
        return clean(self.incident.host) if self.incident.host else None

    @property
    def failed(self) -> int:
        return len(self.incident.failed_runs)

    @property
    def causes(self) -> tuple[str, ...]:
        """The root-cause classes of the failed runs, in order, repeats folded."""
        seen: list[str] = []
        for group in self.groups:
            if group.cause is not None and (not seen or seen[-1] != group.cause.rule_id):
                seen.append(group.cause.rule_id)
        return tuple(seen)

    @property
    def first_failure(self) -> datetime | None:
        failed = self.incident.failed_runs
        return failed[0].ended if failed else None

    @property
    def resolved_by(self) -> Group | None:
        last = self.groups[-1] if self.groups else None
        return last if self.incident.resolved and last is not None and last.outcome == "healthy" else None


@dataclass(frozen=True)
class Story:
    report: Report
    chapters: tuple[Chapter, ...]
    findings: tuple[Noted, ...]  # on units with no incident
    fleets: tuple[tuple[str, str, tuple[str, ...]], ...]  # (unit, class, hosts) with 2+ hosts


def story(report: Report, options: RenderOptions) -> Story:
    chapters: list[Chapter] = []
    told: dict[tuple[str, str], str] = {}  # (class, explanation) -> where it was explained
    fleets = []
    hosts_of: dict[int, tuple[str, ...]] = {}
    for block in blocks(report):
        if len(block.incidents) > 1:
            hosts = tuple(clean(incident.host or "?") for incident in block.incidents)
            root = block.first.root_cause
            fleets.append((clean(block.first.unit or "(unit unknown)"), root.rule_id if root else "?", hosts))
            for incident in block.incidents:
                hosts_of[id(incident)] = tuple(host for host in hosts if host != clean(incident.host or "?"))
    for number, incident in enumerate(report.incidents, 1):
        chapters.append(_chapter(report, options, number, incident, told, hosts_of.get(id(incident), ())))
    in_chapters = {(incident.host, incident.unit) for incident in report.incidents}
    others = tuple(noted for noted in report.findings if (noted.host, noted.unit) not in in_chapters)
    return Story(report, tuple(chapters), others, tuple(fleets))


def _chapter(report: Report, options: RenderOptions, number: int, incident: Incident,
             told: dict[tuple[str, str], str], fleet: tuple[str, ...]) -> Chapter:
    groups = _groups(report, incident, number, told)
    seconds, complete = downtime(incident)
    findings = tuple(noted for noted in report.findings
                     if noted.host == incident.host and noted.unit == incident.unit)
    return Chapter(
        number=number, incident=incident, groups=groups, changes=_changes(incident, groups), fix=fix(incident),
        downtime=seconds, downtime_complete=complete, symptoms=_symptoms(report, incident), findings=findings,
        command=context_command(incident, report.origin, options), fleet=fleet,
    )


def _groups(report: Report, incident: Incident, chapter: int, told: dict[tuple[str, str], str]) -> tuple[Group, ...]:
    groups: list[Group] = []
    current: list[Run] = []
    start = 1
    for number, run in enumerate(incident.runs, 1):
        if current and not _same(current[-1], run):
            groups.append(_group(report, incident, start, current, chapter, told))
            current, start = [], number
        current.append(run)
    if current:
        groups.append(_group(report, incident, start, current, chapter, told))
    return tuple(groups)


def _same(first: Run, second: Run) -> bool:
    """Runs that fold into one row: the same outcome, cause, evidence wording, exit and facts."""
    def key(run: Run) -> tuple[object, ...]:
        root = run.root_cause
        facts = {name: fact.value for name, fact in first_values(run).items()}
        return (run.outcome, run.exit, run.result, root.rule_id if root else None,
                _masked(root.text) if root else None, facts, run.reload is not None)

    return first.outcome == "failed" and key(first) == key(second)


def _masked(text: str) -> str:
    """Evidence text without the numbers that differ from run to run (pids, times)."""
    return "".join("0" if char.isdigit() else char for char in text)


def _group(report: Report, incident: Incident, start: int, runs: list[Run], chapter: int,
           told: dict[tuple[str, str], str]) -> Group:
    label = str(start) if len(runs) == 1 else f"{start}-{start + len(runs) - 1}"
    root = runs[0].root_cause
    cause = None
    if root is not None:
        cause = _cause(report, root, incident.unit)
        key = (root.rule_id, str(cause.described["explanation"]))
        where = f"incident {chapter}, run{'s' if len(runs) > 1 else ''} {label}"
        if key in told:
            cause = replace(cause, explained_in=told[key])
        else:
            told[key] = where
    return Group(start, tuple(runs), cause)


def _cause(report: Report, finding: Finding, unit: str | None) -> Cause:
    described = report.describe(finding, unit)
    rule = report.rules.by_id.get(finding.rule_id)
    if rule is None:
        title: Spans = ((False, clean(str(described["title"]))),)
        explanation: tuple[Spans, ...] = ()
        remediation: tuple[Spans, ...] = ()
        avoid: tuple[Spans, ...] = ()
    else:
        values = fields_for(finding, unit)
        title = spans(rule, rule.title, values)
        explanation = tuple(spans(rule, paragraph, values) for paragraph in rule.explanation.split("\n\n")
                            if paragraph.strip())
        remediation = tuple(spans(rule, step, values) for step in rule.remediation)
        avoid = tuple(spans(rule, step, values) for step in rule.avoid)
    return Cause(finding, described, _window(finding), _context_lines(finding), _where(finding), title,
                 explanation, remediation, avoid)


def spans(rule: Rule, template: str, values: dict[str, str]) -> Spans:
    """A rule template filled in, cut into prose and `code` where the template has backticks."""
    parts = template.split("`")
    if len(parts) % 2 == 0:  # an unbalanced backtick: the template has no code spans to trust
        parts = [template.replace("`", "'")]
    found: list[tuple[bool, str]] = []
    for index, part in enumerate(parts):
        if not part:
            continue
        text = clean(rule.render(part, values), lines=True)
        code = index % 2 == 1
        found.append((code, text if code else _flat(text)))
    return tuple(found)


def _flat(text: str) -> str:
    """Prose of a template on one line: runs of white space as one space, ends kept."""
    flat = " ".join(text.split())
    if flat and text[:1].isspace():
        flat = " " + flat
    if flat and text[-1:].isspace():
        flat += " "
    return flat or (" " if text else "")


def _window(finding: Finding) -> tuple[Line, ...]:
    """The evidence line and the lines around it, from the event it was found in."""
    numbered: list[tuple[int, int, str]] = []
    for record in finding.event.records:
        for offset, text in enumerate(record.message.split("\n")):
            line = record.line + offset if record.lines > 1 else record.line
            numbered.append((record.entry if record.entry is not None else line, line, text))
    # Cleaned together: a secret over several lines (a PEM key) is hidden on each of them.
    texts = clean_block([text for _, _, text in numbered])
    lines = [Line(shown, clip(text.rstrip(), MAX_CONTEXT_TEXT), line == finding.line)
             for (shown, line, _), text in zip(numbered, texts, strict=True)]
    at = next((index for index, line in enumerate(lines) if line.evidence), None)
    if at is None:
        return (Line(finding.number, clip(clean(finding.text), MAX_CONTEXT_TEXT), True),)
    # The same input line may be one of several lines of a record: mark only the first.
    marked = [Line(line.number, line.text, index == at) for index, line in enumerate(lines)]
    return tuple(marked[max(0, at - CONTEXT_BEFORE): at + CONTEXT_AFTER + 1])


def _context_lines(finding: Finding) -> tuple[Line, ...]:
    return tuple(Line(line, clip(clean(text), MAX_CONTEXT_TEXT)) for line, text in finding.context)


def _where(finding: Finding) -> str:
    record = finding.record
    parts = []
    if record.identifier:
        parts.append(clean(f"{record.identifier}[{record.pid}]" if record.pid is not None else record.identifier))
    if record.invocation:
        parts.append(f"invocation {clean(record.invocation)}")
    return ", ".join(parts)


def _shown(fact: RunFact) -> RunFact:
    """A fact as the reports show it: its value and label (which may hold a key from the log,
    an Environment= name) through the sanitiser."""
    return replace(fact, label=clean(fact.label), value=clean(fact.value))


def _change_shown(change: Change) -> Change:
    return replace(change, label=clean(change.label), after=clean(change.after), fact=_shown(change.fact),
                   before=clean(change.before) if change.before is not None else None)


def _changes(incident: Incident, groups: tuple[Group, ...]) -> Changes:
    # Values compared raw (a control byte is a difference too), shown cleaned.
    found = tuple(_change_shown(change) for change in changes(incident.runs))
    names = {change.name for change in found}
    order: dict[str, tuple[int, str]] = {}
    for run in incident.runs:
        for fact in run.facts:
            order.setdefault(fact.name, (len(order), fact.label))
    columns = tuple((name, clean(order[name][1])) for name in sorted(names, key=lambda name: order[name][0]))
    by_run = {(change.run, change.name): change for change in found}
    rows = []
    for group in groups:
        values = first_values(group.run)
        cells = []
        for name, _ in columns:
            shown = values.get(name)
            change = by_run.get((group.first, name))
            if shown is None:
                cells.append(Cell(None))
            elif change is None:
                cells.append(Cell(clean(shown.value)))
            else:
                cells.append(Cell(change.after if shown.kind == "arguments" else clean(shown.value),
                                  "new" if change.appeared else "changed", change.before))
        rows.append((group, tuple(cells)))
    same: dict[str, RunFact] = {}
    for run in incident.runs:
        for name, fact in first_values(run).items():
            if name not in names and name not in same:
                same[name] = _shown(fact)
    reloads = tuple(number for number, run in enumerate(incident.runs, 1) if run.reload is not None)
    return Changes(columns, tuple(rows), found, tuple(same.values()), reloads)


def _symptoms(report: Report, incident: Incident) -> tuple[Symptom, ...]:
    """Findings of the failed runs that were not their root cause, one per class, with why."""
    entries: dict[str, list[Any]] = {}
    for number, run in enumerate(incident.runs, 1):
        if not run.failed:
            continue
        for finding in run.symptoms:  # never the run's own root cause class
            entry = entries.setdefault(finding.rule_id, [finding, [], 0, run])
            if number not in entry[1]:
                entry[1].append(number)
            entry[2] += 1
    symptoms = []
    for rule_id, (finding, runs, count, run) in entries.items():
        described = report.describe(finding, incident.unit)
        symptoms.append(Symptom(rule_id, clean(str(described["title"])), tuple(runs), count, finding.number,
                                clip(clean(finding.text), MAX_CONTEXT_TEXT), _reason(report, finding, run)))
    return tuple(symptoms)


def _reason(report: Report, finding: Finding, run: Run) -> str:
    root = run.root_cause
    rules = report.rules.by_id
    rule = rules.get(finding.rule_id)
    if rule is not None and rule.priority <= 15:
        return "a generic line that says only that the run failed"
    if root is not None:
        cause = rules.get(root.rule_id)
        if cause is not None and finding.rule_id in cause.explains:
            return f"a consequence of {root.rule_id}"
    if rule is not None and rule.priority <= 40:
        return "a wrapper that only says that something below it failed"
    if root is not None:
        return f"came with {root.rule_id}, which is more specific"
    return "not the most specific finding of its run"


def duration(seconds: float | None) -> str:
    """A span as a person reads it: 45s, 5m 25s, 1h 06m."""
    if seconds is None:
        return "-"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours:02d}h"


def spread(span: tuple[float, float] | None) -> str:
    """The time to failure of a group: one value, or the range of its runs."""
    if span is None:
        return "-"
    low, high = span
    return duration(low) if duration(low) == duration(high) else f"{duration(low)} to {duration(high)}"


__all__ = ["Cause", "Cell", "Changes", "Chapter", "Group", "Line", "Spans", "Story", "Symptom", "duration", "spans", "spread",
           "story"]
