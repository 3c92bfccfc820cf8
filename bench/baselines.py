"""The grep baselines' inputs: the rule library's [[match]] regexes as POSIX ERE, checked
against each rule's sample lines, and the literals the prefilter searches."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import ere


@dataclass
class Export:
    regexes: Path
    literals: Path
    total: int
    converted: int
    skipped: list[tuple[str, str]]  # (where, why)
    literal_count: int


def export_patterns(rules: Any, out: Path) -> Export:
    """regexes.txt (ERE, checked against each rule's sample messages) and literals.txt."""
    from logsift.read.text import TextReader

    out.mkdir(parents=True, exist_ok=True)
    converted: list[str] = []
    skipped: list[tuple[str, str]] = []
    literals: set[str] = set()
    total = 0
    for rule in rules.rules:
        for pattern in (*rule.matches, *rule.context):
            literals.update(pattern.literals)
        messages = _sample_messages(rule.sample_path, TextReader)
        for pattern in rule.matches:
            total += 1
            where = f"{rule.id} [[match]] #{pattern.index + 1}"
            text, why = ere.to_ere(pattern.source)
            if text is None:
                skipped.append((where, why))
                continue
            differs = _differs(text, pattern.compiled, messages)
            if differs:
                skipped.append((where, f"converted, but grep and the rule disagree on a sample: {differs[:80]!r}"))
                continue
            converted.append(text)
    regexes = out / "regexes.txt"
    regexes.write_text("\n".join(converted) + "\n", encoding="utf-8")
    literals |= _prefilter_literals(rules)
    literal_path = out / "literals.txt"
    literal_path.write_text("\n".join(sorted(literals)) + "\n", encoding="utf-8")
    return Export(regexes, literal_path, total, len(converted), skipped, len(literals))


def _prefilter_literals(rules: Any) -> set[str]:
    """Everything the prefilter searches, the grouping markers ("traceback (most recent call
    last)", "systemd[1]:"...) included, when the find engine shows its table."""
    from logsift.match import Matcher

    owners = getattr(Matcher(rules, engine="find").prefilter, "owners", {})
    return {literal for literal in owners if isinstance(literal, str)}


def _sample_messages(path: Path, reader: Any) -> list[str]:
    if not path.exists():
        return []
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    return [record.message for record in reader(str(path)).read(lines) if "\n" not in record.message]


def _differs(text: str, compiled: Any, messages: list[str]) -> str | None:
    """The first sample message where `grep -E text` and the rule's regex disagree."""
    if not messages:
        return None
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(messages) + "\n")
        name = handle.name
    try:
        result = subprocess.run(["grep", "-n", "-E", "-e", text, name], capture_output=True, text=True)
    finally:
        os.unlink(name)
    if result.returncode == 2:
        return f"grep: {result.stderr.strip()}"
    grep_hits = {int(line.split(":", 1)[0]) for line in result.stdout.splitlines()}
    for number, message in enumerate(messages, 1):
        if (compiled.search(message) is not None) != (number in grep_hits):
            return message
    return None
