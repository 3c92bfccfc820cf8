"""`-o html` and `logsift report -o html`: the post-mortem as one self-contained HTML page.

The page opens anywhere, offline: the stylesheet is inline, the timeline is inline SVG, there is
no font, script or image to fetch, and a Content-Security-Policy allows nothing but that one
stylesheet (by its hash), so that even markup that slipped through could load or run nothing.
Light and dark colour schemes follow the reader's setting; print gets its own rules (details
opened, links spelled out). The template is Jinja2 with autoescaping, so log text is escaped
everywhere it lands: text, attributes, SVG. Stable hooks for scripts and tests: the incident
element has `data-incident`, `data-unit`, `data-resolved`; each failed run's section has
`data-run="N"` and `data-class`.

Jinja2 is imported here only, so that `logsift --help` and other formats never load it.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, TextIO

from logsift import __version__
from logsift.diagnosis.changes import Change
from logsift.report.common import RenderOptions, clip
from logsift.report.document import Report
from logsift.report.story import Cause, Chapter, Line, Story, duration, spread, story
from logsift.sanitize import clean

WIDTH = 960  # the timeline's coordinate space; the SVG scales to the page
LEFT, RIGHT = 16, 944
BAR_Y, BAR_HEIGHT, AXIS = 26, 26, 60
MAX_BARS = 400  # runs drawn one by one; beyond, consecutive runs of one kind are one bar
# Tick spacing: the first that gives at most 8 ticks.
_STEPS = (1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400, 7 * 86400)


@dataclass(frozen=True, slots=True)
class _Bar:
    run: int
    kind: str  # failed, healthy, serving, other
    x: float
    y: float
    width: float
    height: float
    title: str
    label: str


@dataclass(frozen=True, slots=True)
class _Mark:
    x: float
    title: str
    label: str = ""


@dataclass(frozen=True)
class _Timeline:
    width: int
    height: int
    left: int
    right: int
    axis: int
    start: datetime
    ticks: tuple[_Mark, ...]
    bars: tuple[_Bar, ...]
    reloads: tuple[_Mark, ...]


def render(report: Report, out: TextIO, options: RenderOptions) -> None:
    out.write(page(report, options))


def page(report: Report, options: RenderOptions) -> str:
    told = story(report, options)
    template = _environment().get_template("report.html.j2")
    css = _css()
    text: str = template.render(
        story=told, summary=report.summary, version=__version__, css=_markup(css), policy=policy(css),
        title=_title(told), read=_read(report, options), nothing=_nothing(report),
        warnings=[clean(item) for item in (*report.summary.warnings, *report.rules.skipped)],
        timelines={chapter.number: _timeline(chapter, options) for chapter in told.chapters},
        changes_by_run={chapter.number: _by_run(chapter.changes.listed) for chapter in told.chapters},
        when=lambda value: options.clock(value) if isinstance(value, datetime) else "?",
        headline=lambda chapter: headline(chapter, options), duration=duration, spread=spread,
        evidence_line=_evidence_line, links_of=_links, text=lambda value: clip(clean(str(value))),
    )
    return text.rstrip("\n") + "\n"


def policy(css: str) -> str:
    """Nothing may load or run but the page's own stylesheet."""
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; script-src 'none'; "
            "object-src 'none'; base-uri 'none'; form-action 'none'")


@cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("logsift.report", "templates"),
        autoescape=True,  # every value, whatever the template's name
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
        keep_trailing_newline=True,
    )


@cache
def _css() -> str:
    return resources.files("logsift.report").joinpath("templates/report.css").read_text(encoding="utf-8")


def _markup(css: str) -> Any:
    import markupsafe

    return markupsafe.Markup(css)  # ours, not the log's: the one string inserted unescaped


def headline(chapter: Chapter, options: RenderOptions) -> str:
    where = chapter.unit + (f" on {chapter.host}" if chapter.host else "")
    times = "once" if chapter.failed == 1 else f"{chapter.failed} times"
    start = chapter.incident.first_seen
    since = f" from {options.clock(start)}" if start is not None else ""
    state = (f"resolved at {options.clock(chapter.incident.resolved_at)}" if chapter.incident.resolved
             else "still failing")
    down = ""
    if chapter.downtime is not None:
        down = f", down {'' if chapter.downtime_complete else 'at least '}{duration(chapter.downtime)}"
    causes = ", then ".join(chapter.causes)
    told = f" Cause{'s' if len(chapter.causes) > 1 else ''}: {causes}." if causes else ""
    return f"{where} failed {times}{since}, {state}{down}.{told}"


def _title(told: Story) -> str:
    if len(told.chapters) == 1:
        chapter = told.chapters[0]
        return f"Post-mortem: {chapter.unit}" + (f" on {chapter.host}" if chapter.host else "")
    return f"Post-mortem: {len(told.chapters)} incidents" if told.chapters else "Post-mortem: no incidents"


def _read(report: Report, options: RenderOptions) -> str:
    summary = report.summary
    noun = "entries" if report.origin.journal else "lines"
    parts = [f"{summary.lines:,} {noun}", f"{summary.runs} run{'s' if summary.runs != 1 else ''}",
             f"{summary.incidents} incident{'s' if summary.incidents != 1 else ''}"]
    if summary.since is not None and summary.until is not None:
        parts.append(f"{options.clock(summary.since)} to {options.clock(summary.until)}")
    return ", ".join(parts)


def _nothing(report: Report) -> str:
    summary = report.summary
    if summary.lines == 0 and summary.entries == 0:
        return "Nothing was read: no diagnosis."
    return f"No incidents: {summary.runs} run{'s' if summary.runs != 1 else ''} read, none failed."


def _by_run(changes: tuple[Change, ...]) -> list[tuple[int, list[Change]]]:
    grouped: dict[int, list[Change]] = {}
    for change in changes:
        grouped.setdefault(change.run, []).append(change)
    return list(grouped.items())


def _evidence_line(cause: Cause) -> tuple[Line, ...]:
    return tuple(line for line in cause.window if line.evidence) or cause.window[:1]


def _links(cause: Cause) -> list[str]:
    """References that are web addresses: anything else (a `javascript:` one in a site rule) is no link."""
    return [reference for reference in cause.references if reference.startswith(("https://", "http://"))]


# -- the timeline --------------------------------------------------------------------------------


def _timeline(chapter: Chapter, options: RenderOptions) -> _Timeline | None:
    """Each run as a bar from its start to its failure (or to its ready line), on one time axis."""
    spans: list[tuple[int, str, datetime, datetime, str]] = []
    for number, run in enumerate(chapter.incident.runs, 1):
        if run.started is None:
            continue
        if run.failed:
            end = run.ended or run.started
            cause = run.root_cause.rule_id if run.root_cause is not None else "cause not found"
            what = f"run {number}: failed after {duration((end - run.started).total_seconds())}: {cause}"
            spans.append((number, "failed", run.started, end, what))
        elif run.outcome == "healthy":
            ready = run.ready.record.timestamp if run.ready is not None else None
            end = ready if ready is not None and ready >= run.started else run.started
            what = f"run {number}: healthy, ready after {duration((end - run.started).total_seconds())}"
            spans.append((number, "healthy", run.started, end, what))
        else:
            end = run.ended or run.started
            spans.append((number, "other", run.started, end, f"run {number}: {run.outcome}"))
    if not spans:
        return None
    if len(spans) > MAX_BARS:
        spans = _merged(spans)
    start = min(item[2] for item in spans)
    finish = max(item[3] for item in spans)
    total = max((finish - start).total_seconds(), 1.0)
    finish_pad = total * 0.04  # room after the last bar (a healthy run goes on serving)
    scale = (RIGHT - LEFT) / (total + finish_pad)

    def x(moment: datetime) -> float:
        return round(LEFT + (moment - start).total_seconds() * scale, 1)

    labelled = len(spans) <= 24
    bars: list[_Bar] = []
    for number, kind, begin, end, what in spans:
        left = x(begin)
        width = max(round(x(end) - left, 1), 2.0)
        bars.append(_Bar(number, kind, left, BAR_Y, width, BAR_HEIGHT, clean(what), str(number) if labelled else ""))
        if kind == "healthy":
            rest = round(RIGHT - (left + width), 1)
            if rest > 0:
                bars.append(_Bar(number, "serving", left + width, BAR_Y, rest, BAR_HEIGHT,
                                 f"run {number}: serving", ""))
    step = next((step for step in _STEPS if (total + finish_pad) / step <= 8), _STEPS[-1])
    ticks = tuple(_Mark(round(LEFT + offset * scale, 1), "", _offset(offset))
                  for offset in range(0, int(total + finish_pad) + 1, step))
    reloads = tuple(
        _Mark(x(run.reload.timestamp), f"daemon-reload at {options.clock(run.reload.timestamp)} (line "
              f"{run.reload.number}), before run {number}")
        for number, run in enumerate(chapter.incident.runs, 1)
        if run.reload is not None and run.reload.timestamp is not None and start <= run.reload.timestamp
    )
    return _Timeline(WIDTH, AXIS + 24, LEFT, RIGHT, AXIS, start, ticks, tuple(bars), reloads)


def _merged(spans: list[tuple[int, str, datetime, datetime, str]]) -> list[tuple[int, str, datetime, datetime, str]]:
    """Consecutive runs of one kind as one bar: thousands of restarts stay a picture, not a page."""
    merged: list[list[Any]] = []
    for number, kind, begin, end, what in spans:
        if merged and merged[-1][1] == kind:
            merged[-1][3] = max(merged[-1][3], end)
            merged[-1][5] += 1
        else:
            merged.append([number, kind, begin, end, what, 1])
    return [(number, kind, begin, end, what if count == 1 else f"runs {number}-{number + count - 1}: {count} {kind} runs")
            for number, kind, begin, end, what, count in merged]


def _offset(seconds: int) -> str:
    if seconds == 0:
        return "0"
    return "+" + duration(seconds).replace(" 00s", "").replace(" 00m", "")


__all__ = ["headline", "page", "policy", "render"]
