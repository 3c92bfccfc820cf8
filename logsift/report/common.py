"""What every reporter says about a finding, run and incident: one place, so formats agree."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Iterable

from logsift.records import Finding, Incident, Record, Run, RunFact, SinceBoot
from logsift.rules import Rule, RuleSet
from logsift.sanitize import redact

# Evidence text is cut so that one huge line cannot flood a report.
MAX_TEXT = 500


@dataclass(frozen=True)
class RenderOptions:
    """How a reporter should render: colour, the width to fit (terminal), the time zone."""

    color: bool = False
    width: int = 100
    utc: bool = False  # times in UTC; else in local time (TZ), as journalctl shows them

    def clock(self, value: datetime | None, zone: bool = True) -> str:
        """A time as a person reads it: in the report's zone, named; or its offset from boot."""
        if value is None:
            return "?"
        if isinstance(value, SinceBoot):
            return f"{value.seconds:.3f}s after boot"
        local = value.astimezone(UTC) if self.utc else value.astimezone()
        return local.strftime("%Y-%m-%d %H:%M:%S %Z" if zone else "%Y-%m-%d %H:%M:%S").strip()


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def timestamp(value: datetime | None) -> str | None:
    """A wall-clock time in ISO 8601, in UTC; None for times known only since boot."""
    if value is None or isinstance(value, SinceBoot):
        return None
    return value.astimezone(UTC).isoformat()


def since_boot(value: datetime | None) -> float | None:
    return round(value.seconds, 6) if isinstance(value, SinceBoot) else None


def evidence(record: Record, line: int, text: str, unit: str | None = None) -> dict[str, Any]:
    """One evidence line with what it takes to find it again in the journal; `unit` is the
    unit of the run it belongs to, when the line itself does not say."""
    return {
        "line": line,
        "text": clip(redact(text)),
        "source": record.source if record.source != "-" else None,
        "timestamp": timestamp(record.timestamp),
        "host": record.host,
        "unit": record.unit or unit,
        "identifier": record.identifier,
        "pid": record.pid,
        "cursor": record.cursor,
        "invocation": record.invocation,
        "entry": record.entry,
    }


def fields_for(finding: Finding, unit: str | None) -> dict[str, str]:
    fields = {"unit": unit} if unit else {}
    fields.update(finding.fields)
    return {key: redact(value) for key, value in fields.items()}


def describe(finding: Finding, rules: RuleSet, unit: str | None) -> dict[str, Any]:
    """The JSON contract's root_cause object (text not yet made terminal-safe)."""
    rule: Rule | None = rules.by_id.get(finding.rule_id)
    fields = fields_for(finding, unit)
    record = finding.record
    lines = [evidence(record, finding.number, finding.text, unit)]
    # Context lines ([[context]] values) come from elsewhere in the run: only line and text.
    lines.extend({**evidence(record, line, text, unit), **dict.fromkeys(_RECORD_KEYS)} for line, text in finding.context)
    described: dict[str, Any] = {
        "class": finding.rule_id,
        "title": rule.render(rule.title, fields) if rule else finding.rule_id,
        "severity": finding.severity.label,
        "source": finding.source,
        "confidence": round(finding.confidence, 3),
        "evidence": lines,
        "fields": {key: value for key, value in fields.items() if key in finding.fields},
        "explanation": rule.render(rule.explanation, fields) if rule else "",
        "remediation": [rule.render(text, fields) for text in rule.remediation] if rule else [],
        "avoid": [rule.render(text, fields) for text in rule.avoid] if rule else [],
        "references": list(rule.references) if rule else [],
    }
    if finding.source == "model":
        described["suggestion"] = True
    return described


_RECORD_KEYS = ("timestamp", "identifier", "pid", "cursor", "invocation", "entry")


def symptom(finding: Finding) -> dict[str, Any]:
    return {"class": finding.rule_id, "line": finding.number, "text": clip(redact(finding.text))}


def symptoms(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """One entry per class (its first line), with how many lines of that class there were."""
    by_class: dict[str, dict[str, Any]] = {}
    for finding in findings:
        entry = by_class.get(finding.rule_id)
        if entry is None:
            by_class[finding.rule_id] = {**symptom(finding), "count": 1}
        else:
            entry["count"] += 1
    return list(by_class.values())


def run_dict(run: Run, rules: RuleSet) -> dict[str, Any]:
    ttf = run.time_to_failure
    return {
        "started": timestamp(run.started),
        "ended": timestamp(run.ended),
        "started_since_boot_s": since_boot(run.started),
        "ended_since_boot_s": since_boot(run.ended),
        "host": run.host,
        "unit": run.unit,
        "outcome": run.outcome,
        "exit": run.exit,
        "result": run.result,
        "time_to_failure_s": round(ttf, 3) if ttf is not None else None,
        "first_line": run.first_line,
        "last_line": run.last_line,
        "invocation": run.invocation,
        "root_cause": describe(run.root_cause, rules, run.unit) if run.root_cause else None,
        "symptoms": symptoms(run.symptoms),
        # The line that said the run failed, when no rule names why (a `failure` signal).
        "failure": evidence(run.failure.record, run.failure.number, run.failure.text, run.unit)
        if run.failure is not None and run.root_cause is None else None,
        "facts": [fact_dict(fact) for fact in run.facts],
        "ready": _mark(run.ready.record, run.ready.number) if run.ready is not None else None,
        "daemon_reload": _mark(run.reload, run.reload.number) if run.reload is not None else None,
    }


def fact_dict(fact: RunFact) -> dict[str, Any]:
    return {"name": fact.name, "label": fact.label, "value": fact.value, "line": fact.line,
            "text": clip(redact(fact.text))}


def _mark(record: Record, line: int) -> dict[str, Any]:
    """Where and when a line was logged (the ready line, a daemon-reload)."""
    return {"line": line, "timestamp": timestamp(record.timestamp), "since_boot_s": since_boot(record.timestamp)}


RUNS_LATER = "\0runs\0"  # stands for the runs when a writer streams them (report/json.py)


def incident_dict(incident: Incident, rules: RuleSet, runs: bool = True) -> dict[str, Any]:
    root = incident.root_cause
    last_failed = incident.failed_runs[-1] if incident.failed_runs else None
    return {
        "unit": incident.unit,
        "host": incident.host,
        "first_seen": timestamp(incident.first_seen),
        "last_seen": timestamp(incident.last_seen),
        "resolved": incident.resolved,
        "resolved_at": timestamp(incident.resolved_at),
        "severity": incident.severity.label,
        "failed_runs": len(incident.failed_runs),
        "runs": [run_dict(run, rules) for run in incident.runs] if runs else RUNS_LATER,
        "root_cause": describe(root, rules, incident.unit) if root else None,
        "symptoms": symptoms(last_failed.symptoms) if last_failed else [],
        **story_dict(incident),
    }


def story_dict(incident: Incident) -> dict[str, Any]:
    """What a post-mortem tells beyond the runs: how long it lasted, what changed, what fixed it."""
    from logsift.diagnosis.changes import changes, downtime, fix  # only for incidents: not at start-up

    seconds, complete = downtime(incident)
    fixed = fix(incident)
    return {
        "downtime_s": round(seconds, 3) if seconds is not None else None,
        "downtime_open": not complete,
        "changes": [
            {"run": change.run, "name": change.name, "label": change.label, "before": change.before,
             "after": change.after, "before_run": change.before_run, "line": change.fact.line}
            for change in changes(incident.runs)
        ],
        "fix": {
            "run": fixed.run, "differs": [fact_dict(fact) for fact in fixed.differs],
            "only_healthy": [fact_dict(fact) for fact in fixed.only_healthy],
            "daemon_reload": fixed.reload, "gone": list(fixed.gone), "recurred": list(fixed.recurred),
        } if fixed is not None else None,
    }
