"""`--format table`: one row per failed run, for a quick look or a ticket."""

from __future__ import annotations

from typing import TextIO

from tabulate import tabulate

from logsift.pipeline import Analysis
from logsift.sanitize import safe

HEADERS = ("incident", "unit", "host", "run", "started", "outcome", "after", "root cause", "line")


def rows(analysis: Analysis) -> list[tuple[object, ...]]:
    table: list[tuple[object, ...]] = []
    for number, incident in enumerate(analysis.diagnosis.incidents, 1):
        for run_number, run in enumerate(incident.runs, 1):
            root = run.root_cause
            ttf = run.time_to_failure
            table.append((
                number,
                safe(incident.unit or "-"),
                safe(incident.host or "-"),
                run_number,
                run.started.strftime("%Y-%m-%d %H:%M:%S") if run.started else "-",
                run.outcome,
                f"{ttf:.0f}s" if ttf is not None else "-",
                root.rule_id if root else "-",
                root.line if root else "-",
            ))
    return table


def render(analysis: Analysis, out: TextIO, color: bool = False) -> None:
    table = rows(analysis)
    if not table:
        out.write("no incidents\n")
        return
    out.write(tabulate(table, headers=HEADERS, tablefmt="simple") + "\n")
