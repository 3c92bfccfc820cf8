"""The fast path (text readers skip lines that cannot matter) changes nothing but speed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from logsift import read as readers
from logsift.match import Matcher
from logsift.pipeline import analyze_source
from logsift.report.document import Report
from logsift.rules import load_rules
from tests.helpers import FIXTURES, SHARED

RULES = load_rules()
MATCHER = Matcher(RULES)
CORPUS = SHARED / "corpus" / "issues" / "cases"
FILES = sorted(FIXTURES.glob("**/journal.txt")) + sorted(CORPUS.glob("*.log")) + sorted(FIXTURES.glob("**/*.export"))


def _document(path: Path, accelerate: bool) -> dict[str, object]:
    data = path.read_bytes()
    analysis = analyze_source(lambda skipping: readers.read(io.BytesIO(data), path.name, skipping=skipping),
                              RULES, MATCHER, skip=accelerate)
    document = Report.from_analysis(analysis).to_dict()
    del document["summary"]["entries"]  # how many lines were parsed: what skipping changes
    return document


@pytest.mark.parametrize("path", FILES, ids=[f"{path.parent.name}/{path.name}" for path in FILES])
def test_skipping_unflagged_lines_gives_the_same_report(path: Path) -> None:
    assert _document(path, accelerate=True) == _document(path, accelerate=False)


def _counted_records(path: Path, accelerate: bool) -> int:
    seen = 0

    def counting(skipping):  # type: ignore[no-untyped-def]
        nonlocal seen
        for record in readers.read(io.BytesIO(path.read_bytes()), path.name, skipping=skipping):
            seen += 1
            yield record

    analyze_source(counting, RULES, MATCHER, skip=accelerate)
    return seen


def test_the_fast_path_really_skips_lines() -> None:
    """Without this, the equality test above would pass with the fast path switched off."""
    seed = FIXTURES / "seed-incident" / "journal.txt"
    every = _counted_records(seed, accelerate=False)
    fast = _counted_records(seed, accelerate=True)
    assert every == len(seed.read_text().splitlines())
    assert fast < every / 2
    export = FIXTURES / "seed-incident" / "journal.export"
    assert _counted_records(export, accelerate=True) < _counted_records(export, accelerate=False) / 2
