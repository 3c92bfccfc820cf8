"""Every prefilter engine gives the same hits, and no engine ever misses a line a rule matches.

A record's hits are exact whatever the engine (each candidate is confirmed by the rule's own
regex), so the engines must agree on them; and a line that some rule regex matches must be a
candidate of every engine, on raw journal lines (prefix and all) as on bare messages, whatever
the characters around the match: the rule regexes see decoded text, the engines raw bytes.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from logsift.match import MARKER, Matcher, entries
from logsift.rules import load_rules
from logsift.rules.prefilter import AhoCorasickPrefilter, Entry, FindPrefilter, HyperscanPrefilter, build_prefilter
from tests.helpers import FIXTURES, SHARED

RULES = load_rules()
ENTRIES = entries(RULES)
ENGINES = [name for name, module in (("hyperscan", "hyperscan"), ("ahocorasick", "ahocorasick_rs"), ("find", ""))
           if not module or importlib.util.find_spec(module) is not None]
PATTERNS = Path(__file__).resolve().parents[1] / "patterns"


def _lines() -> list[str]:
    """Raw lines of every sample, fixture and corpus case, and the same with a non-ASCII
    character or an invalid byte next to each word (where byte and character classes differ)."""
    paths = sorted(PATTERNS.glob("*/*.log")) + sorted(FIXTURES.glob("**/*.txt"))
    paths += sorted((SHARED / "corpus" / "issues" / "cases").glob("*.log"))
    lines = []
    for path in paths:
        lines.extend(path.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n").split("\n"))
    return lines


LINES = _lines()
VARIANTS = [line.replace(" ", "\u00a0 ", 3).replace(":", "\u00e9:", 2) for line in LINES[::7]]


def _truth(line: str) -> set[int]:
    """A hit: one of the entry's literals occurs (the literals are what every engine agrees on;
    a file may name them itself) and, for a regex, the regex matches."""
    owners = set()
    lowered = line.lower()
    for entry in ENTRIES:
        if not any(literal in lowered for literal in entry.literals):
            continue
        if entry.pattern is None or entry.pattern.compiled.search(line) is not None:
            owners.add(entry.owner)
    return owners


TRUTH = [_truth(line) for line in LINES + VARIANTS]


@pytest.mark.parametrize("engine", ENGINES)
def test_no_line_a_rule_matches_is_left_out(engine: str) -> None:
    prefilter = build_prefilter(ENTRIES, engine)
    texts = LINES + VARIANTS
    data = "\n".join(texts).encode("utf-8", "surrogatepass")
    starts = {start for start, _ in prefilter.candidates(data)}
    offset = 0
    missed = []
    for text, truth in zip(texts, TRUTH, strict=True):
        if truth - {MARKER} and offset not in starts:
            missed.append(text)
        offset += len(text.encode("utf-8", "surrogatepass")) + 1
    assert missed == []


@pytest.mark.parametrize("engine", ENGINES)
def test_hits_are_exact_whatever_the_engine(engine: str) -> None:
    prefilter = build_prefilter(ENTRIES, engine)
    texts = LINES + VARIANTS
    assert [set(hits) for hits in prefilter.scan(texts)] == TRUTH


@pytest.mark.parametrize("engine", ENGINES)
def test_lines_that_only_share_a_word_with_a_rule_are_skipped(engine: str) -> None:
    """The point of matching the regexes themselves: near misses are not candidates at all,
    whatever the engine (the literal engines confirm their lines with the byte expressions)."""
    near_misses = [
        "INFO: 200 OK GET /v1/error-budget",
        "retrying after failed health check (attempt 1/3), next in 5s",
        "warning: cuda graph capture took 12.5 s",
        "nccl info channel 00/24 : 0 1",
    ]
    data = "\n".join(near_misses).encode()
    assert build_prefilter(ENTRIES, engine).candidates(data) == []
    literal_hits = FindPrefilter(ENTRIES)._ends(data.lower())
    assert literal_hits != []  # the literals alone would let them through


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan is not installed")
@pytest.mark.parametrize("narrower", ["re2", "regex"])
def test_the_literal_engines_parse_the_lines_hyperscan_parses(narrower: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same candidate lines as the regex database, with RE2 and without it, but for lines
    that the database lets through and no rule confirms (a regex whose literals do not cover
    every match: confirming needs one of them)."""
    if narrower == "regex":
        monkeypatch.setitem(sys.modules, "re2", None)
    elif importlib.util.find_spec("re2") is None:
        pytest.skip("google-re2 is not installed")
    data = "\n".join(LINES + VARIANTS).encode("utf-8", "surrogatepass")
    database = HyperscanPrefilter(ENTRIES)
    expected = dict(database.candidates(data))
    for engine in ENGINES[1:]:
        got = [start for start, _ in build_prefilter(ENTRIES, engine).candidates(data)]
        assert set(got) <= set(expected), engine
        for start in sorted(set(expected) - set(got)):
            end = data.find(b"\n", start)
            text = data[start:end if end >= 0 else None].decode("utf-8", "surrogatepass")
            assert database.confirm(text, expected[start]) == frozenset(), (engine, text)
        assert len(got) > 0.99 * len(expected), engine


@pytest.mark.skipif("ahocorasick" not in ENGINES, reason="ahocorasick-rs is not installed")
def test_the_translated_expressions_are_cached_and_reused(tmp_path: Path) -> None:
    data = "\n".join(LINES[:2000]).encode("utf-8", "surrogatepass")
    first = AhoCorasickPrefilter(ENTRIES, tmp_path).candidates(data)
    cached = list(tmp_path.glob("expressions-*.json"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    assert AhoCorasickPrefilter(ENTRIES, tmp_path).candidates(data) == first
    assert cached[0].stat().st_mtime_ns == stamp
    cached[0].write_text("not json")  # damaged: translated again, never an error
    assert AhoCorasickPrefilter(ENTRIES, tmp_path).candidates(data) == first


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="hyperscan is not installed")
def test_the_compiled_database_is_cached_and_reused(tmp_path: Path) -> None:
    first = Matcher(RULES, engine="hyperscan", cache=tmp_path)
    assert not list(tmp_path.glob("scan-*.hsdb"))  # built when first needed, not by the Matcher
    first.prefilter.scan(LINES[:1])
    cached = list(tmp_path.glob("scan-*.hsdb"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    second = Matcher(RULES, engine="hyperscan", cache=tmp_path)
    second.prefilter.scan(LINES[:1])
    assert cached[0].stat().st_mtime_ns == stamp
    assert first.prefilter.scan(LINES[:500]) == second.prefilter.scan(LINES[:500])
    cached[0].write_bytes(b"not a database")  # damaged: compiled again, never an error
    assert Matcher(RULES, engine="hyperscan", cache=tmp_path).prefilter.scan(LINES[:50]) == first.prefilter.scan(LINES[:50])


def test_auto_picks_the_fastest_engine_installed() -> None:
    expected = {"hyperscan": HyperscanPrefilter, "ahocorasick": AhoCorasickPrefilter, "find": FindPrefilter}[ENGINES[0]]
    assert isinstance(build_prefilter(ENTRIES), expected)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_line_with_thousands_of_matches_has_the_same_hits(engine: str) -> None:
    """Hostile lines (`a` x 5000 against a literal `aaa`) would report a match per byte: the
    block is scanned again line by line and such a line is a candidate for every entry whose
    literal it holds; what is confirmed is the same as for any block."""
    hostile = [*ENTRIES, Entry(10_000, None, ("aaa",))]
    messages = [*LINES[:300], "a" * 5000 + "!", *LINES[300:600], "error " * 3000, "a" * 3, "x" * 10]
    expected = [set(hits) for hits in FindPrefilter(hostile).scan(messages)]
    assert expected[300] == {10_000} and expected[-2] == {10_000} and expected[-1] == set()
    assert [set(hits) for hits in build_prefilter(hostile, engine).scan(messages)] == expected


def test_confirming_counts_in_the_run_budget_and_stops_at_suspension() -> None:
    from logsift.match import RegexBudget
    from logsift.rules.pattern import compile_pattern

    slow = compile_pattern("(a+)+$", ["aaa"], "site/slow.toml", 0, 7)
    prefilter = FindPrefilter([Entry(0, slow, ("aaa",), ("site.slow", 7), "site/slow.toml:7")])
    budget = RegexBudget()
    prefilter.budget = budget
    hits = prefilter.scan(["a" * 5000 + "!"] * 6, list(range(1, 7)))
    assert hits == [frozenset()] * 6
    assert budget.timeouts == 3 and ("site.slow", 7) in budget.suspended and budget.first[("site.slow", 7)] == 1
    assert budget.skipped == 3  # the three lines after the suspension are not searched
