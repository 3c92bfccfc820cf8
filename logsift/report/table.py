"""`-o table`: one row per run of each incident, for a quick look or a ticket."""

from __future__ import annotations

from typing import TextIO

from logsift.report.common import RenderOptions
from logsift.report.document import Report
from logsift.sanitize import clean

HEADERS = ("incident", "unit", "host", "run", "started", "outcome", "after", "root cause", "line")


def rows(report: Report, options: RenderOptions) -> list[tuple[object, ...]]:
    table: list[tuple[object, ...]] = []
    for number, incident in enumerate(report.incidents, 1):
        for run_number, run in enumerate(incident.runs, 1):
            root = run.root_cause
            ttf = run.time_to_failure
            table.append((
                number,
                clean(incident.unit or "-"),
                clean(incident.host or "-"),
                run_number,
                options.clock(run.started, zone=False) if run.started else "-",
                run.outcome,
                f"{ttf:.0f}s" if ttf is not None else "-",
                root.rule_id if root else "-",
                root.number if root else "-",
            ))
    return table


def render(report: Report, out: TextIO, options: RenderOptions) -> None:
    table = rows(report, options)
    if not table:
        out.write("no incidents\n")
        return
    from tabulate import tabulate  # start-up: imported by the report that prints a table

    out.write(tabulate(table, headers=HEADERS, tablefmt="simple") + "\n")
