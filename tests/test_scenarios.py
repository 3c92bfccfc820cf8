"""Whole-log fixtures: each records which line must win, so "matched, but the wrong line" fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import FIXTURES, report

SCENARIOS = sorted(path.parent for path in (FIXTURES / "scenarios").glob("*/expected.json"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[path.name for path in SCENARIOS])
def test_scenario(scenario: Path) -> None:
    expected: dict[str, Any] = json.loads((scenario / "expected.json").read_text())
    code, got = report(str(scenario / "journal.txt"))
    assert code == expected["exit"]
    assert len(got["incidents"]) == len(expected["incidents"])
    for want, incident in zip(expected["incidents"], got["incidents"], strict=True):
        assert incident["unit"] == want["unit"]
        assert incident["resolved"] == want["resolved"]
        failed = [run for run in incident["runs"] if run["outcome"] == "failed"]
        assert len(failed) == len(want["runs"])
        for want_run, run in zip(want["runs"], failed, strict=True):
            root = run["root_cause"]
            assert root["class"] == want_run["class"]
            assert root["evidence"][0]["line"] == want_run["line"]
            assert want_run["text"] in root["evidence"][0]["text"]
            for symptom in want_run.get("symptoms", []):
                assert symptom in {item["class"] for item in run["symptoms"]}
    if "findings" in expected:
        assert [finding["class"] for finding in got["findings"]] == expected["findings"]
    if "events_at_least" in expected:
        assert got["summary"]["events"] >= expected["events_at_least"]
