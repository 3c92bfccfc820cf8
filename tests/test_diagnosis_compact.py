"""Past runs keep slim copies of their events (logsift.diagnosis.compact): every report is the
same as with whole events, on a crash loop of captured failures and on the seed incident."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from logsift.diagnosis import compact, runs
from logsift.report import story
from tests.helpers import FIXTURES, invoke


def test_what_is_kept_covers_the_reports_excerpt() -> None:
    assert max(story.CONTEXT_BEFORE, story.CONTEXT_AFTER) <= compact.KEPT_AROUND


@pytest.fixture(scope="module")
def crash_loop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bench import crashloop

    path = tmp_path_factory.mktemp("dense") / "dense.txt"
    out = io.BytesIO()
    crashloop.generate(out, 400_000, seed=2)
    path.write_bytes(out.getvalue())
    return path


@pytest.mark.parametrize("fmt", ["json", "markdown", "text"])
def test_reports_are_the_same_with_whole_events(fmt: str, crash_loop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in (crash_loop, FIXTURES / "seed-incident" / "journal.txt"):
        slim = invoke("--no-model", "--format", fmt, str(path))
        with monkeypatch.context() as patched:
            patched.setattr(runs, "_compact", lambda run: None)
            whole = invoke("--no-model", "--format", fmt, str(path))
        assert slim == whole, path.name


def _kept(path: Path) -> int:
    import logsift

    report = logsift.diagnose(str(path), model="off")
    events = {id(finding.event): finding.event for incident in report.incidents for run in incident.runs
              for finding in run.findings}
    return sum(len(event.records) for event in events.values())


def test_crash_loop_runs_keep_slim_events(crash_loop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without this, the test above would pass with compaction switched off."""
    slim = _kept(crash_loop)
    monkeypatch.setattr(runs, "_compact", lambda run: None)
    assert slim < 0.8 * _kept(crash_loop)
