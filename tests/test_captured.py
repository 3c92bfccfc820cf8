"""Real failure output captured on a GPU machine (fixtures/captured/README.md says how):
each must be diagnosed as the class recorded in fixtures/captured/expected.tsv."""

from __future__ import annotations

import csv

import pytest

from tests.helpers import FIXTURES, report

CAPTURED = FIXTURES / "captured"
with open(CAPTURED / "expected.tsv", newline="") as handle:
    EXPECTED = [(row["file"], row["class"]) for row in csv.DictReader(handle, delimiter="\t")]


def _predicted(incidents: list[dict[str, object]]) -> str:
    causes = [incident["root_cause"] for incident in incidents if incident["root_cause"]]
    return str(causes[-1]["class"]) if causes else "healthy"  # type: ignore[index]


@pytest.mark.parametrize(("name", "expected"), EXPECTED, ids=[name for name, _ in EXPECTED])
def test_captured_output(name: str, expected: str) -> None:
    code, got = report(str(CAPTURED / name))
    assert _predicted(got["incidents"]) == expected
    assert code == (0 if expected == "healthy" else 1)
