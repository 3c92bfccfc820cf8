"""The strict check that proves a rule on its annotated samples (the format: rules/samples.py).

A `ruleid:` block must be won by its class with the annotated captures; an `ok:` block must not
be matched by its class; every `[[match]]` of a rule needs a sample it matches.
"""

from __future__ import annotations

from logsift.diagnosis import Diagnoser
from logsift.match import Matcher
from logsift.pipeline import Counts, match_events
from logsift.read.text import TextReader
from logsift.records import Finding
from logsift.rules import Rule, RuleSet
from logsift.rules.samples import Problem, parse_samples


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


__all__ = ["check_rule", "findings_in"]
