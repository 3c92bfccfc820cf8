"""`-o json`: the version 1 contract of DESIGN.md (more keys are allowed, none removed).

Written a run at a time: a crash loop of thousands of runs never becomes one dict or one
string, so memory stays bounded whatever the number of runs; the text is the same, byte for
byte, as sanitize.dumps(report.to_dict()) would write.
"""

from __future__ import annotations

from typing import Any, Iterable, TextIO

from logsift.report.common import RUNS_LATER, RenderOptions, incident_dict, run_dict
from logsift.report.document import INCIDENTS_LATER, Report
from logsift.sanitize import dumps


def render(report: Report, out: TextIO, options: RenderOptions) -> None:
    head, tail = _dumps(report.to_dict(incidents=False), 0).split(_dumps(INCIDENTS_LATER, 0))
    out.write(head)
    rules = report.rules

    def incidents() -> Iterable[tuple[str, Iterable[Any]]]:
        for incident in report.incidents:
            yield _dumps(incident_dict(incident, rules, runs=False), 2), (run_dict(run, rules) for run in incident.runs)

    _write_list(out, incidents(), 1)
    out.write(tail)
    out.write("\n")


def _dumps(value: Any, depth: int) -> str:
    """json.dumps(indent=2) of a value that stands `depth` levels deep in the document, with no raw
    control or bidi character from the log and no lone surrogate (sanitize.dumps)."""
    return dumps(value).replace("\n", "\n" + "  " * depth)


def _write_list(out: TextIO, items: Iterable[tuple[str, Iterable[Any]]], depth: int) -> None:
    """A list of incidents at `depth`, each with its runs written one by one where RUNS_LATER stands."""
    marker = _dumps(RUNS_LATER, 0)
    empty = True
    for text, runs in items:
        out.write(("," if not empty else "[") + "\n" + "  " * (depth + 1))
        empty = False
        before, after = text.split(marker)
        out.write(before)
        first = True
        for run in runs:
            out.write(("," if not first else "[") + "\n" + "  " * (depth + 3) + _dumps(run, depth + 3))
            first = False
        out.write("[]" if first else "\n" + "  " * (depth + 2) + "]")
        out.write(after)
    out.write("[]" if empty else "\n" + "  " * depth + "]")
