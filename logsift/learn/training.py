"""What the learned fallback reads, and what it learns from.

The model names a class for one *line* of an event, the way a rule does: a failure class is
almost always recognisable from one line ("fatal error: curand.h: No such file or directory"),
and a line-level model keeps the evidence a person can check. `candidate_lines` picks the lines
of an event worth asking about (exception and error lines, not traceback frames or compiler
command lines); training and prediction both go through it, so they see the same kind of text.

Training data comes from the rule library itself, never from the evaluation corpus:
- every line of an annotated sample block (`patterns/<area>/<name>.log`) that a class rule
  matches is an example of that class; the other candidate lines of the block are examples of
  NONE ("this line names no class"), and so are lines that only catch-alls, wrappers or systemd
  lifecycle rules match, because those say *that* something failed, not why;
- scenario fixtures (`fixtures/**/expected.json` beside `journal.txt`) add the line each expected
  run names as its cause, and their other candidate lines as NONE.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from logsift.learn.masking import mask, strip_prefix
from logsift.match import Matched, Matcher
from logsift.pipeline import Counts, match_events
from logsift.read.text import TextReader
from logsift.records import Event, Finding
from logsift.rules import Rule, RuleSet
from logsift.rules.samples import parse_samples

NONE = "none"  # the label of lines that name no failure class
MAX_CANDIDATES = 40  # per event: the first and last halves when there are more
MAX_LINE = 400  # characters of one line the model reads

_FAILURE = re.compile(
    r"(?i)\b(?:errors?|fatal|fail(?:ed|ure|s|ing)?|exception|killed|abort(?:ed)?|panic|"
    r"segmentation fault|core dumped|cannot|can't|could not|couldn't|unable to|not found|no such|"
    r"refused|denied|timed out|timeout|unsupported|not supported|insufficient|invalid|illegal|"
    r"out of memory|mismatch|incompatible|corrupt(?:ed)?|undefined symbol|not available|exceeded|"
    r"exhausted|requires?|too old|no module named|fault(?:s|ed)?|crash(?:ed)?|died|terminated|"
    r"not responding|fallen off|halted|unrecoverable|uncorrectable|assert(?:ion)?)\b"
)
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Warning)\b")
# A line its own logger marks as informational (in the prefix, or as the line's first word).
_QUIET = re.compile(r"^\[?(?:INFO|DEBUG|TRACE)\b|^I\d{4} |\bNCCL INFO\b|\blevel=(?:INFO|DEBUG)\b")
_QUIET_PREFIX = re.compile(r"\b(?:INFO|DEBUG|TRACE)\b|^\[?I\d{4} ")
# A line its logger marks as an error: a message there needs no failure word to count.
_LOUD_PREFIX = re.compile(r"\b(?:ERROR|CRITICAL|FATAL)\b|^(?:\[rank\d+\]:)?\[?[EF]\d{4} ")
# Lines that carry no words of the failure itself.
_NOISE = re.compile(
    r"^(?:Traceback \(most recent call last\)|File \"[^\"]*\", line \d+|frame #\d+:|"
    r"The above exception was the direct cause|During handling of the above exception|"
    r"[\^~|\s]+$|\[\d+/\d+\] |-- |\d+ \|)"
)


def weak(rule: Rule | None) -> bool:
    """A finding of this rule does not claim its event: catch-alls, wrappers, low-priority
    generic classes (systemd's own lines) and signals say *that* something failed, not why."""
    return rule is None or rule.weak


def model_classes(rules: RuleSet) -> set[str]:
    return {rule.id for rule in rules.rules if not weak(rule)}


def event_lines(event: Event) -> Iterator[tuple[int, str]]:
    for record in event.records:
        if record.lines > 1 or "\n" in record.message:
            for offset, text in enumerate(record.message.split("\n")):
                yield record.line + offset, text
        else:
            yield record.line, record.message


def candidate_lines(event: Event) -> list[tuple[int, str]]:
    """(line number, text) of the lines of an event that the model is asked about."""
    found: list[tuple[int, str]] = []
    seen: set[str] = set()
    after_frame = False
    traceback = event.kind == "traceback"
    for number, raw in event_lines(event):
        body = strip_prefix(raw)
        quiet = _quiet(raw, body)
        indented = body[:1] in (" ", "\t")
        stripped = body.strip()
        if not stripped or _NOISE.match(stripped):
            after_frame = stripped.startswith('File "')
            continue
        if traceback and indented and after_frame and not stripped.startswith("raise "):
            # The source line under a frame is code, not a message; but a `raise` with its text
            # is the message when the exception line itself was cut off.
            after_frame = False
            continue
        after_frame = False
        if quiet or not _failure_like(raw, body, stripped):
            continue
        key = mask(stripped)
        if key in seen:
            continue
        seen.add(key)
        found.append((number, stripped[:MAX_LINE]))
    if len(found) > MAX_CANDIDATES:
        half = MAX_CANDIDATES // 2
        found = found[:half] + found[-half:]
    return found


def needs_model(matched: Matched, rules: RuleSet) -> bool:
    """An event that looks like a failure and that no class rule claimed."""
    event = matched.event.event
    if event.kind == "lifecycle":
        return False
    if any(not weak(rule) or "consequence" in rule.tags
           for rule in (rules.by_id.get(finding.rule_id) for finding in matched.findings) if rule is not None):
        return False  # a class names it, or a rule says it follows from a failure elsewhere
    if event.kind in ("traceback", "build"):
        return True
    for _, raw in event_lines(event):
        body = strip_prefix(raw)
        text = body.strip()
        if text and not _NOISE.match(text) and _failure_like(raw, body, text) and not _quiet(raw, body):
            return True
    return False


def _failure_like(raw: str, body: str, text: str) -> bool:
    if _FAILURE.search(text) or _EXCEPTION.match(text) or text.startswith("raise "):
        return True
    # An error-level line counts by its level alone, unless it is indented: then it is a
    # traceback's source line or a continuation logged one line at a time, not a message.
    prefix = raw[: len(raw) - len(body)]
    return bool(prefix and _LOUD_PREFIX.search(prefix) and body[:1] not in (" ", "\t"))


def _quiet(raw: str, body: str) -> bool:
    prefix = raw[: len(raw) - len(body)]
    return bool(_QUIET.search(body.strip()) or (prefix and _QUIET_PREFIX.search(prefix)))


@dataclass(frozen=True, slots=True)
class Example:
    text: str  # masked line
    label: str  # a class id, or NONE
    group: str  # the sample block or fixture it came from: cross-validation keeps groups apart


def model_text(line: str) -> str:
    return mask(strip_prefix(line.strip()))[:MAX_LINE]


def training_examples(
    rules: RuleSet, fixture_dirs: Iterable[Path] = (), exclude: Iterable[str] = ()
) -> list[Example]:
    """Examples from the rule library's samples and the scenario fixtures, minus `exclude`d classes.

    An excluded class is gone entirely: its sample file is not read and a line that its rule
    matches in another file is dropped, not relabelled NONE, so the model never sees it.
    """
    excluded = set(exclude)
    matcher = Matcher(rules, near=True)  # the events the fallback is shown
    classes = model_classes(rules) - excluded
    examples: list[Example] = []
    for rule in rules.rules:
        if rule.id in excluded or not rule.sample_path.exists():
            continue
        blocks, _ = parse_samples(rule.sample_path)
        for block in blocks:
            if block.rule_id in excluded:
                continue
            group = f"{rule.sample_path.name}:{block.line}"
            matched = _match(block.lines, matcher)
            if block.kind == "ruleid" and not any(
                finding.rule_id == block.rule_id for item in matched for finding in item.findings
            ):
                continue  # a sample its own rule misses: the sample check reports it
            examples.extend(_label(matched, classes, excluded, {}, group))
    for directory in fixture_dirs:
        for expected in sorted(directory.rglob("expected.json")):
            journal = expected.with_name("journal.txt")
            if journal.exists():
                truth = _expected_lines(expected)
                lines = journal.read_text(encoding="utf-8", errors="replace").splitlines()
                group = str(expected.parent.name)
                examples.extend(_label(_match(lines, matcher), classes, excluded, truth, group))
    return _deduplicate(examples)


def _match(lines: list[str], matcher: Matcher) -> list[Matched]:
    return list(match_events(matcher, TextReader("training").read(lines), Counts()))


def _label(
    matched: list[Matched], classes: set[str], excluded: set[str], truth: dict[int, str], group: str
) -> Iterator[Example]:
    for item in matched:
        event = item.event.event
        if event.kind == "lifecycle":
            continue
        by_line: dict[int, list[Finding]] = {}
        for finding in item.findings:
            by_line.setdefault(finding.line, []).append(finding)
        lines = dict(candidate_lines(event))
        for finding in item.findings:
            lines.setdefault(finding.line, finding.text)
        for number, text in sorted(lines.items()):
            found = by_line.get(number, [])
            if any(finding.rule_id in excluded for finding in found):
                continue
            named = sorted((f for f in found if f.rule_id in classes), key=lambda f: -f.priority)
            label = truth.get(number) or (named[0].rule_id if named else NONE)
            if label in excluded:
                continue
            if label != NONE and label not in classes:
                label = NONE
            yield Example(model_text(text), label, group)


def _expected_lines(path: Path) -> dict[int, str]:
    """Line -> class of each run's cause recorded in a fixture's expected.json: a scenario's
    `{"class", "line"}` per run, or a blessed report's rule-made `root_cause` and its evidence."""
    data = json.loads(path.read_text(encoding="utf-8"))
    found: dict[int, str] = {}
    for incident in data.get("incidents", []) if isinstance(data, dict) else []:
        for run in incident.get("runs", []):
            label, line = run.get("class"), run.get("line")
            root = run.get("root_cause")
            if label is None and isinstance(root, dict) and root.get("source", "rule") == "rule":
                evidence = root.get("evidence") or [{}]
                label, line = root.get("class"), evidence[0].get("line")
            if isinstance(line, int) and isinstance(label, str):
                found[line] = label
    return found


def _deduplicate(examples: list[Example]) -> list[Example]:
    """One example per (text, label); a text that names a class somewhere is not also NONE."""
    named = {example.text for example in examples if example.label != NONE}
    seen: set[tuple[str, str]] = set()
    kept: list[Example] = []
    for example in examples:
        key = (example.text, example.label)
        if key in seen or (example.label == NONE and example.text in named) or not example.text:
            continue
        seen.add(key)
        kept.append(example)
    return kept


def fixture_digest(fixture_dirs: Iterable[Path]) -> str:
    hasher = hashlib.sha256()
    for directory in fixture_dirs:
        for expected in sorted(directory.rglob("expected.json")):
            journal = expected.with_name("journal.txt")
            if journal.exists():
                hasher.update(str(expected.relative_to(directory)).encode())
                hasher.update(expected.read_bytes())
                hasher.update(journal.read_bytes())
    return hasher.hexdigest()[:16]


def default_fixture_dirs() -> list[Path]:
    """The checkout's scenario fixtures, when logsift runs from one."""
    package = Path(__file__).resolve().parents[1]  # logsift/
    candidate = package.parent / "fixtures"
    return [candidate] if candidate.is_dir() else []


__all__ = [
    "NONE", "Example", "candidate_lines", "default_fixture_dirs", "fixture_digest", "model_classes",
    "model_text", "needs_model", "training_examples", "weak",
]
