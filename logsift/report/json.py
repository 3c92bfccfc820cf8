"""`--format json`: the version 1 contract of DESIGN.md (more keys are allowed, none removed)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from logsift.learn.clustering import TemplateMiner
from logsift.pipeline import Analysis
from logsift.records import Finding
from logsift.report.common import clip, describe, incident_dict, symptom
from logsift.sanitize import redact

VERSION = 1


def unclassified_groups(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """Failures no rule (nor the model) named, as templates: forty copies of one error, on any
    run or host, are one entry with a count and the first example (logsift.learn.clustering)."""
    miner = TemplateMiner()
    for finding in findings:
        miner.add(finding.text, finding.line, finding.record.host)
    return [
        {"template": clip(redact(cluster.template)), "count": cluster.count,
         "example": clip(redact(cluster.example)), "line": cluster.line, "hosts": sorted(cluster.hosts)}
        for cluster in miner.clusters()
    ]


def document(analysis: Analysis) -> dict[str, Any]:
    diagnosis = analysis.diagnosis
    rules = analysis.rules
    return {
        "version": VERSION,
        "incidents": [incident_dict(incident, rules) for incident in diagnosis.incidents],
        "findings": [
            {**symptom(noted.finding), "severity": noted.finding.severity.label,
             "title": describe(noted.finding, rules, noted.unit)["title"], "unit": noted.unit, "host": noted.host,
             "count": noted.count, "last_line": noted.last_line}
            for noted in diagnosis.findings
        ],
        "unclassified": unclassified_groups(diagnosis.unclassified),
        "summary": {
            "lines": analysis.counts.lines,
            "events": analysis.counts.events,
            "runs": diagnosis.run_count,
            "incidents": len(diagnosis.incidents),
            "rules": len(rules),
            "warnings": list(analysis.warnings),
        },
    }


def render(analysis: Analysis, out: TextIO, color: bool = False) -> None:
    json.dump(document(analysis), out, indent=2, ensure_ascii=False)
    out.write("\n")
