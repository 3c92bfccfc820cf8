"""Proof that a rule library is sound (`patterns check`), and one rule tried on a log (`patterns test`).

`check_library` loads every rule file on its own, so that one broken file does not hide the
next, and reports every problem as `path:line: reason`: schema and TOML errors, regexes that do
not compile or risk catastrophic backtracking, ids that do not follow from the path, `explains`
naming classes that do not exist, and every way the annotated samples can disagree with the rule;
the same for `facts.toml` and its samples (check/facts.py).

`trial` runs one rule's regexes over every line of a log, like fail2ban-regex: hits per regex
with captures, and the lines that the prefilter selected for the rule but no regex matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from logsift.check import samples
from logsift.check.facts import check_facts
from logsift.exceptions import RuleError, UsageError
from logsift.match import REGEX_TIMEOUT, Matcher
from logsift.records import Record
from logsift.rules import Pattern, Rule, RuleSet, default_pattern_dirs, load_rule, regex_risk
from logsift.rules.facts import FILE as FACTS_FILE
from logsift.rules.facts import FactRule, load_facts

_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TOML_LINE = re.compile(r"\(at line (\d+)")
_WHERE = re.compile(r"^(?P<path>.*):(?P<line>\d+)$")


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class LibraryCheck:
    problems: tuple[Problem, ...]
    files: int  # rule files found
    rules: tuple[Rule, ...]  # those that loaded

    @property
    def ok(self) -> bool:
        return not self.problems


def rule_id_for(path: Path) -> str:
    """`area.name` from `<area>/<name>.toml`."""
    return f"{path.parent.name}.{path.stem}"


def check_library(directories: Sequence[Path] | None = None, extra: Sequence[Path] = ()) -> LibraryCheck:
    """Every problem of the rule files under the directories (the bundled library by default)."""
    dirs = [*(directories if directories is not None else default_pattern_dirs()), *extra]
    problems: list[Problem] = []
    loaded: dict[str, Rule] = {}
    known: set[str] = set()
    broken: set[str] = set()
    facts: list[FactRule] = []
    files = 0
    for directory in dirs:
        if not directory.is_dir():
            raise UsageError("rule directory does not exist", str(directory))
        for path in sorted(directory.rglob("*.toml")):
            if path.relative_to(directory).parts == (FACTS_FILE,):
                try:
                    facts.extend(load_facts(path))
                except RuleError as error:
                    problems.append(_from_rule_error(error, path))
                continue
            files += 1
            rule_id = rule_id_for(path)
            known.add(rule_id)
            layout = _layout_problem(path, directory)
            if layout is not None:
                problems.append(layout)
                broken.add(rule_id)
                continue
            try:
                loaded[rule_id] = load_rule(path, rule_id)
            except RuleError as error:
                problems.append(_from_rule_error(error, path))
                broken.add(rule_id)
        problems.extend(_orphan_samples(directory))
    rules = RuleSet(tuple(sorted(loaded.values(), key=lambda rule: (-rule.priority, rule.id))), facts=tuple(facts))
    matcher = Matcher(rules) if rules.rules or rules.facts else None
    for path in dict.fromkeys(fact.path for fact in facts):
        problems.extend(_from_where(problem.where, problem.message) for problem in check_facts(path, rules, matcher))
    for fact in facts:
        for risk in regex_risk.risks(fact.pattern.source) if fact.pattern is not None else ():
            problems.append(Problem(str(fact.path), fact.line, f"[[fact]] {fact.name} #{fact.index + 1}: {risk}"))
    for rule in rules.rules:
        problems.extend(_explains_problems(rule, known))
        problems.extend(_risk_problems(rule))
        for problem in samples.check_rule(rule, rules, matcher):
            if not any(f"unknown class {other!r}" in problem.message for other in broken):
                problems.append(_from_where(problem.where, problem.message))
    ordered = sorted(problems, key=lambda problem: (problem.path, problem.line))
    return LibraryCheck(tuple(ordered), files, rules.rules)


def _layout_problem(path: Path, directory: Path) -> Problem | None:
    relative = path.relative_to(directory)
    if len(relative.parts) != 2:
        return Problem(str(path), 1, f"rule files live at <area>/<name>.toml directly under {directory}")
    for part, what in ((path.parent.name, "area"), (path.stem, "name")):
        if not _KEBAB.match(part):
            return Problem(
                str(path), 1,
                f"{what} {part!r} of id {rule_id_for(path)!r} is not kebab-case (lowercase letters, digits, "
                "hyphens): the id is taken from the path; rename the file",
            )
    return None


def _orphan_samples(directory: Path) -> list[Problem]:
    return [
        Problem(str(path), 1, f"sample file with no rule {path.with_suffix('.toml').name} beside it")
        for path in sorted(directory.rglob("*.log"))
        if not path.with_suffix(".toml").exists()
    ]


def _from_rule_error(error: RuleError, path: Path) -> Problem:
    problem = _from_where(error.where or str(path), error.message)
    if problem.line == 1:
        found = _TOML_LINE.search(error.message)
        if found:
            return Problem(problem.path, int(found.group(1)), problem.message)
    return problem


def _from_where(where: str, message: str) -> Problem:
    found = _WHERE.match(where)
    if found:
        return Problem(found.group("path"), int(found.group("line")), message)
    return Problem(where, 1, message)


def _explains_problems(rule: Rule, known: set[str]) -> list[Problem]:
    line = _line_of(rule.path, "explains")
    found = []
    for other in rule.explains:
        if other == rule.id:
            found.append(Problem(str(rule.path), line, f"explains its own class {other!r}"))
        elif other not in known:
            found.append(Problem(str(rule.path), line, f"explains unknown class {other!r} (no rule file defines it)"))
    return found


def _risk_problems(rule: Rule) -> list[Problem]:
    found = []
    for kind, patterns in (("match", rule.matches), ("context", rule.context)):
        for pattern in patterns:
            for risk in regex_risk.risks(pattern.source):
                found.append(Problem(str(rule.path), pattern.line, f"[[{kind}]] #{pattern.index + 1}: {risk}"))
    return found


def _line_of(path: Path, key: str) -> int:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 1
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith(key) and stripped[len(key):].lstrip().startswith("="):
            return number
    return 1


# -- one rule on one log ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hit:
    line: int
    text: str
    fields: dict[str, str]
    selected: bool  # whether the prefilter gave this line to the rule (else its literals are wrong)


@dataclass
class PatternHits:
    kind: str  # "match" or "context"
    pattern: Pattern
    hits: list[Hit] = field(default_factory=list)


@dataclass
class Trial:
    rule: Rule
    patterns: list[PatternHits]
    missed: list[tuple[int, str]]
    lines: int = 0
    timeouts: int = 0

    @property
    def matched(self) -> int:
        """Distinct lines that some [[match]] regex matched."""
        return len({hit.line for entry in self.patterns if entry.kind == "match" for hit in entry.hits})


def trial(rule: Rule, records: Iterable[Record]) -> Trial:
    """Every regex of the rule on every line; lines the prefilter selected that nothing matched."""
    result = Trial(
        rule,
        [PatternHits("match", pattern) for pattern in rule.matches]
        + [PatternHits("context", pattern) for pattern in rule.context],
        [],
    )
    for record in records:
        result.lines = max(result.lines, record.line + record.lines - 1)
        lines = record.message.split("\n")
        for offset, text in enumerate(lines):
            number = record.line + offset
            lowered = text.lower()
            selected = False
            matched = False
            for entry in result.patterns:
                # The prefilter's literals, not its hits: hits are lines some regex matched.
                literal_here = any(literal in lowered for literal in entry.pattern.literals)
                selected = selected or (literal_here and entry.kind == "match")
                try:
                    found = entry.pattern.compiled.search(text, timeout=REGEX_TIMEOUT)
                except TimeoutError:
                    result.timeouts += 1
                    continue
                if found is not None:
                    fields = {key: value for key, value in found.groupdict().items() if value}
                    entry.hits.append(Hit(number, text, fields, literal_here))
                    matched = matched or entry.kind == "match"
            if selected and not matched:
                result.missed.append((number, text))
    return result


__all__ = ["LibraryCheck", "Problem", "Trial", "check_library", "rule_id_for", "trial"]
