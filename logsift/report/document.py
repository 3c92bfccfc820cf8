"""The Report: everything one diagnosis found, as typed values, and as the JSON contract.

`logsift.diagnose()` returns a Report; every reporter (terminal, JSON, table, Markdown, HTML)
renders one. `Report.to_dict()` is the version 1 JSON contract of DESIGN.md, described by the
JSON Schema in `logsift/report/schema.json` (`logsift schema`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Iterable

from logsift.diagnosis import Noted
from logsift.pipeline import Analysis
from logsift.read.selection import mangle_unit
from logsift.records import Finding, Incident, Run
from logsift.report.common import clip, describe, incident_dict, symptom, timestamp
from logsift.rules import RuleSet
from logsift.sanitize import redact

VERSION = 1


@dataclass(frozen=True, slots=True)
class Template:
    """Failures that no rule (nor the model) named, grouped: forty copies of one error are one
    template with a count and the first example."""

    template: str
    count: int
    example: str
    line: int
    hosts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the input came from, so that a report can say how to look at it again."""

    kind: str  # "journal" (files, a directory or this machine's journal), "file", "stdin", "lines", "entries"
    files: tuple[str, ...] = ()
    directory: str | None = None
    units: tuple[str, ...] = ()  # the -u of a journal selection

    @property
    def journal(self) -> bool:
        return self.kind == "journal"


@dataclass(frozen=True, slots=True)
class Summary:
    """What was read: enough to tell "healthy" from "read nothing"."""

    lines: int  # input lines (text) or journal entries, skipped ones included
    entries: int  # records parsed (a skipped healthy line is not parsed)
    events: int
    runs: int
    incidents: int
    rules: int
    units: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    since: datetime | None = None  # the earliest and latest time of the entries parsed
    until: datetime | None = None
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # what the readers skipped or cut
    notes: tuple[str, ...] = ()  # what the reader should know: read nothing, kernel lines absent, ...
    regex_timeouts: int = 0
    kernel_lines: bool = True  # False when the input has none (journalctl -u leaves them out)
    regex_budget: dict[str, Any] = field(default_factory=dict)  # what timed-out regexes cost the run


@dataclass(frozen=True)
class Report:
    """A diagnosis: incidents (consecutive failed runs of a unit), findings in runs that did not
    fail, failures no rule names, and what was read."""

    incidents: tuple[Incident, ...]
    findings: tuple[Noted, ...]
    unclassified: tuple[Template, ...]
    summary: Summary
    rules: RuleSet
    runs: tuple[Run, ...] = ()  # every run that failed, had findings, or resolved an incident
    origin: Origin = field(default_factory=lambda: Origin("lines"))

    @classmethod
    def from_analysis(cls, analysis: Analysis, origin: Origin | None = None, sources: Iterable[str] = (),
                      warnings: Iterable[str] = (), notes: Iterable[str] = (),
                      units: Iterable[str] = ()) -> Report:
        """`units`: only incidents and findings of these units (globs; `x` means `x.service`)."""
        diagnosis = analysis.diagnosis
        counts = analysis.counts
        wanted = tuple(units)
        incidents = tuple(incident for incident in diagnosis.incidents if _selected(incident.unit, wanted))
        findings = tuple(noted for noted in diagnosis.findings if _selected(noted.unit, wanted))
        runs = tuple(run for run in diagnosis.runs if _selected(run.unit, wanted))
        summary = Summary(
            lines=counts.lines,
            entries=counts.entries,
            events=counts.events,
            runs=diagnosis.run_count,
            incidents=len(incidents),
            rules=len(analysis.rules),
            units=tuple(sorted(counts.units | set(diagnosis.units))),
            hosts=tuple(sorted(counts.hosts)),
            since=counts.first,
            until=counts.last,
            sources=tuple(sources),
            warnings=tuple(warnings),
            notes=tuple(notes),
            regex_timeouts=analysis.regex_timeouts,
            kernel_lines=counts.kernel or (origin is not None and origin.journal),
            regex_budget=analysis.regex_budget.as_dict() if analysis.regex_budget is not None else {},
        )
        unclassified = _templates(finding for finding in diagnosis.unclassified
                                  if _selected(finding.record.unit, wanted) or finding.record.unit is None)
        return cls(incidents, findings, unclassified, summary, analysis.rules, runs, origin or Origin("lines"))

    def with_notes(self, *notes: str) -> Report:
        return replace(self, summary=replace(self.summary, notes=self.summary.notes + notes))

    def describe(self, finding: Finding, unit: str | None = None) -> dict[str, Any]:
        """A finding as the JSON contract's root_cause object: title, explanation, remediation
        and avoid filled in with the values from the log (redacted)."""
        return describe(finding, self.rules, unit)

    def to_dict(self, incidents: bool = True) -> dict[str, Any]:
        """The JSON contract, version 1. `incidents=False`: INCIDENTS_LATER stands for them,
        for a writer that streams them (report/json.py)."""
        rules = self.rules
        summary = self.summary
        return {
            "version": VERSION,
            "incidents": [incident_dict(incident, rules) for incident in self.incidents] if incidents else INCIDENTS_LATER,
            "findings": [
                {**symptom(noted.finding), "severity": noted.finding.severity.label,
                 "title": describe(noted.finding, rules, noted.unit)["title"], "unit": noted.unit,
                 "host": noted.host, "count": noted.count, "last_line": noted.last_line}
                for noted in self.findings
            ],
            "unclassified": [
                {"template": template.template, "count": template.count, "example": template.example,
                 "line": template.line, "hosts": list(template.hosts)}
                for template in self.unclassified
            ],
            "summary": {
                "lines": summary.lines,
                "entries": summary.entries,
                "events": summary.events,
                "runs": summary.runs,
                "incidents": summary.incidents,
                "rules": summary.rules,
                "units": list(summary.units),
                "hosts": list(summary.hosts),
                "since": timestamp(summary.since),
                "until": timestamp(summary.until),
                "sources": list(summary.sources),
                "warnings": list(summary.warnings),
                "notes": list(summary.notes),
                "skipped_rules": list(rules.skipped),
                "regex_timeouts": summary.regex_timeouts,
                "kernel_lines": summary.kernel_lines,
                "regex_budget": summary.regex_budget,
            },
        }


INCIDENTS_LATER = "\0incidents\0"


def _templates(findings: Iterable[Finding]) -> tuple[Template, ...]:
    findings = tuple(findings)
    if not findings:
        return ()
    from logsift.learn.clustering import TemplateMiner  # only when there is something to cluster

    miner = TemplateMiner()
    for finding in findings:
        text, line = _telling_line(finding)
        # Redacted before it is masked into a template: masking would hide a secret's shape.
        miner.add(redact(text), line, finding.record.host)
    return tuple(
        Template(clip(redact(cluster.template)), cluster.count, clip(redact(cluster.example)), cluster.line,
                 tuple(sorted(cluster.hosts)))
        for cluster in miner.clusters()
    )


def _telling_line(finding: Finding) -> tuple[str, int]:
    """The line that says what failed: the finding's own (an exception or fatal line), or, for
    a traceback cut before its exception line, its deepest frame: forty copies of one failure are
    one template, two failures cut at different places are two."""
    if "Traceback (most recent call last)" not in finding.text:
        return finding.text, finding.number
    for record in reversed(finding.event.records):
        for text in reversed(record.message.split("\n")):
            if text.strip() and "Traceback (most recent call last)" not in text:
                return text.strip(), record.number
    return finding.text, finding.number


def _selected(unit: str | None, wanted: tuple[str, ...]) -> bool:
    if not wanted:
        return True
    return unit is not None and any(fnmatch.fnmatchcase(unit, mangle_unit(name)) for name in wanted)
