"""Healthy logs give no incident: the negative corpus.

Journals of healthy serving from bench/generate.py (fixed seeds, no injected failures) in the
shapes logsift meets: a whole host's journal (several units interleaving, TP ranks as separate
PIDs) as short-iso, short and plain text, and per-unit journals as `journalctl -u UNIT` gives
them; plus every hand-written log in fixtures/healthy/. An incident here is a finding against
the rule or the diagnosis step that produced it: fix that, not this test.

The same generator with failures injected must give incidents (the control), so that "no
incident" means the pipeline looked, not that it saw nothing.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from logsift import read as readers
from logsift.pipeline import Analysis, analyze
from logsift.rules import load_rules

ROOT = Path(__file__).resolve().parent.parent
HEALTHY = ROOT / "fixtures" / "healthy"
sys.path.insert(0, str(ROOT))

from bench import generate  # noqa: E402

RULES = load_rules()
SERVICE_UNITS = ("sglang-k26", "sglang-qwen", "vllm", "ollama", "tgi")

# (id, generate() options). Restarts every ~10 simulated minutes replay the start-ups, where
# the near-miss lines are. Together well over 50k lines.
HOST = dict(lines=14_000, restart_every=600.0)
SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("host-short-iso", dict(HOST, fmt="short-iso", seed=101)),
    ("host-short", dict(HOST, fmt="short", seed=102)),
    ("host-plain", dict(HOST, fmt="plain", seed=103)),
    *[(f"unit-{name}", dict(lines=3_000, restart_every=300.0, fmt="short-iso", seed=200 + index, units=(name,)))
      for index, name in enumerate(SERVICE_UNITS)],
]


def journal(**options: Any) -> tuple[bytes, generate.Summary]:
    out = io.BytesIO()
    summary = generate.generate(out, **options)
    return out.getvalue(), summary


def run(data: bytes, source: str) -> Analysis:
    return analyze(readers.read(io.BytesIO(data), source), RULES)


def describe(analysis: Analysis) -> str:
    """Each incident's unit, root cause and the line that caused it: what to report."""
    parts = []
    for incident in analysis.diagnosis.incidents:
        cause = incident.root_cause
        where = f"line {cause.line}: {cause.text[:160]!r}" if cause is not None else "no root cause"
        parts.append(f"{incident.unit}: {cause.rule_id if cause else '-'} at {where}")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def generated() -> dict[str, tuple[bytes, generate.Summary]]:
    return {name: journal(**options) for name, options in SHAPES}


def test_corpus_is_large_enough(generated: dict[str, tuple[bytes, generate.Summary]]) -> None:
    assert sum(summary.lines for _, summary in generated.values()) >= 50_000


@pytest.mark.parametrize("name", [name for name, _ in SHAPES])
def test_generated_healthy_journal_has_no_incident(generated: dict[str, tuple[bytes, generate.Summary]], name: str) -> None:
    data, summary = generated[name]
    analysis = run(data, name)
    assert analysis.counts.lines == summary.lines
    found = describe(analysis)
    assert found == "", f"{name}: incidents in a healthy journal:\n{found}"
    # The pipeline did look: it saw the services come up.
    assert any(run.outcome == "healthy" for run in analysis.diagnosis.runs)


@pytest.mark.parametrize("path", sorted(HEALTHY.glob("*.txt")), ids=lambda path: path.name)
def test_healthy_fixture_has_no_incident(path: Path) -> None:
    analysis = run(path.read_bytes(), str(path))
    found = describe(analysis)
    assert found == "", f"{path.name}: incidents in a healthy log:\n{found}"
    assert any(run.outcome == "healthy" for run in analysis.diagnosis.runs), f"{path.name}: no run came up"


def test_healthy_fixtures_exist() -> None:
    assert len(list(HEALTHY.glob("*.txt"))) >= 3


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        ("sglang-k26", ["cuda.nvcc-not-found", "cuda.header-missing", "cuda.toolkit-too-old-for-arch"]),
        ("vllm", ["cuda.out-of-memory", "net.port-in-use", "lib.shared-object-missing"]),
    ],
)
def test_control_injected_failures_are_incidents(unit: str, expected: list[str]) -> None:
    """The same generator, with failures injected, gives one resolved incident per failure."""
    data, summary = journal(lines=6_000, restart_every=300.0, fmt="short-iso", seed=7, units=(unit,),
                            failures=len(expected))
    assert len(summary.injected) == len(expected)
    analysis = run(data, unit)
    causes = [incident.root_cause.rule_id if incident.root_cause else None for incident in analysis.diagnosis.incidents]
    assert causes == expected, describe(analysis)
    assert all(incident.resolved for incident in analysis.diagnosis.incidents)


def test_cli_exit_status_is_zero_on_healthy_journal(tmp_path: Path,
                                                    generated: dict[str, tuple[bytes, generate.Summary]]) -> None:
    path = tmp_path / "healthy.txt"
    path.write_bytes(generated["unit-sglang-k26"][0])
    env = {**os.environ, "TZ": "UTC"}
    for target in (path, HEALTHY / "sglang-blackwell-jit.txt"):
        result = subprocess.run([sys.executable, "-m", "logsift", "--format", "json", str(target)],
                                capture_output=True, text=True, env=env, timeout=60)
        assert result.returncode == 0, result.stderr or result.stdout[:2000]
        assert json.loads(result.stdout)["incidents"] == []
