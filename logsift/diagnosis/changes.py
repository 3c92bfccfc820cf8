"""What changed between the runs of an incident, what the healthy run had, how long it lasted.

Each run carries the facts it showed (facts.toml: CUDA_HOME, the nvcc used, versions, the GPU arch
built for, the model, the launch arguments). A run's value of a fact is the first it showed. A
fact that a run did not show is unknown for that run, never "absent": logs show what the software
chose to print. So a change is a run showing a value that differs from the one an earlier run
showed last, or showing a fact for the first time after the first run (marked `appeared`).
Launch arguments are compared argument by argument, so a change names the arguments that differ.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from logsift.lazy import compile_lazily
from logsift.records import Incident, Run, RunFact


@dataclass(frozen=True, slots=True)
class Change:
    """Run `run` (1-based, of the incident's runs) showed `after` where the runs before showed
    `before` (None: no run before it showed this fact)."""

    run: int
    name: str
    label: str
    before: str | None
    after: str
    fact: RunFact  # where the run showed it
    before_run: int | None = None  # the run that showed `before`

    @property
    def appeared(self) -> bool:
        return self.before is None


@dataclass(frozen=True, slots=True)
class Fix:
    """What the healthy run that resolved an incident showed that the failed runs did not."""

    run: int  # 1-based, of the incident's runs
    differs: tuple[RunFact, ...]  # facts whose value no failed run showed (and some failed run showed another)
    only_healthy: tuple[RunFact, ...]  # facts that no failed run showed at all
    reload: bool  # systemd reloaded unit files before this start
    gone: tuple[str, ...]  # root-cause classes of the failed runs that the healthy run did not show
    recurred: tuple[str, ...] = ()  # those it did show, as findings that did not stop it
    shown: int = 0  # facts the healthy run showed at all


def first_values(run: Run) -> dict[str, RunFact]:
    values: dict[str, RunFact] = {}
    for fact in run.facts:
        values.setdefault(fact.name, fact)
    return values


def changes(runs: Sequence[Run]) -> tuple[Change, ...]:
    """Every change of a fact from one run to a later one, in run order."""
    last: dict[str, tuple[int, RunFact]] = {}
    found: list[Change] = []
    for number, run in enumerate(runs, 1):
        for name, fact in first_values(run).items():
            previous = last.get(name)
            if previous is None:
                if number > 1:
                    found.append(Change(number, name, fact.label, None, fact.value, fact))
            elif differs(previous[1], fact):
                before, after = difference(previous[1], fact)
                found.append(Change(number, name, fact.label, before, after, fact, previous[0]))
            last[name] = (number, fact)
    return tuple(found)


def differs(first: RunFact, second: RunFact) -> bool:
    if first.kind == "arguments" and second.kind == "arguments":
        return arguments(first.value) != arguments(second.value)
    return first.value != second.value


def difference(first: RunFact, second: RunFact) -> tuple[str, str]:
    """The two values as a person compares them: whole values, or for launch arguments only the
    arguments that differ (an argument one side lacks shows as `(not given)`)."""
    if first.kind != "arguments" or second.kind != "arguments":
        return first.value, second.value
    old, new = arguments(first.value), arguments(second.value)
    keys = [key for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)]
    return (", ".join(_item(key, old.get(key)) for key in keys), ", ".join(_item(key, new.get(key)) for key in keys))


def _item(key: str, value: str | None) -> str:
    if value is None:
        return f"{key} (not given)"
    if key.startswith("#"):
        return value
    return f"{key}={value}" if value != "" else key


_ASSIGNMENT = compile_lazily(r"""^\s*['"]?(?P<key>[\w.-]+)['"]?\s*(?:=|:)\s*(?P<value>.*?)\s*$""", re.DOTALL)


def arguments(value: str) -> dict[str, str]:
    """Launch arguments as name -> value: `a=1, b='x'` (SGLang's ServerArgs), `'a': 1, 'b': 'x'`
    (vLLM's dict), or a command line `prog --a 1 --b=x --flag` (`_CMDLINE`)."""
    items = _split_top_level(value)
    if len(items) > 1 and all(_ASSIGNMENT.match(item) for item in items):
        parsed: dict[str, str] = {}
        for item in items:
            match = _ASSIGNMENT.match(item)
            assert match is not None
            parsed[match.group("key")] = match.group("value")
        return parsed
    return _command_line(value)


def _split_top_level(value: str) -> list[str]:
    """Split at commas that are not inside quotes or brackets."""
    items: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for index, char in enumerate(value):
        if quote:
            if char == quote and value[index - 1] != "\\":
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            items.append(value[start:index].strip())
            start = index + 1
    items.append(value[start:].strip())
    return [item for item in items if item]


def _command_line(value: str) -> dict[str, str]:
    try:
        words = shlex.split(value)
    except ValueError:  # an unbalanced quote in a cut line
        words = value.split()
    parsed: dict[str, str] = {}
    position = 0
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith("-") and len(word) > 1 and not word[1:2].isdigit():
            name, equals, given = word.partition("=")
            if equals:
                parsed[name] = given
            elif index + 1 < len(words) and not words[index + 1].startswith("-"):
                parsed[name] = words[index + 1]
                index += 1
            else:
                parsed[name] = ""
        else:
            parsed[f"#{position}"] = word
            position += 1
        index += 1
    return parsed


def fix(incident: Incident) -> Fix | None:
    """What the run that resolved the incident showed that no failed run did; None while unresolved."""
    if not incident.resolved or not incident.runs or incident.runs[-1].outcome != "healthy":
        return None
    healthy = incident.runs[-1]
    failed = incident.failed_runs
    shown: dict[str, set[str]] = {}
    for run in failed:
        for name, fact in first_values(run).items():
            shown.setdefault(name, set()).add(_key(fact))
    differs_: list[RunFact] = []
    only: list[RunFact] = []
    for name, fact in first_values(healthy).items():
        if name not in shown:
            only.append(fact)
        elif _key(fact) not in shown[name]:
            differs_.append(fact)
    recurring = {finding.rule_id for finding in healthy.findings}
    causes = tuple(dict.fromkeys(run.root_cause.rule_id for run in failed if run.root_cause is not None))
    gone = tuple(rule_id for rule_id in causes if rule_id not in recurring)
    recurred = tuple(rule_id for rule_id in causes if rule_id in recurring)
    return Fix(len(incident.runs), tuple(differs_), tuple(only), healthy.reload is not None, gone, recurred,
               len(first_values(healthy)))


def _key(fact: RunFact) -> str:
    if fact.kind == "arguments":
        return repr(sorted(arguments(fact.value).items()))
    return fact.value


def downtime(incident: Incident) -> tuple[float | None, bool]:
    """Seconds from the first failed start to the healthy run's ready line (or its start), and
    whether that is the whole of it (False while unresolved: the time until the last failure)."""
    failed = incident.failed_runs
    if not failed:
        return None, False
    start = failed[0].started if failed[0].observed_start else None
    start = start or incident.first_seen
    end: datetime | None
    if incident.resolved and incident.runs[-1].outcome == "healthy":
        healthy = incident.runs[-1]
        ready = healthy.ready.record.timestamp if healthy.ready is not None else None
        end = ready or healthy.started
        complete = True
    else:
        end = incident.last_seen
        complete = False
    if start is None or end is None or start.year <= 1970 < end.year:
        return None, complete
    return max(0.0, (end - start).total_seconds()), complete


__all__ = ["Change", "Fix", "arguments", "changes", "difference", "differs", "downtime", "first_values", "fix"]
