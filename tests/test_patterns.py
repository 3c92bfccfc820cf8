"""Every rule proves itself on its annotated samples (fail2ban/semgrep style)."""

from __future__ import annotations

import pytest

from logsift.check.facts import check_facts
from logsift.check.samples import check_rule
from logsift.match import Matcher
from logsift.rules import load_rules

RULES = load_rules()
MATCHER = Matcher(RULES)


@pytest.mark.parametrize("rule_id", sorted(RULES.by_id))
def test_rule_samples(rule_id: str) -> None:
    problems = check_rule(RULES.by_id[rule_id], RULES, MATCHER)
    assert not problems, "\n".join(map(str, problems))


def test_library_is_not_empty() -> None:
    assert len(RULES) >= 9


def test_fact_samples() -> None:
    paths = sorted({fact.path for fact in RULES.facts})
    assert paths, "the bundled library has a facts.toml"
    for path in paths:
        problems = check_facts(path, RULES, MATCHER)
        assert not problems, "\n".join(map(str, problems))
