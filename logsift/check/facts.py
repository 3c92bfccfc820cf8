"""The strict check that proves facts.toml on its annotated samples (facts.log beside it).

    # facts: {"cuda_home": "/dev/null", "nvcc": "/dev/null/bin/nvcc"}
    /bin/sh: 1: /dev/null/bin/nvcc: not found

Each block (the lines up to the next annotation, one event) must give exactly the annotated facts,
each with its first value, and no other; `# facts: {}` means none. Every `[[fact]]` needs a block
in which it gave a value. A block whose lines are JSON objects is read as `journalctl -o json`
(for facts taken from journal fields such as `_CMDLINE`); other blocks as plain text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from logsift.match import Matcher
from logsift.pipeline import Counts, match_events
from logsift.read.json import JsonReader
from logsift.read.text import TextReader
from logsift.records import Record, RunFact
from logsift.rules import RuleSet
from logsift.rules.facts import FactRule
from logsift.rules.samples import Problem, annotated_blocks

ANNOTATION = "# facts:"


@dataclass
class FactBlock:
    expected: dict[str, str]
    line: int
    lines: list[str] = field(default_factory=list)


def parse_fact_samples(path: Path) -> tuple[list[FactBlock], list[Problem]]:
    found, problems = annotated_blocks(path, (ANNOTATION,))
    blocks: list[FactBlock] = []
    for block in found:
        try:
            expected = json.loads(block.text)
        except json.JSONDecodeError as error:
            problems.append(Problem(f"{path}:{block.line}", f"annotation is not a JSON object: {error}"))
            expected = {}
        if not isinstance(expected, dict) or not all(isinstance(value, str) for value in expected.values()):
            problems.append(Problem(f"{path}:{block.line}", "annotation must be a JSON object of strings"))
            expected = {}
        blocks.append(FactBlock(expected, block.line, block.lines))
    return blocks, problems


def facts_in(lines: list[str], matcher: Matcher) -> list[RunFact]:
    """The facts the engine reads from sample lines, as it reads them from a journal."""
    records: list[Record]
    if lines and all(line.lstrip().startswith("{") for line in lines if line.strip()):
        encoded = [(line.encode("utf-8"), number) for number, line in enumerate(lines, 1)]
        records = list(JsonReader("sample").read_lines(encoded))
    else:
        records = list(TextReader("sample").read(lines))
    found: list[RunFact] = []
    for matched in match_events(matcher, records, Counts()):
        found.extend(matched.observed)
    return found


def check_facts(path: Path, rules: RuleSet, matcher: Matcher | None = None) -> list[Problem]:
    """Every way facts.toml at `path` and its samples disagree, as problems with file:line."""
    mine = [fact for fact in rules.facts if fact.path == path]
    samples = path.with_suffix(".log")
    if not samples.exists():
        return [Problem(str(path), f"no sample file {samples.name} beside the facts file")] if mine else []
    # As the default run (with the learned fallback) reads them: a journal field fact comes from
    # a record in an event, and near misses are events then (ARCHITECTURE.md, known limitations).
    if matcher is None or not matcher.near:
        matcher = Matcher(rules, near=True)
    blocks, problems = parse_fact_samples(samples)
    used: set[int] = set()
    for block in blocks:
        found = facts_in(block.lines, matcher)
        first: dict[str, str] = {}
        for fact in found:
            first.setdefault(fact.name, fact.value)
        where = f"{samples}:{block.line}"
        for name, value in block.expected.items():
            if name not in first:
                problems.append(Problem(where, f"fact {name} not found, expected {value!r}"))
            elif first[name] != value:
                problems.append(Problem(where, f"fact {name}={first[name]!r}, expected {value!r}"))
        for name in first.keys() - block.expected.keys():
            problems.append(Problem(where, f"fact {name}={first[name]!r} found, not annotated"))
        used.update(_entries_hit(mine, block.lines, found))
    for entry in mine:
        if entry.index not in used:
            problems.append(Problem(f"{path}:{entry.line}", f"[[fact]] {entry.name} #{entry.index + 1} has no sample "
                                    "that it reads"))
    return problems


def _entries_hit(facts: list[FactRule], lines: list[str], found: list[RunFact]) -> set[int]:
    """Which [[fact]] entries gave a value the block's annotation asked for."""
    names = {fact.name.split(".", 1)[0] for fact in found}
    hit: set[int] = set()
    for fact in facts:
        if fact.name not in names:
            continue
        if fact.field is not None:
            if any(fact.field in line for line in lines):
                hit.add(fact.index)
        elif any(True for line in lines for _ in fact.extract(line)):
            hit.add(fact.index)
    return hit


__all__ = ["FactBlock", "check_facts", "facts_in", "parse_fact_samples"]
