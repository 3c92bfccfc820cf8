"""The benchmark scripts run: the generator is deterministic and writes each format, the regex
conversion for the grep baseline keeps meanings, and bench/run.py goes end to end on a tiny
journal (and writes only between its markers in BENCHMARKS.md)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT))

from bench import ere, generate  # noqa: E402
from bench import run as bench_run  # noqa: E402

SHORT_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 gpu-node-07 [\w.-]+(\[\d+\])?: ")
SHORT = re.compile(r"^[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d gpu-node-07 [\w.-]+(\[\d+\])?: ")


def make(**options: object) -> bytes:
    out = io.BytesIO()
    generate.generate(out, **options)  # type: ignore[arg-type]
    return out.getvalue()


def test_generator_is_deterministic() -> None:
    first = make(lines=3000, failures=2, seed=5)
    assert first == make(lines=3000, failures=2, seed=5)
    assert first != make(lines=3000, failures=2, seed=6)


@pytest.mark.parametrize(("fmt", "prefix"), [("short-iso", SHORT_ISO), ("short", SHORT), ("plain", None)])
def test_generator_formats(fmt: str, prefix: re.Pattern[str] | None) -> None:
    lines = make(lines=2000, fmt=fmt, seed=3).decode("utf-8").splitlines()
    assert len(lines) >= 2000
    if prefix is not None:
        bad = [line for line in lines if not prefix.match(line)]
        assert not bad, bad[:3]
    else:
        assert not any(SHORT_ISO.match(line) or SHORT.match(line) for line in lines)
        assert any(line.endswith("The server is fired up and ready to roll!") for line in lines)


def test_generator_stops_at_the_size_at_a_quiet_moment() -> None:
    data = make(size=300_000, seed=4)
    assert 300_000 <= len(data) < 300_000 + 200_000
    assert data.endswith(b"\n")


def test_generator_cli_writes_manifest(tmp_path: Path) -> None:
    out, manifest = tmp_path / "j.txt", tmp_path / "m.tsv"
    result = subprocess.run([sys.executable, str(BENCH / "generate.py"), "--lines", "4000", "--format", "short",
                             "--failures", "3", "--manifest", str(manifest), "-o", str(out)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = manifest.read_text().splitlines()
    assert rows[0] == "line\tunit\tkind" and len(rows) == 4
    lines = out.read_text().splitlines()
    for row in rows[1:]:
        number, unit, kind = row.split("\t")
        assert kind in generate.KINDS and unit.endswith(".service")
        assert 1 <= int(number) <= len(lines)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"fatal error: (?P<h>cu[a-z]+\.h): No such", r"fatal error: (cu[a-z]+\.h): No such"),
        (r"status=\d+/\w+", r"status=[0-9]+/[[:alnum:]_]+"),
        (r"^Failed to start (?P<u>.+?)\.$", r"(^|: )Failed to start (.+)\.$"),
        (r"[\w./+-]+\.cu\(\d+\)", r"[./+[:alnum:]_-]+\.cu\([0-9]+\)"),
        (r"[^\]]*", r"[^]]*"),
        (r"nvcc\'", r"nvcc'"),
        (r"a(?:b|cd){2,}", r"a(b|cd){2,}"),
    ],
)
def test_ere_conversion(source: str, expected: str) -> None:
    assert ere.to_ere(source) == (expected, "")


@pytest.mark.parametrize("source", [r"status=(?!0/)\S+", r"(?<=x)y", r"(a)\1", r"(?i)nvcc", r"a\nb", r"[\s\S]"])
def test_ere_refuses_what_posix_cannot_say(source: str) -> None:
    text, why = ere.to_ere(source)
    assert text is None and why


def test_near_miss_lines_share_words_with_rules_but_match_none() -> None:
    """What makes the sparse journal realistic: each template has a rule's literal in it (a
    literal prefilter lets it through) and no rule regex matches it (it is healthy)."""
    import random

    from bench.host import Clock
    from bench.nearmiss import TEMPLATES
    from logsift.match import LEVEL_MARK, MARKER, NEAR, entries
    from logsift.rules import load_rules
    from logsift.rules.prefilter import build_prefilter

    rules = load_rules()
    exact = build_prefilter(entries(rules), "find")
    literal = build_prefilter(entries(rules, near=True), "find")
    stamps, rng = Clock()(1779688800.0), random.Random(1)
    texts = [template.format(rfc=stamps.rfc, dash=stamps.dash, mmdd=stamps.mmdd, gin=stamps.gin, ms=rng.randint(1, 999),
                             n=rng.randint(2, 60000), gpu=3, id="5f0c2f4e8a3b4d0c", ip="10.1.2.3")
             for _, template in TEMPLATES]
    # (markers are for grouping; error-level shapes only make a line a candidate, see LEVEL_MARK)
    assert [hits - {MARKER, LEVEL_MARK} for hits in exact.scan(texts)] == [frozenset()] * len(texts)
    sharing = sum(1 for hits in literal.scan(texts) if NEAR in hits)
    assert sharing >= len(texts) * 2 // 3


def test_near_miss_share_of_the_generated_journal() -> None:
    from bench.nearmiss import TEMPLATES

    idents = {ident for ident, _ in TEMPLATES} - {"python3", "python", "vllm", "ollama", "text-generation-launcher", "kernel"}
    lines = make(size=400_000, seed=2, near_miss=0.1).decode("utf-8").splitlines()
    near = sum(1 for line in lines if line.split(" ", 3)[2].split("[")[0] in idents)
    assert 0.02 < near / len(lines) < 0.2  # the unique idents carry part of the 10%


def test_crashloop_journal_is_deterministic_and_labelled(tmp_path: Path) -> None:
    from bench import crashloop

    first, second = io.BytesIO(), io.BytesIO()
    # 1 MB: enough runs whatever captures the loop draws (a JIT build's verbose capture is
    # thousands of lines)
    lines, runs = crashloop.generate(first, 1_000_000, seed=3)
    crashloop.generate(second, 1_000_000, seed=3)
    assert first.getvalue() == second.getvalue()
    text = first.getvalue().decode("utf-8").splitlines()
    assert len(text) == lines and all(SHORT_ISO.match(line) for line in text)
    classes = {run.expected for run in runs}
    assert len(runs) > 20 and classes - {"healthy"}
    for run in runs:
        assert text[run.line - 1].endswith(f"Started {run.unit} - " + dict((u, d) for u, d, _ in crashloop.UNITS)[run.unit] + ".")


def test_bench_run_end_to_end(tmp_path: Path) -> None:
    benchmarks = tmp_path / "BENCHMARKS.md"
    benchmarks.write_text(f"intro\n{bench_run.BEGIN}\nPREVIOUS-TABLES\n{bench_run.END}\n<!-- accuracy:begin -->\nkept\n<!-- accuracy:end -->\n")
    code = bench_run.main(["--sparse", "300K", "--dense", "200K", "--native", "100K", "--runs", "1",
                           "--data", str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--update",
                           "--benchmarks", str(benchmarks)])
    assert code == 0
    text = (tmp_path / "out" / "results.md").read_text()
    for expected in ("| bar |", "LC_ALL=C grep -c -E -f", "logsift --no-model --format json", "without hyperscan",
                     "journalctl", "-o short-iso | logsift", "python -c pass", "cProfile: sparse", "cProfile: dense",
                     "Sparse: 1 failed runs injected, 1 reported", "Dense: "):
        assert expected in text, expected
    assert "error:" not in text
    updated = benchmarks.read_text()
    assert updated.startswith("intro\n") and "PREVIOUS-TABLES" not in updated and "kept" in updated
    assert "| bar |" in updated.split(bench_run.END)[0]


def test_hostile_inputs_are_what_bench_hostile_says() -> None:
    from bench import hostile

    units = list(hostile.units(3))
    assert len(units) == 6 and "Started u2.service - U2." in units[4] and "u2.service: Deactivated" in units[5]
    assert len(set(hostile.runs(3))) == 2 and len(list(hostile.runs(3))) == 6
    pids = list(hostile.pids(4))
    assert len(pids) == 12 and pids[0].endswith("Traceback (most recent call last):") and "python[1003]" in pids[3]
    assert len({line.split(":")[2] for line in hostile.pids(4, one=True)}) == 1  # one process
    assert all(line.endswith("a" * 5000 + "!") for line in hostile.hostile(2))


def test_bench_hostile_end_to_end_on_tiny_inputs(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(BENCH / "hostile.py"), "--units", "50", "--pids", "5", "--regex", "2",
                             "--runs", "1"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert len(table) == 5 and "50 units" in table[2] and "50 units" in table[2].split("|")[-2]
    assert "2 regex timeouts" in table[4]


def test_watch_benchmarks_run_end_to_end(tmp_path: Path) -> None:
    """bench/watch.py on a tiny scale: a few incidents through a live journal, a few minutes of
    journal through the soak; the tables come out (the real numbers are in BENCHMARKS.md)."""
    from tests.journal_tools import have_journal_remote

    if not have_journal_remote():
        pytest.skip("needs systemd-journal-remote (make test installs it)")
    raw = tmp_path / "raw.json"
    result = subprocess.run([sys.executable, str(BENCH / "watch.py"), "latency", "soak", "--incidents", "3",
                             "--pause", "0.02", "--hours", "0.01", "--json", str(raw)],
                            capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "p99 ms" in result.stdout and "RSS MiB" in result.stdout
    import json

    data = json.loads(raw.read_text())
    assert data["latency"]["alerted"] == 3 and len(data["latency"]["journalctl"]) == 3
    assert data["soak"]["lines"] == 36_000 and data["soak"]["injected"] >= 1
    # Sampled a twelfth of the way at a time even on a small input, each sample once the watch had
    # read what was written, the last at the end of the input.
    samples = data["soak"]["samples"]
    assert len(samples) == 12 and [read for read, _, _ in samples] == list(range(3000, 36_001, 3000))
    assert all(kib for _, _, kib in samples)
