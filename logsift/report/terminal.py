"""The report a person reads at 3 a.m.: per incident, what failed, which line is the cause,
what it means here, what to do and what not to do; then a summary table.
"""

from __future__ import annotations

import textwrap
from datetime import datetime
from typing import TextIO

import click
from tabulate import tabulate

from logsift.pipeline import Analysis
from logsift.records import Incident, Run
from logsift.report.common import describe
from logsift.report.table import HEADERS, rows
from logsift.sanitize import safe

WIDTH = 100


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, **style: object) -> str:
        return click.style(text, **style) if self.color else text  # type: ignore[arg-type]


def _clock(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "?"


def _wrap(text: str, indent: str) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        flat = " ".join(paragraph.split())
        if flat:
            lines.extend(textwrap.wrap(flat, WIDTH, initial_indent=indent, subsequent_indent=indent))
    return lines


EVIDENCE_WIDTH = 160


def _one_line(text: str, width: int) -> str:
    # Elide the middle: long lines are long because of paths, and errors sit at the end.
    text = safe(text).strip()
    if len(text) <= width:
        return text
    head = width // 3
    return text[:head] + " ... " + text[len(text) - (width - head - 5):]


def _run_lines(number: int, run: Run) -> list[str]:
    started = _clock(run.started) if run.started else f"line {run.first_line}"
    if not run.failed:
        return [f"  run {number}  {started}  {run.outcome}"]
    ttf = run.time_to_failure
    after = f" after {ttf:.0f}s" if ttf is not None else ""
    exit_text = f" ({run.exit or run.result})" if (run.exit or run.result) else ""
    if run.root_cause is None:
        return [f"  run {number}  {started}  failed{after}{exit_text}: cause not found"]
    return [
        f"  run {number}  {started}  failed{after}{exit_text}: {run.root_cause.rule_id}"
        + (f" (suggested by the model, {run.root_cause.confidence:.2f})" if run.root_cause.source == "model" else ""),
        f"         line {run.root_cause.line}: {_one_line(run.root_cause.text, EVIDENCE_WIDTH - 20)}",
    ]


def _symptoms(run: Run) -> str:
    lines: dict[str, list[str]] = {}
    for finding in run.symptoms:
        lines.setdefault(finding.rule_id, []).append(str(finding.line))
    return ", ".join(
        f"{rule_id} (line{'s' if len(numbers) > 1 else ''} {', '.join(numbers[:4])}{'...' if len(numbers) > 4 else ''})"
        for rule_id, numbers in lines.items()
    )


def _incident(number: int, incident: Incident, analysis: Analysis, style: _Style) -> list[str]:
    out: list[str] = []
    unit = safe(incident.unit or "(unit unknown)")
    host = f" on {safe(incident.host)}" if incident.host else ""
    failed = len(incident.failed_runs)
    if incident.resolved:
        state = style(f"RESOLVED at {_clock(incident.resolved_at)}", fg="green", bold=True)
    else:
        state = style("UNRESOLVED", fg="red", bold=True)
    title = f"Incident {number}: {unit}{host}, {failed} failed run{'s' if failed != 1 else ''}, "
    out.append(style(title, bold=True) + state)
    out.append(f"  {_clock(incident.first_seen)} -> {_clock(incident.last_seen)}")
    if len(incident.runs) > 1:
        for index, run in enumerate(incident.runs, 1):
            out.extend(_run_lines(index, run))
    root = incident.root_cause
    out.append("")
    if root is None:
        out.append("  Root cause: not found in these lines; read the whole run (journalctl -u UNIT -b).")
        return out
    described = describe(root, analysis.rules, incident.unit)
    which = "" if len(incident.failed_runs) == 1 else " (latest failed run)"
    severity = style(described["severity"].upper(), fg="red" if described["severity"] == "critical" else "yellow", bold=True)
    out.append(f"  {style('Root cause' + which, bold=True)}: {safe(described['title'])}  [{described['class']}, {severity}]")
    if described.get("suggestion"):
        # No rule matched: the learned fallback's reading, to be checked against the evidence.
        out.append("  " + style(f"suggested by the model (confidence {described['confidence']:.2f}): "
                                "no rule matched; check the evidence line before acting on it", fg="yellow"))
    for position, item in enumerate(described["evidence"]):
        text = safe(item["text"]) if position == 0 else _one_line(item["text"], EVIDENCE_WIDTH)
        out.append(f"    {style(str(item['line']).rjust(6), fg='cyan')} | {text}")
    out.append("")
    out.append("  " + style("What it means", bold=True))
    out.extend(_wrap(safe(described["explanation"]), "    "))
    if described["remediation"]:
        out.append("")
        out.append("  " + style("What to do", bold=True))
        for index, step in enumerate(described["remediation"], 1):
            wrapped = _wrap(safe(step), "       ")
            out.append(f"    {index}. {wrapped[0].strip()}" if wrapped else f"    {index}.")
            out.extend(wrapped[1:])
    if described["avoid"]:
        out.append("")
        out.append("  " + style("Avoid", bold=True, fg="yellow"))
        for step in described["avoid"]:
            wrapped = _wrap(safe(step), "      ")
            out.append(f"    - {wrapped[0].strip()}" if wrapped else "    -")
            out.extend(wrapped[1:])
    last = incident.failed_runs[-1]
    if last.symptoms:
        out.append("")
        out.extend(_wrap(f"Symptoms, not causes: {_symptoms(last)}", "  "))
    return out


def render(analysis: Analysis, out: TextIO, color: bool = False) -> None:
    style = _Style(color)
    diagnosis = analysis.diagnosis
    lines: list[str] = []
    for number, incident in enumerate(diagnosis.incidents, 1):
        lines.extend(_incident(number, incident, analysis, style))
        lines.append("")
    if diagnosis.findings:
        lines.append(style("Findings that did not stop a service", bold=True))
        for noted in diagnosis.findings[:20]:
            where = f" on {safe(noted.unit)}" if noted.unit else ""
            times = f", {noted.count} times (last line {noted.last_line})" if noted.count > 1 else ""
            lines.append(f"  line {noted.finding.line}{where}{times}: {noted.finding.rule_id}")
            lines.append(f"      {_one_line(noted.finding.text, WIDTH)}")
        lines.append("")
    table = rows(analysis)
    if table:
        lines.append(tabulate(table, headers=HEADERS, tablefmt="simple"))
    counts = analysis.counts
    summary = (
        f"{counts.lines} lines, {counts.events} events, {diagnosis.run_count} run{'s' if diagnosis.run_count != 1 else ''}, "
        f"{len(diagnosis.incidents)} incident{'s' if len(diagnosis.incidents) != 1 else ''}"
    )
    if not diagnosis.incidents:
        summary = style("No incidents. ", fg="green", bold=True) + summary
    lines.append(summary)
    out.write("\n".join(lines) + "\n")
