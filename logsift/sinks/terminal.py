"""`--sink terminal`: state changes as a person reads them, one block each, as they happen
(what `logsift -f` prints): when an incident opens, the root cause with its evidence, what it
means, what to do and what to avoid; when another run fails, one line (the whole block again
when the cause changed); when it resolves, one line."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any, Sequence, TextIO

import click

from logsift.report.common import RenderOptions
from logsift.report.terminal import cut, wrap
from logsift.sanitize import safe
from logsift.sinks import Change, SinkOptions, stdout_gone

LABELS = {"opened": "FIRING", "failed-again": "FAILED AGAIN", "cause-changed": "CAUSE CHANGED",
          "resolved": "RESOLVED"}


class TerminalSink:
    name = "terminal"

    def __init__(self, target: str | None, options: SinkOptions, out: TextIO | None = None) -> None:
        self.out = out
        self.color = options.color
        self.width = options.width
        self.render = RenderOptions(color=options.color, width=options.width, utc=options.utc)

    def send(self, change: Change) -> None:
        out = self.out or sys.stdout
        try:
            out.write("\n".join(self.lines(change)) + "\n\n")
            out.flush()
        except BrokenPipeError:
            raise stdout_gone() from None

    def refresh(self, firing: Sequence[Change]) -> None:
        return None

    def style(self, text: str, **style: Any) -> str:
        return click.style(text, **style) if self.color else text

    def lines(self, change: Change) -> list[str]:
        kind = str(change.get("change") or "")
        label = LABELS.get(kind, kind.upper())
        colour = "green" if kind == "resolved" else ("yellow" if kind == "failed-again" else "red")
        when = self.render.clock(_time(change.get("at")))
        unit = safe(str(change.get("unit") or "(unit unknown)"))
        host = f" on {safe(str(change['host']))}" if change.get("host") else ""
        failed = int(change.get("failed_runs") or 0)
        runs = f"{failed} failed run{'s' if failed != 1 else ''}"
        head = f"{when}  {self.style(label, fg=colour, bold=True)}  {self.style(unit + host, bold=True)}"
        if kind == "resolved":
            return [f"{head}: healthy again after {runs}"]
        cause = str(change.get("class") or "cause not found")
        severity = str(change.get("severity") or "").upper()
        lines = [f"{head}: {runs}, {cause} [{severity}]"]
        previous = change.get("previous") or {}
        changed = bool(previous.get("class")) and previous.get("class") != change.get("class")
        if changed:
            lines.append(f"  the cause changed: was {previous['class']}")
        root = change.get("root_cause") or {}
        evidence = (root.get("evidence") or [change.get("failure") or {}])[0]
        if evidence.get("text"):
            prefix = f"  line {evidence.get('line')}: "
            lines.append(prefix + cut(str(evidence["text"]), self.width - len(prefix)))
        if kind == "failed-again" and not changed:
            return lines
        if change.get("title"):
            lines.extend(wrap(safe(str(change["title"])), self.width, "  "))
        if root.get("explanation"):
            lines += ["", "  " + self.style("What it means", bold=True)]
            lines.extend(wrap(safe(str(root["explanation"])), self.width, "    "))
        steps = change.get("remediation") or []
        if steps:
            lines += ["", "  " + self.style("What to do", bold=True)]
            for number, step in enumerate(steps, 1):
                lines.extend(wrap(safe(str(step)), self.width, "       ", f"    {number}. "))
        avoid = change.get("avoid") or []
        if avoid:
            lines += ["", "  " + self.style("Avoid", bold=True, fg="yellow")]
            for item in avoid:
                lines.extend(wrap(safe(str(item)), self.width, "      ", "    - "))
        return lines


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
