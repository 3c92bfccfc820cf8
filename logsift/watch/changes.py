"""What a sink is sent: one JSON object per alert state change (the change contract, version 1).

    {"version": 1, "key": "3f0c9a2e41b7d815-2", "alert": "3f0c9a2e41b7d815", "sequence": 2,
     "state": "firing", "change": "failed-again",      # opened | failed-again | cause-changed | resolved
     "host": "gpu-node-07", "unit": "sglang-k26.service",
     "class": "cuda.nvcc-not-found", "severity": "critical", "title": "...",
     "previous": {"class": "cuda.toolkit-too-old-for-arch", "severity": "critical"},  # labels before, if they changed
     "failed_runs": 2, "first_seen": "...", "last_seen": "...", "resolved_at": null, "at": "...",
     "observed_at": "...", "opened_at": "...",           # wall-clock times, when logsift saw it
     "summary": "...", "description": "...", "remediation": ["..."], "avoid": ["..."], "runbook": "...",
     "root_cause": {... the JSON report's root_cause: evidence, explanation, fields ...},
     "failure": null,   # or, when no rule names the cause, the line where the run said it failed
     "runs": [{"run": "...", "started": "...", "ended": "...", "outcome": "failed", "exit": "...", "class": "..."}]}

`alert` is the incident's identity: a hash of host, unit and the identity of the incident's
first failed run (its systemd invocation ID, else its start time), so it is the same after any
restart of the sidecar. `key` names one state change of it (the idempotency key: a change that
is delivered twice, after a crash or a retry, carries the same key). `at`, `first_seen` and
`last_seen` are journal times. Every text is redacted and made printable.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from logsift.records import Run
from logsift.report.common import describe, timestamp
from logsift.rules import RuleSet
from logsift.sanitize import safe

VERSION = 1
RUNS_LISTED = 20  # the latest runs an alert lists (the count is in failed_runs)


def run_identity(run: Run) -> str:
    """What names a run whatever the reader's line numbers: systemd's invocation ID, else when
    it started, else where (only inputs without times: those cannot be resumed anyway)."""
    if run.invocation:
        return f"invocation {run.invocation}"
    if run.started is not None:
        return f"started {timestamp(run.started) or run.started.isoformat()}"
    return f"line {run.first_line}"


def alert_id(host: str | None, unit: str | None, identity: str) -> str:
    digest = hashlib.sha256("\0".join((host or "", unit or "", identity)).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


def run_entry(run: Run) -> dict[str, Any]:
    ttf = run.time_to_failure
    return {
        "run": run_identity(run),
        "started": timestamp(run.started),
        "ended": timestamp(run.ended),
        "outcome": run.outcome,
        "exit": run.exit or run.result,
        "class": run.root_cause.rule_id if run.root_cause else None,
        "time_to_failure_s": round(ttf, 3) if ttf is not None else None,
    }


def wall_clock(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).isoformat()


def failure_change(incident: dict[str, Any], run: Run, kind: str, rules: RuleSet, runbook: str | None,
                   observed_at: str) -> dict[str, Any]:
    """The change for a failed run (`opened`, `failed-again`, `cause-changed`); `incident` is
    the tracker's record of it, already counting this run."""
    root = run.root_cause
    unit = incident["unit"]
    described = describe(root, rules, unit) if root is not None else None
    cause = root.rule_id if root is not None else None
    severity = root.severity.label if root is not None else "error"
    title = described["title"] if described else "a run failed; no line in it names the cause"
    # No rule names the cause, but the run said it failed ("Error: ...", "Webserver Crashed"): that
    # line is what the alert can show (its class stays unknown, as in the batch report).
    said = describe(run.failure, rules, unit) if root is None and run.failure is not None else None
    if said is not None:
        title = f"{said['title']} (no line names the cause)"
    where = _where(incident)
    failed = incident["failed_runs"]
    if kind == "opened":
        summary = f"{where} failed: {title}"
    elif kind == "failed-again":
        summary = f"{where} failed again ({failed} failed runs): {title}"
    else:
        summary = f"{where}: a failed run now reads as {cause}: {title}"
    previous = None
    if incident.get("class") is not None and (incident["class"], incident["severity"]) != (cause, severity):
        previous = {"class": incident["class"], "severity": incident["severity"]}
    description = [described["explanation"]] if described and described["explanation"] else []
    shown = described or said
    if said is not None:
        description.append(said["explanation"])
    if shown:
        first = shown["evidence"][0]
        when = f", {first['timestamp']}" if first.get("timestamp") else ""
        description.append(f"Evidence (line {first['line']}{when}): {first['text']}")
    if previous is not None:
        description.append(f"The cause changed: {previous['class']} before, {cause} now.")
    incident["class"], incident["severity"] = cause, severity
    return _finish(incident, {
        "state": "firing",
        "change": kind,
        "class": cause,
        "severity": severity,
        "title": title,
        "previous": previous,
        "at": timestamp(run.ended) or incident.get("last_seen"),
        "resolved_at": None,
        "summary": summary,
        "description": "\n\n".join(description),
        "remediation": described["remediation"] if described else [],
        "avoid": described["avoid"] if described else [],
        "runbook": _runbook(runbook, described, incident),
        "root_cause": described,
        "failure": said["evidence"][0] if said is not None else None,
    }, observed_at)


def resolved_change(incident: dict[str, Any], run: Run, observed_at: str) -> dict[str, Any]:
    failed = incident["failed_runs"]
    resolved_at = timestamp(run.started) or timestamp(run.ended) or incident.get("last_seen")
    last = incident.get("last") or {}
    return _finish(incident, {
        "state": "resolved",
        "change": "resolved",
        "class": incident.get("class"),
        "severity": incident.get("severity"),
        "title": last.get("title"),
        "previous": None,
        "at": resolved_at,
        "resolved_at": resolved_at,
        "summary": f"{_where(incident)} is healthy again after {failed} failed run{'s' if failed != 1 else ''} "
                   f"(last cause: {incident.get('class') or 'not found'})",
        "description": last.get("description", ""),
        "remediation": last.get("remediation", []),
        "avoid": last.get("avoid", []),
        "runbook": last.get("runbook", ""),
        "root_cause": last.get("root_cause"),
        "failure": last.get("failure"),
    }, observed_at)


def _finish(incident: dict[str, Any], body: dict[str, Any], observed_at: str) -> dict[str, Any]:
    incident["sequence"] += 1
    change = {
        "version": VERSION,
        "key": f"{incident['id']}-{incident['sequence']}",
        "alert": incident["id"],
        "sequence": incident["sequence"],
        "host": incident["host"],
        "unit": incident["unit"],
        "failed_runs": incident["failed_runs"],
        "first_seen": incident.get("first_seen"),
        "last_seen": incident.get("last_seen"),
        "observed_at": observed_at,
        "opened_at": incident.get("opened_at") or observed_at,
        "runs": list(incident.get("runs", [])),
        **body,
    }
    cleaned: dict[str, Any] = clean(change)
    return cleaned


def clean(value: Any) -> Any:
    """Every text of a change redacted and printable (log text is untrusted; alerts leave the
    machine)."""
    if isinstance(value, str):
        return safe(value)
    if isinstance(value, dict):
        return {key: clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(item) for item in value]
    return value


def _where(incident: dict[str, Any]) -> str:
    unit = incident.get("unit") or "a process with no unit"
    return f"{unit} on {incident['host']}" if incident.get("host") else unit


def _runbook(template: str | None, described: dict[str, Any] | None, incident: dict[str, Any]) -> str:
    cause = described["class"] if described else "unknown"
    if template:
        return template.format(**{"class": cause, "unit": incident.get("unit") or "", "host": incident.get("host") or ""})
    references = described["references"] if described else []
    return str(references[0]) if references else ""
