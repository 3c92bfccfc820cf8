"""`logsift explain FILE [--line N]`: why an event got its class (rules tried, matched, excluded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from logsift import read as readers
from logsift.check import explain as explanation
from logsift.check.explain import EventExplanation, Explanation, LineOutsideEvents
from logsift.cli.options import patterns_option, rules_from
from logsift.records import Finding
from logsift.report.common import clip
from logsift.sanitize import clean, clean_block, dumps, redact, redact_block

MAX_EVENT_LINES = 60  # a longer event shows its head and tail: the exception is at the end
HEAD_LINES = 15


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-n", "--line", "line", type=click.IntRange(min=1), metavar="N",
              help="Explain the event that holds input line N (default: the root-cause event of each failed run).")
@click.option("-f", "--format", "output", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
@click.option("-i", "--input-format", default="auto", show_default=True, metavar="NAME",
              help="Input format of FILE; auto-detected by default.")
@patterns_option
def explain(file: Path, line: int | None, output: str, input_format: str, pattern_dirs: tuple[Path, ...]) -> int:
    """Show why an event of FILE got its class.

    For the event: its lines, kind and stream, the rules the prefilter selected for it, the
    rules that matched (line and captures). For its run: every finding and its fate (root
    cause, explained by another finding, outranked) and why the root cause won.

    \b
      logsift explain journal.txt
      logsift explain journal.txt --line 227 --format json
    """
    rules = rules_from(pattern_dirs)
    stream = readers.open_input(str(file))
    try:
        explanations = explanation.explain(readers.read(stream, str(file), input_format), rules, line)
    finally:
        stream.close()
    if output == "json":
        click.echo(dumps({"version": 1, "events": [_as_dict(item) for item in explanations]}))
        return 0
    if not explanations:
        click.echo("No failed run with a root cause in this input; name a line to explain with --line N.")
        return 0
    click.echo("\n\n".join("\n".join(_text(item)) for item in explanations))
    return 0


# -- text ------------------------------------------------------------------------------------


def _text(item: Explanation) -> list[str]:
    if isinstance(item, LineOutsideEvents):
        return [
            f"Line {item.line} is in no event: no rule's literals occur in it (the prefilter skipped it),",
            "and it does not continue a traceback, build output, CUDA banner or NCCL burst.",
            f"  {item.line} | {clip(clean(item.text))}",
        ]
    event = item.event
    first = event.first
    stream = ", ".join(f"{name} {clean(str(value))}" for name, value in
                       (("host", first.host), ("unit", first.unit), ("identifier", first.identifier),
                        ("pid", first.pid)) if value is not None) or "no journal fields"
    count = sum(record.lines for record in event.records)
    lines = [f"Event at line {event.line}: kind {event.kind}, {count} line{'s' if count != 1 else ''}; "
             f"stream: {stream}"]
    lines.extend(_event_lines(item))
    lines.append("")
    if item.tried:
        lines.append("Rules the prefilter selected (a literal of theirs occurs in the event):")
        lines.extend(f"  {tried.rule_id}{' [[context]]' if tried.kind == 'context' else ''}: "
                     f"{tried.literal!r} on line {tried.line}" for tried in item.tried)
    else:
        lines.append("Rules the prefilter selected: none")
    if item.matched:
        lines.append("Rules that matched:")
        for finding in item.matched:
            lines.append(f"  {finding.rule_id} on line {finding.line} (priority {finding.priority}, "
                         f"{finding.severity.label}){_captures(finding)}")
    else:
        lines.append("Rules that matched: none")
    for dropped in item.dropped:
        lines.append(f"Matched but dropped: {dropped.rule_id} on line {dropped.line} reads the same line as "
                     f"{dropped.by}, which explains it")
    if item.not_matched:
        lines.append(f"Selected but no regex matched: {', '.join(item.not_matched)}")
    for fact in item.facts:
        values = " ".join(f"{key}={clean(value)!r}" for key, value in sorted(fact.fields.items()))
        lines.append(f"Context for {fact.rule_id} on line {fact.line}: {values}")
    lines.append("")
    lines.extend(_run_text(item))
    return lines


def _event_lines(item: EventExplanation) -> list[str]:
    numbered: list[tuple[int, str]] = []
    for record in item.event.records:
        for offset, text in enumerate(record.message.split("\n")):
            numbered.append((record.line + offset, text))
    marked = {finding.line for finding in item.matched}
    if len(numbered) > MAX_EVENT_LINES:
        tail = MAX_EVENT_LINES - HEAD_LINES
        skipped = len(numbered) - MAX_EVENT_LINES
        numbered = [*numbered[:HEAD_LINES], (0, f"... {skipped} lines ..."), *numbered[-tail:]]
    width = max(len(str(number)) for number, _ in numbered)
    shown = []
    # Cleaned together: a secret over several lines (a PEM key) is hidden on each of them.
    for (number, _), text in zip(numbered, clean_block([text for _, text in numbered]), strict=True):
        label = str(number).rjust(width) if number else " " * width
        mark = ">" if number in marked else " "
        shown.append(f" {mark}{label} | {clip(text)}")
    return shown


def _run_text(item: EventExplanation) -> list[str]:
    run = item.run
    if run is None:
        return ["Run: none (the event is outside every run of a unit)"]
    where = f"{clean(run.unit or '(unit unknown)')}" + (f" on {clean(run.host)}" if run.host else "")
    ending = f", {run.exit or run.result}" if (run.exit or run.result) else ""
    lines = [f"Run: {where}, lines {run.first_line}-{run.last_line}, {run.outcome}{ending}"]
    if not item.fates:
        lines.append("  no findings in this run")
    width = max((len(fate.finding.rule_id) for fate in item.fates), default=0)
    for fate in item.fates:
        lines.append(f"  line {str(fate.finding.line).rjust(6)}  {fate.finding.rule_id.ljust(width)}  "
                     f"{fate.status}: {fate.reason}")
    if run.root_cause is not None:
        lines.append(f"Why {run.root_cause.rule_id} won: {item.why}")
    elif item.why:
        lines.append(f"No root cause: {item.why}")
    elif not run.failed:
        lines.append(f"No root cause: the run did not fail ({run.outcome}); its findings are not an incident")
    return lines


def _captures(finding: Finding) -> str:
    if not finding.fields:
        return ""
    return ": " + " ".join(f"{key}={clean(value)!r}" for key, value in sorted(finding.fields.items()))


# -- json ------------------------------------------------------------------------------------


def _finding_dict(finding: Finding) -> dict[str, Any]:
    return {
        "class": finding.rule_id, "line": finding.line, "text": clip(redact(finding.text)),
        "priority": finding.priority, "severity": finding.severity.label,
        "fields": {key: redact(value) for key, value in finding.fields.items()},
    }


def _as_dict(item: Explanation) -> dict[str, Any]:
    if isinstance(item, LineOutsideEvents):
        return {"line": item.line, "text": clip(redact(item.text)), "event": None}
    event = item.event
    first = event.first
    run = item.run
    return {
        "line": event.line,
        "event": {
            "kind": event.kind,
            "stream": {"host": first.host, "unit": first.unit, "identifier": first.identifier, "pid": first.pid},
            "lines": [{"line": record.line, "text": clip(text)} for record, text in
                      zip(event.records, redact_block([record.message for record in event.records]), strict=True)],
        },
        "tried": [{"class": tried.rule_id, "kind": tried.kind, "line": tried.line, "literal": tried.literal}
                  for tried in item.tried],
        "matched": [_finding_dict(finding) for finding in item.matched],
        "dropped": [{"class": dropped.rule_id, "line": dropped.line, "explained_by": dropped.by}
                    for dropped in item.dropped],
        "not_matched": list(item.not_matched),
        "context": [{"class": fact.rule_id, "line": fact.line,
                     "fields": {key: redact(value) for key, value in fact.fields.items()}} for fact in item.facts],
        "run": None if run is None else {
            "unit": run.unit, "host": run.host, "first_line": run.first_line, "last_line": run.last_line,
            "outcome": run.outcome, "exit": run.exit, "result": run.result,
            "root_cause": run.root_cause.rule_id if run.root_cause else None,
            "findings": [{**_finding_dict(fate.finding), "status": fate.status, "reason": fate.reason}
                         for fate in item.fates],
            "why": item.why,
        },
    }
