"""`--format json`: the version 1 contract of DESIGN.md (more keys are allowed, none removed)."""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from typing import Any, TextIO

from logsift.pipeline import Analysis
from logsift.reporters.common import clip, describe, incident_dict, symptom
from logsift.sanitize import redact

VERSION = 1
_MASK = re.compile(r"0x[0-9a-fA-F]+|\b\d+(?:\.\d+)*\b|'[^']*'|\"[^\"]*\"|(?:/[\w.@+-]+)+")


def template(text: str) -> str:
    """A line with its variable parts masked, so that copies of one error group together."""
    return _MASK.sub("<*>", text)


def document(analysis: Analysis) -> dict[str, Any]:
    diagnosis = analysis.diagnosis
    rules = analysis.rules
    unclassified: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for finding in diagnosis.unclassified:
        key = template(finding.text)
        entry = unclassified.get(key)
        if entry is None:
            unclassified[key] = {"template": clip(redact(key)), "count": 1,
                                 "example": clip(redact(finding.text)), "line": finding.line}
        else:
            entry["count"] += 1
    return {
        "version": VERSION,
        "incidents": [incident_dict(incident, rules) for incident in diagnosis.incidents],
        "findings": [
            {**symptom(finding), "severity": finding.severity.label,
             "title": describe(finding, rules, None)["title"]}
            for finding in diagnosis.findings
        ],
        "unclassified": list(unclassified.values()),
        "summary": {
            "lines": analysis.counts.lines,
            "events": analysis.counts.events,
            "runs": len(diagnosis.runs),
            "incidents": len(diagnosis.incidents),
            "rules": len(rules),
        },
    }


def render(analysis: Analysis, out: TextIO, color: bool = False) -> None:
    json.dump(document(analysis), out, indent=2, ensure_ascii=False)
    out.write("\n")
