"""Slim copies of the events that past runs keep, so that a crash loop stays in bounded memory.

A crash loop of thousands of failed restarts reports every run, each with its findings, and
each finding holds the event it was found in: a traceback of forty frames, a build log. Once
the next run of the unit has started, nothing reads more of a past run's event than what the
reports show of it, so the event is cut to those records (the same Record objects):

- the first and the last record (the event's line and times, `Run.time_to_failure`);
- KEPT_AROUND records on each side of every finding's record (the post-mortem's excerpt around
  an evidence line, logsift.report.story: CONTEXT_BEFORE and CONTEXT_AFTER lines);
- the records from the end back to the first that has a line other than a blank or the
  traceback header (the line that says what failed, for a traceback cut before its exception
  line: logsift.report.document._telling_line).

`tests/test_diagnosis_compact.py` checks that every report is the same with and without.
"""

from __future__ import annotations

from dataclasses import replace

from logsift.records import Event, Finding

KEPT_AROUND = 3  # at least the report's CONTEXT_BEFORE and CONTEXT_AFTER (a test checks)
_HEADER = "Traceback (most recent call last)"


def slim(event: Event, lines: set[int]) -> Event:
    """`event` with only the records that show the findings on `lines`."""
    records = event.records
    count = len(records)
    if count <= 2 * KEPT_AROUND + 3:
        return event
    kept = {0, count - 1}
    for index, record in enumerate(records):
        if any(record.line <= line < record.line + record.lines for line in lines):
            kept.update(range(max(0, index - KEPT_AROUND), min(count, index + KEPT_AROUND + 1)))
    for index in range(count - 1, -1, -1):
        kept.add(index)
        if any(text.strip() and _HEADER not in text for text in records[index].message.split("\n")):
            break
    if len(kept) >= count:
        return event
    return replace(event, records=tuple(records[index] for index in sorted(kept)))


def compact(findings: list[Finding], *others: Finding | None) -> tuple[list[Finding], list[Finding | None]]:
    """`findings` and `others` (a run's ready line, its failure line) with slim events; the
    findings of one event share one slim copy, which keeps what each of them shows."""
    everything = [*findings, *(finding for finding in others if finding is not None)]
    lines: dict[int, set[int]] = {}
    for finding in everything:
        lines.setdefault(id(finding.event), set()).add(finding.line)
    slimmed: dict[int, Event] = {}

    def cut(finding: Finding) -> Finding:
        key = id(finding.event)
        event = slimmed.get(key)
        if event is None:
            event = slimmed[key] = slim(finding.event, lines[key])
        return finding if event is finding.event else replace(finding, event=event)

    return [cut(finding) for finding in findings], [None if finding is None else cut(finding) for finding in others]
