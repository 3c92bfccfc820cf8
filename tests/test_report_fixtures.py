"""The post-mortem fixtures are what fixtures/reports/build.py makes from real output, and each
tells the situation its README row describes."""

from __future__ import annotations

import runpy
from typing import Any

import pytest

import logsift
from tests.helpers import FIXTURES

REPORTS = FIXTURES / "reports"


def _builders() -> dict[str, Any]:
    namespace = runpy.run_path(str(REPORTS / "build.py"))
    return dict(namespace["BUILDERS"])


@pytest.mark.parametrize("name", ["still-failing", "crash-loop", "two-hosts", "healthy-warning"])
def test_committed_journal_is_what_the_builder_makes(name: str) -> None:
    built = _builders()[name]()
    assert (REPORTS / name / "journal.txt").read_text(encoding="utf-8") == built, \
        f"run `python fixtures/reports/build.py` and re-bless: {name} differs from its builder"


def test_each_fixture_tells_its_situation() -> None:
    still = logsift.diagnose(str(REPORTS / "still-failing" / "journal.txt"))
    [incident] = still.incidents
    assert not incident.resolved
    assert [run.root_cause.rule_id for run in incident.failed_runs if run.root_cause] == [
        "cuda.nvcc-not-found", "cuda.header-missing"]
    assert [run.fact("cuda_home").value for run in incident.runs if run.fact("cuda_home")] == [
        "/dev/null", "/tmp/cuda-partial"]

    loop = logsift.diagnose(str(REPORTS / "crash-loop" / "journal.txt"))
    [incident] = loop.incidents
    assert len(incident.runs) == 40 and all(run.failed for run in incident.runs)
    assert {run.root_cause.rule_id for run in incident.runs if run.root_cause} == {"python.module-missing"}

    hosts = logsift.diagnose(str(REPORTS / "two-hosts" / "journal.txt"))
    assert [(incident.host, incident.resolved) for incident in hosts.incidents] == [("h200-a", True), ("h200-b", False)]
    assert {incident.root_cause.rule_id for incident in hosts.incidents if incident.root_cause} == {"cuda.nvcc-not-found"}

    warning = logsift.diagnose(str(REPORTS / "healthy-warning" / "journal.txt"))
    [incident] = warning.incidents
    assert incident.resolved and incident.root_cause is not None
    assert incident.root_cause.rule_id == "cuda.out-of-memory"
    # The retried KV-cache allocation's OOM, noted (the catch-all reads the same exception line
    # and gives way to the class that names it).
    assert [noted.finding.rule_id for noted in warning.findings] == ["cuda.out-of-memory"]
