"""Annotated sample logs beside each rule, and the strict check that proves a rule on them.

A sample file `<name>.log` holds real-looking log lines. An annotation line applies to the
lines after it, up to the next annotation (one event, as the engine groups it):

    # ruleid: cuda.nvcc-not-found {"nvcc_path": "/dev/null/bin/nvcc"}
    /bin/sh: 1: /dev/null/bin/nvcc: not found
    # ok: cuda.nvcc-not-found
    nvcc found at /usr/local/cuda/bin/nvcc

`ruleid: X {fields}`: the block's winning finding is X and its captures include the fields.
`ok: X`: X finds nothing in the block. Other lines starting with `#` are comments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from logsift.diagnosis import Diagnoser
from logsift.matching import Matcher
from logsift.pipeline import Counts, match_events
from logsift.readers.text import TextReader
from logsift.records import Finding
from logsift.rules import Rule, RuleSet


@dataclass
class Block:
    kind: str  # "ruleid" or "ok"
    rule_id: str
    fields: dict[str, str]
    line: int  # of the annotation
    lines: list[str] = field(default_factory=list)


@dataclass
class Problem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def parse_samples(path: Path) -> tuple[list[Block], list[Problem]]:
    blocks: list[Block] = []
    problems: list[Problem] = []
    current: Block | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        for kind in ("ruleid", "ok"):
            prefix = f"# {kind}:"
            if stripped.startswith(prefix):
                rest = stripped[len(prefix):].strip()
                rule_id, _, raw = rest.partition(" ")
                fields: dict[str, str] = {}
                if raw.strip():
                    try:
                        fields = json.loads(raw)
                    except json.JSONDecodeError as error:
                        problems.append(Problem(f"{path}:{number}", f"annotation fields are not JSON: {error}"))
                current = Block(kind, rule_id, fields, number)
                blocks.append(current)
                break
        else:
            if stripped.startswith("#"):
                continue
            if current is None:
                if stripped:
                    problems.append(Problem(f"{path}:{number}", "sample line before any annotation"))
                continue
            current.lines.append(line)
    for block in blocks:
        while block.lines and not block.lines[-1].strip():
            block.lines.pop()
        if not block.lines:
            problems.append(Problem(f"{path}:{block.line}", "annotation with no sample lines after it"))
    return blocks, problems


def findings_in(lines: list[str], matcher: Matcher) -> list[Finding]:
    records = TextReader("sample").read(lines)
    found: list[Finding] = []
    for matched in match_events(matcher, records, Counts()):
        found.extend(matched.findings)
    return found


def check_rule(rule: Rule, rules: RuleSet, matcher: Matcher | None = None) -> list[Problem]:
    """Every way the rule's samples can be wrong, as problems with file:line."""
    matcher = matcher or Matcher(rules)
    path = rule.sample_path
    if not path.exists():
        return [Problem(str(rule.path), f"no sample file {path.name} beside the rule")]
    blocks, problems = parse_samples(path)
    positives = [block for block in blocks if block.kind == "ruleid" and block.rule_id == rule.id]
    if not positives:
        problems.append(Problem(str(path), f"no `# ruleid: {rule.id}` sample"))
    used: set[int] = set()
    diagnoser = Diagnoser(rules)
    for block in blocks:
        where = f"{path}:{block.line}"
        if block.rule_id not in rules.by_id:
            problems.append(Problem(where, f"annotation names unknown class {block.rule_id!r}"))
            continue
        found = findings_in(block.lines, matcher)
        mine = [finding for finding in found if finding.rule_id == block.rule_id]
        if block.kind == "ok":
            if mine:
                problems.append(Problem(where, f"{block.rule_id} matched {mine[0].text!r}, annotated ok"))
            continue
        if not mine:
            problems.append(Problem(where, f"{block.rule_id} missed this sample"))
            continue
        winner = diagnoser.choose_root([f for f in found if rules.by_id[f.rule_id].signal is None]) or mine[0]
        if rules.by_id[block.rule_id].signal is None and winner.rule_id != block.rule_id:
            problems.append(Problem(where, f"{winner.rule_id} wins over {block.rule_id} here (line {winner.text!r})"))
        for name, expected in block.fields.items():
            got = mine[0].fields.get(name)
            if got != expected:
                problems.append(Problem(where, f"capture {name}={got!r}, expected {expected!r}"))
        if block.rule_id == rule.id:
            used.update(_pattern_hits(rule, [finding.text for finding in mine]))
    for pattern in rule.matches:
        if pattern.index not in used and positives:
            problems.append(Problem(f"{rule.path}:{pattern.line}", f"[[match]] #{pattern.index + 1} has no sample that it matches"))
    return problems


def _pattern_hits(rule: Rule, texts: list[str]) -> set[int]:
    hits = set()
    for pattern in rule.matches:
        if any(pattern.compiled.search(text) for text in texts):
            hits.add(pattern.index)
    return hits


__all__ = ["Block", "Problem", "check_rule", "findings_in", "parse_samples"]
