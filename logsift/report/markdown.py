"""`-o markdown` and `logsift report`: the post-mortem as Markdown (CommonMark with GitHub's tables).

The story (report/story.py) rendered for a ticket, a wiki page or a pull request. Log text is
untrusted: it is made printable and redacted first (terminal escapes, bidirectional overrides and
secrets gone), then escaped for where it stands, so that nothing from a log becomes markup: prose
escapes Markdown's and HTML's punctuation, code spans and fenced blocks take a fence longer than
any backtick run inside, table cells escape `|`.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Iterable, TextIO

from logsift import __version__
from logsift.diagnosis import Noted
from logsift.report.common import RenderOptions, clip
from logsift.report.document import Report
from logsift.report.story import Cause, Chapter, Group, Line, Spans, Story, duration, spread, story
from logsift.sanitize import clean

_PUNCTUATION = re.compile(r"([\\`*_\[\]<>&|~#!])")
_BACKTICKS = re.compile(r"`+")
MAX_CELL = 160  # characters of a value in a table cell; the whole value is in the section below


def prose(text: str) -> str:
    """Text that renders as itself in Markdown prose: no emphasis, link, HTML or table cell break.
    Runs of white space (a newline too) become one space; a space at either end stays, so that
    prose next to a code span keeps its spacing."""
    flat = " ".join(text.split())
    if flat and text[:1].isspace():
        flat = " " + flat
    if flat and text[-1:].isspace():
        flat += " "
    return _PUNCTUATION.sub(r"\\\1", flat)


def code(text: str, table: bool = False) -> str:
    """An inline code span holding `text` whatever backticks it has; in a table, `|` escaped too."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text[0] in "` " or text[-1] in "` " else text
    if table:
        padded = padded.replace("|", "\\|")
    return f"{fence}{padded}{fence}"


def block(lines: Iterable[str]) -> list[str]:
    """A fenced code block that no line inside can close."""
    body = list(lines)
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *body, fence]


def spans(parts: Spans, table: bool = False) -> str:
    return "".join(code(text, table) if is_code else prose(text) for is_code, text in parts)


class _Writer:
    def __init__(self, told: Story, options: RenderOptions) -> None:
        self.story = told
        self.report = told.report
        self.options = options
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def clock(self, value: object) -> str:
        return self.options.clock(value) if isinstance(value, datetime) else "?"

    # -- the document ----------------------------------------------------------------------

    def document(self) -> None:
        told = self.story
        summary = self.report.summary
        self.add("# Post-mortem report", "")
        if not told.chapters:
            nothing = summary.lines == 0 and summary.entries == 0
            self.add("Nothing was read: no diagnosis." if nothing else
                     f"No incidents: {summary.runs} run{'s' if summary.runs != 1 else ''} read, none failed.", "")
        elif len(told.chapters) > 1 or told.fleets:
            for chapter in told.chapters:
                self.add(f"- {self.headline(chapter)}")
            for unit, rule_id, hosts in told.fleets:
                self.add(f"- The same cause, {code(rule_id)}, took {prose(unit)} down on {len(hosts)} hosts: "
                         f"{prose(', '.join(hosts))}.")
            self.add("")
        for chapter in told.chapters:
            self.chapter(chapter)
        if told.findings:
            self.add("## Findings that did not stop a service", "")
            self.findings(told.findings)
        self.footer()

    def headline(self, chapter: Chapter) -> str:
        """One sentence a manager understands."""
        where = f"{prose(chapter.unit)}" + (f" on {prose(chapter.host)}" if chapter.host else "")
        failed = chapter.failed
        times = "once" if failed == 1 else f"{failed} times"
        start = chapter.incident.first_seen
        since = f" from {self.clock(start)}" if start is not None else ""
        if chapter.incident.resolved:
            state = f"resolved at {self.clock(chapter.incident.resolved_at)}"
        else:
            state = "still failing"
        down = ""
        if chapter.downtime is not None:
            down = f", down {duration(chapter.downtime)}" if chapter.downtime_complete else \
                f", down at least {duration(chapter.downtime)}"
        causes = ", then ".join(code(rule_id) for rule_id in chapter.causes)
        cause = f" Cause{'s' if len(chapter.causes) > 1 else ''}: {causes}." if causes else ""
        return f"**Incident {chapter.number}: {where} failed {times}{since}, {state}{down}.**{cause}"

    def chapter(self, chapter: Chapter) -> None:
        where = f"{prose(chapter.unit)}" + (f" on {prose(chapter.host)}" if chapter.host else "")
        self.add(f"## Incident {chapter.number}: {where}", "", self.headline(chapter), "")
        self.facts_table(chapter)
        self.timeline(chapter)
        self.changes(chapter)
        self.fixed(chapter)
        self.attempts(chapter)
        self.symptoms(chapter)
        if chapter.findings:
            self.add("### Findings that did not stop the service", "")
            self.findings(chapter.findings)

    def facts_table(self, chapter: Chapter) -> None:
        incident = chapter.incident
        rows = [("Unit", code(chapter.unit, table=True))]
        if chapter.host:
            others = f" (the same cause on {prose(', '.join(chapter.fleet))} too)" if chapter.fleet else ""
            rows.append(("Host", prose(chapter.host) + others))
        if chapter.first_failure is not None:
            rows.append(("First failure", f"{self.clock(chapter.first_failure)} (run 1, started "
                         f"{self.clock(incident.runs[0].started)})"))
        if incident.resolved:
            healthy = chapter.resolved_by
            ready = ""
            if healthy is not None and healthy.run.ready is not None and healthy.run.ready.record.timestamp:
                ready = f", ready at {self.clock(healthy.run.ready.record.timestamp)}"
            number = healthy.first if healthy is not None else len(incident.runs)
            rows.append(("Resolved", f"{self.clock(incident.resolved_at)}: run {number} came up healthy{ready}"))
        else:
            last = incident.last_seen
            rows.append(("State", "still failing" + (f": the last failure at {self.clock(last)}" if last else "")))
        rows.append(("Failed runs", f"{chapter.failed} of {len(incident.runs)}"))
        if chapter.downtime is not None:
            how = ("from the first failed start to the healthy run's ready line" if chapter.downtime_complete
                   else "from the first failed start to the last failure, and counting")
            rows.append(("Downtime", f"{duration(chapter.downtime)} ({how})"))
        rows.append(("Severity", incident.severity.label))
        self.add("| | |", "| --- | --- |", *(f"| {name} | {value} |" for name, value in rows), "")

    # -- timeline ------------------------------------------------------------------------------

    def timeline(self, chapter: Chapter) -> None:
        self.add("### Timeline", "", "| Run | Started | Time to failure | Outcome | Root cause | Exit |",
                 "| --- | --- | --- | --- | --- | --- |")
        for group in chapter.groups:
            run = group.run
            started = self.clock(run.started) if run.started is not None else f"line {run.first_line}"
            if group.count > 1:
                started += f" to {self.clock(group.runs[-1].started)}"
            if group.reloads:
                started += " (after a daemon-reload)" if group.count == 1 else f" ({group.reloads} after a daemon-reload)"
            outcome = group.outcome
            if outcome == "healthy" and group.ready_after is not None:
                outcome += f" (ready after {duration(group.ready_after)})"
            cause = "-"
            if group.cause is not None:
                cause = f"{code(group.cause.rule_id, table=True)}: {spans(group.cause.title, table=True)}"
            elif run.failed:
                cause = "not found in these lines"
            label = group.label if group.count == 1 else f"{group.label} ({group.count} runs)"
            ttf = spread(group.time_to_failure) if run.failed else "-"
            self.add(f"| {label} | {started} | {ttf} | {outcome} | {cause} | {prose(group.exit) or '-'} |")
        self.add("")

    # -- what changed --------------------------------------------------------------------------

    def changes(self, chapter: Chapter) -> None:
        changes = chapter.changes
        self.add("### What changed between attempts", "")
        if changes.columns:
            header = " | ".join(prose(label) for _, label in changes.columns)
            self.add(f"| Run | {header} |", "| --- |" + " --- |" * len(changes.columns))
            for group, cells in changes.rows:
                shown = []
                for cell in cells:
                    if cell.value is None:
                        shown.append("(not shown)")
                        continue
                    value = code(clip(cell.value, MAX_CELL), table=True)
                    if cell.mark == "new":
                        value = f"**{value}** (first shown)"
                    elif cell.mark == "changed":
                        value = f"**{value}** (was {code(clip(cell.before or '', MAX_CELL), table=True)})"
                    shown.append(value)
                self.add(f"| {group.label} | {' | '.join(shown)} |")
            self.add("")
            by_run: dict[int, list[str]] = {}
            for change in changes.listed:
                label = prose(change.label)
                if change.appeared:
                    told = f"{label} {code(clip(change.after, MAX_CELL))} first shown (line {change.fact.line})"
                else:
                    told = (f"{label} changed from {code(clip(change.before or '', MAX_CELL))} to "
                            f"{code(clip(change.after, MAX_CELL))} (line {change.fact.line})")
                by_run.setdefault(change.run, []).append(told)
            self.add(*(f"- Run {run}: {'; '.join(items)}." for run, items in by_run.items()))
        elif len(chapter.incident.runs) == 1:
            self.add("One run only: nothing to compare it with.")
        else:
            self.add("No fact that logsift reads (CUDA_HOME, the nvcc used, versions, the GPU arch, the model, "
                     "the launch arguments, Environment= lines) differed between the runs that showed it.")
        if changes.reloads:
            runs = ", ".join(str(number) for number in changes.reloads)
            if not changes.columns:
                self.add("")
            self.add(f"- systemd reloaded its unit files (daemon-reload) before run{'s' if len(changes.reloads) > 1 else ''}"
                     f" {runs}: the unit or a drop-in may have changed there.")
        if changes.same:
            same = "; ".join(f"{prose(fact.label)} {code(clip(fact.value, MAX_CELL))}" for fact in changes.same)
            self.add("", f"The same in every run that showed it: {same}.")
        self.add("")

    def fixed(self, chapter: Chapter) -> None:
        fix = chapter.fix
        if fix is None:
            if not chapter.incident.resolved:
                self.add("### Still failing", "", "No run came up healthy after the failures: the last failed run's "
                         "root cause below is where to start.", "")
            return
        healthy = chapter.incident.runs[fix.run - 1]
        self.add("### The fix", "")
        start = self.clock(healthy.started) if healthy.started is not None else f"line {healthy.first_line}"
        self.add(f"Run {fix.run} started at {start} and came up healthy.", "")
        if fix.differs:
            self.add("What it showed that no failed run did:", "")
            self.add(*(f"- {prose(fact.label)} {code(fact.value)} (line {fact.line})" for fact in fix.differs), "")
        if fix.only_healthy:
            self.add("Shown only by the healthy run (the failed runs did not show these at all):", "")
            self.add(*(f"- {prose(fact.label)} {code(fact.value)} (line {fact.line})" for fact in fix.only_healthy), "")
        if not fix.differs and not fix.only_healthy:
            self.add("The facts it showed are those of the failed runs: what changed is not in the log." if fix.shown
                     else "It showed no fact that logsift reads: what changed is not in the log.", "")
        if fix.reload and healthy.reload is not None:
            command = f"systemctl cat {chapter.incident.unit}" if chapter.incident.unit else "systemctl cat UNIT"
            self.add(f"systemd reloaded its unit files before it ({self.clock(healthy.reload.timestamp)}, line "
                     f"{healthy.reload.number}): the unit or a drop-in changed; {code(clean(command))} shows what it "
                     "runs with now.", "")
        if fix.gone:
            self.add(f"The causes of the failed runs did not recur: {', '.join(code(rule_id) for rule_id in fix.gone)}.",
                     "")
        if fix.recurred:
            self.add(f"{', '.join(code(rule_id) for rule_id in fix.recurred)} showed up in the healthy run too, as a "
                     "finding that did not stop it (below): the cause is still there, worked around.", "")

    # -- each attempt ---------------------------------------------------------------------------

    def attempts(self, chapter: Chapter) -> None:
        failed = [group for group in chapter.groups if group.run.failed]
        if not failed:
            return
        self.add("### Attempts", "")
        for group in failed:
            self.attempt(chapter, group)
        if chapter.command:
            self.add("The whole of the last failed run:", "", *block([chapter.command]), "")

    def attempt(self, chapter: Chapter, group: Group) -> None:
        run = group.run
        name = f"Run {group.label}" if group.count == 1 else f"Runs {group.label} ({group.count} runs alike)"
        cause = group.cause
        heading = f"#### {name}: {code(cause.rule_id)}" if cause is not None else f"#### {name}: cause not found"
        self.add(heading, "")
        started = self.clock(run.started) if run.started is not None else f"line {run.first_line}"
        ttf = spread(group.time_to_failure)
        after = f", failed after {ttf}" if ttf != "-" else ", failed"
        exit_text = f" ({prose(group.exit)})" if group.exit else ""
        self.add(f"Started {started}{after}{exit_text}.", "")
        if cause is None:
            self.add("No rule names the cause in these lines: read the whole run.", "")
            return
        severity = cause.severity.upper()
        self.add(f"**{spans(cause.title)}** ({severity})", "")
        if cause.suggestion:
            self.add(f"Suggested by the model (confidence {cause.finding.confidence:.2f}): no rule matched; check the "
                     "evidence before acting on it.", "")
        self.evidence(cause)
        if cause.explained_in is not None:
            self.add(f"What it means and what to do: as for {prose(cause.explained_in)} above.", "")
            return
        if cause.explanation:
            self.add("**What it means.** " + "\n\n".join(spans(paragraph) for paragraph in cause.explanation), "")
        if cause.remediation:
            self.add("**What to do.**", "")
            self.add(*(f"{index}. {spans(step)}" for index, step in enumerate(cause.remediation, 1)), "")
        if cause.avoid:
            self.add("**Avoid.**", "")
            self.add(*(f"- {spans(step)}" for step in cause.avoid), "")
        links = [reference for reference in cause.references if reference.startswith(("https://", "http://"))]
        if links:
            self.add("References: " + ", ".join(f"<{prose_url(link)}>" for link in links), "")

    def evidence(self, cause: Cause) -> None:
        record = cause.finding.record
        when = self.clock(record.timestamp) if record.timestamp is not None else None
        where = ", ".join(part for part in (when, cause.where) if part)
        self.add(f"Evidence, line {cause.finding.number}" + (f" ({prose(where)})" if where else "") + ":", "")
        self.add(*block(_numbered(cause.window)), "")
        if cause.context:
            self.add("Values from elsewhere in the run:", "", *block(_numbered(cause.context)), "")

    # -- symptoms and findings ------------------------------------------------------------------

    def symptoms(self, chapter: Chapter) -> None:
        if not chapter.symptoms:
            return
        self.add("### Symptoms, not causes", "", "These showed up too; they follow from the root causes above, so "
                 "chasing them fixes nothing.", "")
        self.add("| Class | Runs | Lines | First line | Why it is not the cause |", "| --- | --- | --- | --- | --- |")
        for symptom in chapter.symptoms:
            runs = ", ".join(str(number) for number in symptom.runs)
            self.add(f"| {code(symptom.rule_id, table=True)} | {runs} | {symptom.count} | {symptom.line}: "
                     f"{code(clip(symptom.text, MAX_CELL), table=True)} | {prose(symptom.reason)} |")
        self.add("")

    def findings(self, findings: Iterable[Noted]) -> None:
        self.add("| Line | Unit | Class | Times | Text |", "| --- | --- | --- | --- | --- |")
        for noted in findings:
            finding = noted.finding
            self.add(f"| {finding.number} | {prose(clean(noted.unit or '-'))} | {code(finding.rule_id, table=True)} | "
                     f"{noted.count} | {code(clip(clean(finding.text), MAX_CELL), table=True)} |")
        self.add("", "A finding in a run that did not fail is not an incident: the service came up after it. "
                 "It may still be worth fixing before it becomes one.", "")

    def footer(self) -> None:
        summary = self.report.summary
        noun = "entries" if self.report.origin.journal else "lines"
        sources = ", ".join(code(source) for source in summary.sources) or "the input"
        parts = [f"{summary.lines:,} {noun}", f"{summary.runs} run{'s' if summary.runs != 1 else ''}",
                 f"{summary.incidents} incident{'s' if summary.incidents != 1 else ''}"]
        if summary.since is not None and summary.until is not None:
            parts.append(f"{self.clock(summary.since)} to {self.clock(summary.until)}")
        self.add("---", "", f"Written by logsift {__version__} from {sources}: {', '.join(parts)}.")
        for warning in summary.warnings:
            self.add("", f"Warning: {prose(clean(warning))}")
        for skipped in self.report.rules.skipped:
            self.add("", f"Skipped a site rule: {prose(clean(skipped))}")


def prose_url(url: str) -> str:
    """A URL from a rule file as an autolink: nothing that would end it early."""
    return "".join(char for char in url if char not in "<> \t\n")


def _numbered(lines: Iterable[Line]) -> list[str]:
    shown = list(lines)
    width = max((len(str(line.number)) for line in shown), default=1)
    return [f"{'>' if line.evidence else ' '} {str(line.number).rjust(width)} | {line.text}" for line in shown]


def render(report: Report, out: TextIO, options: RenderOptions) -> None:
    writer = _Writer(story(report, options), options)
    writer.document()
    out.write("\n".join(writer.lines).rstrip("\n") + "\n")
