"""The report a person reads at 3 a.m.: per incident, what failed, which line is the cause,
what it means here, what to do and what not to do, and the command that shows the context;
then a summary table.

It fits the terminal: prose is wrapped to the width, never inside `inline code` or a command
(no break at hyphens either, so `--tensor-parallel-size` stays whole); evidence lines are cut
to the width with the cut marked. The same cause on several hosts is one block naming them.
"""

from __future__ import annotations

import re
import shlex
import textwrap
from dataclasses import dataclass
from typing import Any, Mapping, TextIO

import click

from logsift.diagnosis.host import HOST_EVENT_WINDOW
from logsift.records import Finding, Incident, Run, SinceBoot
from logsift.report.common import RenderOptions
from logsift.report.document import Origin, Report
from logsift.report.table import HEADERS, rows
from logsift.sanitize import clean

_CODE = re.compile(r"`[^`\n]*`")
_KEEP = "\0"  # stands for a space that must not break a line (no NUL survives `clean`)
CUT = " ... "


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, **style: object) -> str:
        return click.style(text, **style) if self.color else text  # type: ignore[arg-type]


def wrap(text: str, width: int, indent: str, first: str | None = None) -> list[str]:
    """Paragraphs of prose wrapped to `width`; `code spans` and words are never broken."""
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        flat = " ".join(paragraph.split())
        if not flat:
            continue
        kept = _CODE.sub(lambda match: match.group().replace(" ", _KEEP), flat)
        start = first if first is not None and not lines else indent
        wrapped = textwrap.wrap(kept, max(width, len(indent) + 20), initial_indent=start, subsequent_indent=indent,
                                break_long_words=False, break_on_hyphens=False)
        lines.extend(line.replace(_KEEP, " ") for line in wrapped)
    return lines


def cut(text: str, width: int) -> str:
    """One line of log text in `width` characters: the middle elided (long lines are long
    because of paths, and errors sit at the end), the cut marked."""
    text = clean(text).strip()
    width = max(width, 30)
    if len(text) <= width:
        return text
    head = width // 3
    return text[:head] + CUT + text[len(text) - (width - head - len(CUT)):]


@dataclass(frozen=True)
class _Block:
    """One incident, or the same cause on several hosts (fleet roll-up)."""

    incidents: tuple[Incident, ...]

    @property
    def first(self) -> Incident:
        return self.incidents[0]


def blocks(report: Report) -> list[_Block]:
    """Incidents of one unit with the same root cause on several hosts fold into one block."""
    groups: list[list[Incident]] = []
    for incident in report.incidents:
        root = incident.root_cause
        group = None
        if root is not None and incident.host is not None:
            group = next((group for group in groups
                          if group[0].unit == incident.unit and group[0].host is not None
                          and (cause := group[0].root_cause) is not None and cause.rule_id == root.rule_id
                          and all(other.host != incident.host for other in group)), None)
        if group is None:
            groups.append([incident])
        else:
            group.append(incident)
    return [_Block(tuple(group)) for group in groups]


class _Writer:
    def __init__(self, report: Report, options: RenderOptions) -> None:
        self.report = report
        self.options = options
        self.width = options.width
        self.style = _Style(options.color)
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def wrapped(self, text: str, indent: str, paint: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """One logical line wrapped to the width (its words whole), then pieces of it coloured:
        `paint` maps a piece of the text to click.style arguments."""
        kept = _CODE.sub(lambda match: match.group().replace(" ", _KEEP), text)
        lines = [line.replace(_KEEP, " ") for line in textwrap.wrap(
            kept, max(self.width, len(indent) + 20), subsequent_indent=indent, break_long_words=False,
            break_on_hyphens=False)] or [text]
        for piece, style in (paint or {}).items():
            for index, line in enumerate(lines):
                if piece in line:
                    lines[index] = line.replace(piece, self.style(piece, **style), 1)
                    break
        self.add(*lines)

    # -- one block --------------------------------------------------------------------------

    def block(self, number: int, block: _Block) -> None:
        if len(block.incidents) == 1:
            self.incident_header(number, block.first)
        else:
            self.fleet_header(number, block)
        incident = block.incidents[-1] if len(block.incidents) > 1 else block.first
        root = incident.root_cause
        self.add("")
        if root is None:
            failure = incident.failed_runs[-1].failure if incident.failed_runs else None
            if failure is not None:
                prefix = f"  The run failed, line {failure.number}: "
                self.add(prefix + cut(failure.text, self.width - len(prefix)))
            where = ("read the whole run (the command below)" if context_command(incident, self.report.origin, self.options)
                     else "the lines before it may say more than logsift knows")
            self.add(*wrap(f"Root cause: not found in these lines (no rule names it); {where}.", self.width, "  "))
            self.context(incident)
            return
        self.root_cause(incident, root, len(block.incidents) > 1)
        self.context(incident)

    def incident_header(self, number: int, incident: Incident) -> None:
        clock = self.options.clock
        unit = clean(incident.unit or "(unit unknown)")
        host = f" on {clean(incident.host)}" if incident.host else ""
        failed = len(incident.failed_runs)
        title = f"Incident {number}: {unit}{host}, {failed} failed run{'s' if failed != 1 else ''},"
        state = self.state(incident, plain=True)
        self.wrapped(f"{title} {state}", "    ", paint={title: {"bold": True}, state: self.state_style(incident)})
        if incident.first_seen is not None or incident.last_seen is not None:
            self.add(f"  {clock(incident.first_seen)} -> {clock(incident.last_seen)}")
        if len(incident.runs) > 1:
            for index, run in enumerate(incident.runs, 1):
                self.run_lines(index, run)

    def fleet_header(self, number: int, block: _Block) -> None:
        first = block.first
        hosts = [clean(incident.host or "?") for incident in block.incidents]
        root = first.root_cause
        cause = root.rule_id if root else "?"
        title = f"Incident {number}: {clean(first.unit or '(unit unknown)')} on {len(hosts)} hosts, same cause: {cause}"
        self.wrapped(title, "    ", paint={title: {"bold": True}})
        self.add(*wrap("hosts: " + ", ".join(hosts), self.width, "    ", "  "))
        table = []
        for incident in block.incidents:
            failed = incident.failed_runs
            ttf = [run.time_to_failure for run in failed if run.time_to_failure is not None]
            table.append((
                clean(incident.host or "?"), len(incident.runs), len(failed),
                self.options.clock(incident.first_seen), f"{sum(ttf) / len(ttf):.0f}s" if ttf else "-",
                self.state(incident, plain=True),
            ))
        from tabulate import tabulate  # only a report with a table pays for its import (start-up)

        body = tabulate(table, headers=("host", "runs", "failed", "first failure", "mean time to failure", "state"),
                        tablefmt="simple")
        self.add(*("  " + line for line in body.splitlines()))

    def state(self, incident: Incident, plain: bool = False) -> str:
        text = f"RESOLVED at {self.options.clock(incident.resolved_at)}" if incident.resolved else "UNRESOLVED"
        return text if plain else self.style(text, **self.state_style(incident))

    @staticmethod
    def state_style(incident: Incident) -> dict[str, Any]:
        return {"fg": "green" if incident.resolved else "red", "bold": True}

    def run_lines(self, number: int, run: Run) -> None:
        started = self.options.clock(run.started) if run.started else f"line {run.first_line}"
        if not run.failed:
            self.add(f"  run {number}  {started}  {run.outcome}")
            return
        ttf = run.time_to_failure
        after = f" after {ttf:.0f}s" if ttf is not None else ""
        exit_text = f" ({clean(run.exit or run.result or '')})" if (run.exit or run.result) else ""
        root = run.root_cause
        if root is None:
            self.wrapped(f"  run {number}  {started}  failed{after}{exit_text}: cause not found", " " * 9)
            return
        model = f" (suggested by the model, {root.confidence:.2f})" if root.source == "model" else ""
        self.wrapped(f"  run {number}  {started}  failed{after}{exit_text}: {root.rule_id}{model}", " " * 9)
        prefix = f"         line {root.number}: "
        self.add(prefix + cut(root.text, self.width - len(prefix)))

    def root_cause(self, incident: Incident, root: Finding, fleet: bool) -> None:
        style = self.style
        described = self.report.describe(root, incident.unit)
        which = " (latest failed run)" if len(incident.failed_runs) > 1 else ""
        if fleet:
            which += f" (as on {clean(incident.host or '?')})"
        severity = described["severity"].upper()
        label = "Root cause" + which
        self.wrapped(f"  {label}: {clean(described['title'])}  [{described['class']}, {severity}]", "    ",
                     paint={label: {"bold": True}})
        if described.get("suggestion"):
            # No rule matched: the learned fallback's reading, to be checked against the evidence.
            self.add(*(style(line, fg="yellow") for line in wrap(
                f"suggested by the model (confidence {described['confidence']:.2f}): no rule matched; "
                "check the evidence line before acting on it", self.width, "  ")))
        for position, item in enumerate(described["evidence"]):
            number = str(item["line"]).rjust(6)
            prefix = f"    {number} | "
            self.add(f"    {style(number, fg='cyan')} | {cut(item['text'], self.width - len(prefix))}")
            where = self.whereabouts(root) if position == 0 else ""
            if where:
                self.add(f"{' ' * 11}{where}")
        self.add("", "  " + style("What it means", bold=True))
        self.add(*wrap(clean(described["explanation"], lines=True), self.width, "    "))
        if described["remediation"]:
            self.add("", "  " + style("What to do", bold=True))
            for index, step in enumerate(described["remediation"], 1):
                self.add(*wrap(clean(step, lines=True), self.width, "       ", f"    {index}. "))
        if described["avoid"]:
            self.add("", "  " + style("Avoid", bold=True, fg="yellow"))
            for step in described["avoid"]:
                self.add(*wrap(clean(step, lines=True), self.width, "      ", "    - "))
        last = incident.failed_runs[-1]
        if last.symptoms:
            self.add("")
            self.add(*wrap(f"Symptoms, not causes: {_symptoms(last)}", self.width, "  "))

    def whereabouts(self, finding: Finding) -> str:
        """When and by whom the evidence line was logged: time, process, journal entry."""
        record = finding.record
        parts = []
        if record.timestamp is not None:
            parts.append(self.options.clock(record.timestamp))
        if record.identifier:
            parts.append(clean(f"{record.identifier}[{record.pid}]" if record.pid is not None else record.identifier))
        if record.entry is not None:
            parts.append(f"entry {record.entry}")
        if record.invocation:
            parts.append(f"invocation {clean(record.invocation)}")
        return "(" + ", ".join(parts) + ")" if parts else ""

    def context(self, incident: Incident) -> None:
        command = context_command(incident, self.report.origin, self.options)
        if command:
            # Never wrapped: a command must survive copy and paste whatever the width.
            self.add("", "  " + self.style("The whole run", bold=True), f"    {command}")
        kernel = kernel_command(incident, self.options) if not self.report.summary.kernel_lines else None
        if kernel:
            self.add(*wrap("The kernel's lines were not in the input (journalctl -u leaves them out); an Xid or "
                           "an OOM kill there may be what killed the run. To see them (`journalctl -k` would "
                           "look in the current boot only):", self.width, "    ", "  "),
                     f"    {kernel}")

    # -- the whole report -----------------------------------------------------------------

    def findings(self) -> None:
        report = self.report
        if not report.findings:
            return
        self.add(self.style("Findings that did not stop a service", bold=True))
        for noted in report.findings[:20]:
            where = f" on {clean(noted.unit)}" if noted.unit else ""
            times = f", {noted.count} times (last line {noted.last_line})" if noted.count > 1 else ""
            self.wrapped(f"  line {noted.finding.number}{where}{times}: {noted.finding.rule_id}", "      ")
            self.add("      " + cut(noted.finding.text, self.width - 6))
        self.add("")


def context_command(incident: Incident, origin: Origin, options: RenderOptions) -> str | None:
    """The journalctl command that shows the failed run in full."""
    run = incident.failed_runs[-1] if incident.failed_runs else None
    if run is None or incident.unit is None and not origin.journal:
        return None
    where: list[str] = []
    if origin.journal:
        where.extend(f"--file={path}" for path in origin.files)
        if origin.directory:
            where.append(f"--directory={origin.directory}")
    words = ["journalctl", *where]
    if origin.journal and run.invocation:
        words += [f"_SYSTEMD_INVOCATION_ID={run.invocation}", "+", f"INVOCATION_ID={run.invocation}"]
        return " ".join(shlex.quote(clean(word)) for word in words)
    if incident.unit:
        words += ["-u", incident.unit]
    if run.started is not None and run.ended is not None and run.started.year > 1970:
        utc = " UTC" if options.utc else ""
        words += ["-S", options.clock(run.started, zone=False) + utc, "-U", options.clock(run.ended, zone=False) + utc]
    elif not origin.journal:
        return None
    if options.utc:
        words.append("--utc")
    return " ".join(shlex.quote(clean(word)) for word in words)


def kernel_command(incident: Incident, options: RenderOptions) -> str | None:
    """journalctl -k over the failed runs of the incident, from two minutes before the first."""
    times = [stamp for run in incident.failed_runs for stamp in (run.started, run.ended) if stamp is not None]
    if not times or any(isinstance(stamp, SinceBoot) for stamp in times):
        return None
    utc = " UTC" if options.utc else ""
    since = options.clock(min(times) - HOST_EVENT_WINDOW, zone=False) + utc
    until = options.clock(max(times), zone=False) + utc
    # Not `journalctl -k`: it implies -b, the current boot, and the run may be of an earlier one.
    return " ".join(["journalctl", "_TRANSPORT=kernel", "-S", shlex.quote(since), "-U", shlex.quote(until)])


def _symptoms(run: Run) -> str:
    lines: dict[str, list[str]] = {}
    for finding in run.symptoms:
        lines.setdefault(finding.rule_id, []).append(str(finding.number))
    return ", ".join(
        f"{rule_id} (line{'s' if len(numbers) > 1 else ''} {', '.join(numbers[:4])}{'...' if len(numbers) > 4 else ''})"
        for rule_id, numbers in lines.items()
    )


def render(report: Report, out: TextIO, options: RenderOptions) -> None:
    writer = _Writer(report, options)
    for number, block in enumerate(blocks(report), 1):
        writer.block(number, block)
        writer.add("")
    writer.findings()
    table = rows(report, options)
    if table:
        from tabulate import tabulate

        writer.add(tabulate(table, headers=HEADERS, tablefmt="simple"))
    elif report.summary.lines == 0 and report.summary.entries == 0:
        writer.add(writer.style("Nothing was read: no diagnosis.", fg="yellow", bold=True))
    else:
        writer.add(writer.style("No incidents.", fg="green", bold=True))
    out.write("\n".join(writer.lines) + "\n")
