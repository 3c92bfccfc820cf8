#!/usr/bin/env python3
"""Every performance bar of logsift, measured against its yardstick in one run (`make bench`).

Workloads (generated once into bench/data/, deterministic):
- **sparse**: a healthy GPU host's journal with realistic near-miss lines (bench/nearmiss.py:
  "error", "failed", "timeout", "cuda" in healthy traffic) and one failed run per 5 MB;
- **dense**: a crash-looping host (bench/crashloop.py: real captured failure output, restart
  after restart);
- **native**: journal files that systemd-journal-remote builds from a sparse journal;
- **empty**: an empty file, logsift's fixed start-up cost.

Each command is a whole process timed by GNU time (wall, CPU, peak RSS); the commands are run
in rounds (each once per round, the median of the rounds kept), so that load on the machine
hits all of them alike. The ratios are those of the bars in issue 12; then a cProfile of each
workload in-process shows where the rest of the time goes.

    python bench/run.py                      # 200 MB sparse, 50 MB dense, 100 MB native, 3 rounds
    python bench/run.py --sparse 20M --dense 5M --native 10M --runs 1   # a quick look
    python bench/run.py --update             # also write the results into BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))  # run as a script: import bench.*

from bench import crashloop, generate  # noqa: E402
from bench.baselines import export_patterns  # noqa: E402
from bench.profiles import profile_workload  # noqa: E402
from bench.timing import Timing, logsift_command, measure_rounds, warm  # noqa: E402

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
EXPECTED = {
    "nvcc-not-found": "cuda.nvcc-not-found", "header-missing": "cuda.header-missing",
    "toolkit-too-old": "cuda.toolkit-too-old-for-arch", "out-of-memory": "cuda.out-of-memory",
    "nccl-watchdog": "nccl.watchdog-timeout", "module-missing": "python.module-missing",
    "oom-kill": "kernel.oom-kill", "port-in-use": "net.port-in-use",
    "shared-object-missing": "lib.shared-object-missing", "permission-denied": "fs.permission-denied",
}
FAILURES_PER_BYTE = 1 / 5e6  # one failed run per 5 MB of the sparse journal
NEAR_MISS = 0.1  # share of the sparse journal's lines that are healthy near misses
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"
BLOCK_HYPERSCAN = ("import sys; sys.modules['hyperscan'] = None; from logsift.cli import entry; "
                   "sys.argv[0] = 'logsift'; entry()")


def size_label(size: int) -> str:
    for unit, factor in (("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _stale(path: Path, sources: list[str]) -> bool:
    newest = max((BENCH / name).stat().st_mtime for name in sources)
    return not path.exists() or path.stat().st_mtime < newest


def sparse_journal(data: Path, size: int, seed: int) -> tuple[Path, Path]:
    failures = max(1, round(size * FAILURES_PER_BYTE))
    stem = f"sparse-{size_label(size)}-s{seed}-f{failures}-n{NEAR_MISS}"
    path, manifest = data / f"{stem}.txt", data / f"{stem}.manifest.tsv"
    if _stale(path, ["generate.py", "host.py", "sglang.py", "vllm.py", "services.py", "tracebacks.py", "nearmiss.py"]) \
            or not manifest.exists():
        print(f"bench: generating {path.name} ...", file=sys.stderr)
        with open(path, "wb") as out:
            summary = generate.generate(out, size=size, failures=failures, seed=seed, near_miss=NEAR_MISS)
        rows = ["line\tunit\tkind"] + [f"{item.line}\t{item.unit}\t{item.kind}" for item in summary.injected]
        manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path, manifest


def dense_journal(data: Path, size: int, seed: int) -> tuple[Path, Path]:
    path, manifest = data / f"dense-{size_label(size)}-s{seed}.txt", data / f"dense-{size_label(size)}-s{seed}.manifest.tsv"
    if _stale(path, ["crashloop.py"]) or not manifest.exists():
        print(f"bench: generating {path.name} ...", file=sys.stderr)
        with open(path, "wb") as out:
            _, runs = crashloop.generate(out, size, seed)
        crashloop.write_manifest(manifest, runs)
    return path, manifest


def native_journal(data: Path, text: Path) -> list[Path] | None:
    """Journal files made by systemd-journal-remote from `text` (None when it is missing)."""
    from bench.readers import write_journal

    if not Path(JOURNAL_REMOTE).exists():
        return None
    folder = data / f"native-{text.stem}"
    done = folder / ".done"
    if not done.exists() or done.stat().st_mtime < text.stat().st_mtime:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        print(f"bench: building journal files from {text.name} ...", file=sys.stderr)
        write_journal(text, folder / "host.journal")
        done.touch()
    return sorted(folder.glob("*.journal"))


# -- checks of what logsift said ----------------------------------------------------------------


def check_sparse(result: str, manifest: Path) -> dict[str, Any]:
    """How many injected failures logsift reported as a failed run of the right unit and class."""
    runs = []
    for incident in json.loads(result).get("incidents", []):
        for run in incident.get("runs", []):
            cause = run.get("root_cause") or {}
            evidence = (cause.get("evidence") or [{}])[0].get("line")
            if run.get("outcome") == "failed" and evidence is not None:
                runs.append((incident.get("unit"), cause.get("class"), evidence))
    injected = [(int(line), unit, kind) for line, unit, kind in
                (row.split("\t") for row in manifest.read_text(encoding="utf-8").splitlines()[1:] if row)]
    starts = sorted(line for line, _, _ in injected)
    found = right = 0
    claimed: set[int] = set()
    for line, unit, kind in injected:
        later = [start for start in starts if start > line]
        limit = later[0] if later else 1 << 62
        hits = [(index, cls) for index, (run_unit, cls, evidence) in enumerate(runs)
                if run_unit == unit and line <= evidence < limit]
        if hits:
            found += 1
            claimed.update(index for index, _ in hits)
            right += any(cls == EXPECTED.get(kind) for _, cls in hits)
    return {"injected": len(injected), "found": found, "right_class": right, "extra": len(runs) - len(claimed)}


def check_dense(result: str, manifest: Path) -> dict[str, Any]:
    """Failed runs reported against failed runs written, and how many of them name a class that
    the journal's captures were of (per class: the fewer of written and reported)."""
    written: dict[str, int] = {}
    for row in manifest.read_text(encoding="utf-8").splitlines()[1:]:
        if row and row.split("\t")[2] != "healthy":
            written[row.split("\t")[2]] = written.get(row.split("\t")[2], 0) + 1
    reported: dict[str, int] = {}
    data = json.loads(result)
    for incident in data.get("incidents", []):
        for run in incident.get("runs", []):
            if run.get("outcome") == "failed":
                cause = (run.get("root_cause") or {}).get("class") or "none"
                reported[cause] = reported.get(cause, 0) + 1
    right = sum(min(count, reported.get(cls, 0)) for cls, count in written.items())
    return {"written": sum(written.values()), "reported": sum(reported.values()), "right_class": right,
            "incidents": len(data.get("incidents", []))}


# -- the run -------------------------------------------------------------------------------------


@dataclass
class Bar:
    name: str
    value: float
    limit: float
    below: bool  # the value must be at most the limit (else at least)
    how: str

    @property
    def met(self) -> bool:
        return self.value <= self.limit if self.below else self.value >= self.limit


def machine() -> dict[str, str]:
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for module in ("hyperscan", "ahocorasick_rs", "regex"):
        try:
            versions[module] = getattr(__import__(module), "__version__", "installed")
        except ImportError:
            versions[module] = "not installed"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "logsift", "patterns"], capture_output=True, text=True,
                           cwd=ROOT).stdout.strip()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "cpus": f"{os.cpu_count()} ({model})",
        "python": platform.python_version(), "commit": f"{commit or 'unknown'}{' + uncommitted changes' if dirty else ''}",
        "versions": ", ".join(f"{name} {version}" for name, version in versions.items()), "load": f"{load:.1f}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sparse", type=generate.parse_size, default=generate.parse_size("200M"))
    parser.add_argument("--dense", type=generate.parse_size, default=generate.parse_size("50M"))
    parser.add_argument("--native", type=generate.parse_size, default=generate.parse_size("100M"),
                        help="size of the sparse text the journal files are built from (0: no native workload)")
    parser.add_argument("--runs", type=int, default=3, help="rounds of every command (the median is reported)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile of each workload")
    parser.add_argument("--data", type=Path, default=BENCH / "data", help="where generated inputs are kept")
    parser.add_argument("--out", type=Path, default=BENCH / "out", help="where results are written")
    parser.add_argument("--update", action="store_true", help=f"write the results into BENCHMARKS.md between {BEGIN} and {END}")
    parser.add_argument("--benchmarks", type=Path, default=ROOT / "BENCHMARKS.md", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    shown_args = argv if argv is not None else sys.argv[1:]
    command = "python bench/run.py" + (" " + " ".join(shown_args) if shown_args else "")
    info = machine()
    args.data.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    from logsift.rules import load_rules

    rules = load_rules()
    export = export_patterns(rules, args.out)
    sparse, sparse_manifest = sparse_journal(args.data, args.sparse, args.seed)
    dense, dense_manifest = dense_journal(args.data, args.dense, args.seed)
    native_files: list[Path] | None = None
    if args.native:
        native_text, _ = sparse_journal(args.data, args.native, args.seed)
        native_files = native_journal(args.data, native_text)
    empty = args.out / "empty.txt"
    empty.write_bytes(b"")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "logsift")], check=False,
                   env={key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"})
    for path in (sparse, dense):
        warm(path)
    logsift = logsift_command()
    rel = {path: _shown(path) for path in (sparse, dense, export.regexes)}
    plan: list[tuple[str, list[str], str]] = [
        ("sparse logsift", [*logsift, "--no-model", "--format", "json", str(sparse)],
         f"logsift --no-model --format json {rel[sparse]}"),
        ("sparse grep", ["env", "LC_ALL=C", "grep", "-c", "-E", "-f", str(export.regexes), str(sparse)],
         f"LC_ALL=C grep -c -E -f {rel[export.regexes]} {rel[sparse]}"),
        ("sparse portable", [sys.executable, "-c", BLOCK_HYPERSCAN, "--no-model", "--format", "json", str(sparse)],
         f"logsift --no-model --format json {rel[sparse]}  # without hyperscan"),
        ("sparse wc", ["wc", "-l", str(sparse)], f"wc -l {rel[sparse]}"),
        ("dense logsift", [*logsift, "--no-model", "--format", "json", str(dense)],
         f"logsift --no-model --format json {rel[dense]}"),
        ("start-up", [*logsift, "--no-model", "--format", "json", str(empty)], "logsift --no-model --format json empty.txt"),
        ("help", [*logsift, "--help"], "logsift --help"),
        ("python", [sys.executable, "-c", "pass"], "python -c pass"),
    ]
    journalctl = shutil.which("journalctl")
    if native_files and journalctl:
        files = [f"--file={path}" for path in native_files]
        shown_files = f"--file={_shown(native_files[0].parent)}/*.journal"
        rendered = args.out / "rendered.txt"
        plan += [
            ("native logsift", [*logsift, "--no-model", "--format", "json", *files],
             f"logsift --no-model --format json {shown_files}"),
            ("native journalctl", ["sh", "-c", f'journalctl {" ".join(files)} -o short-iso --no-pager > "{rendered}"'],
             f"journalctl {shown_files} -o short-iso > rendered.txt"),
            ("fallback logsift", [*logsift, "--no-model", "--format", "json", "--journal-reader", "journalctl", *files],
             f"logsift --no-model --format json --journal-reader journalctl {shown_files}"),
            ("export journalctl", ["sh", "-c", f'journalctl {" ".join(files)} -o export --all --no-pager > "{rendered}"'],
             f"journalctl {shown_files} -o export --all > rendered.txt"),
            ("pipe", ["sh", "-c", f'journalctl {" ".join(files)} -o short-iso --no-pager | {" ".join(logsift)} '
                                  f'--no-model --format json > "{args.out / "pipe.json"}"'],
             f"journalctl {shown_files} -o short-iso | logsift --no-model --format json"),
        ]
    print(f"bench: {len(plan)} commands, {args.runs} rounds", file=sys.stderr)
    timings = measure_rounds(plan, args.runs, args.out)
    text = render(command, info, timings, args, sparse, dense, native_files, sparse_manifest, dense_manifest, export)
    if not args.no_profile:
        sections = []
        for name, target in (("sparse", [sparse]), ("dense", [dense]), ("native", native_files or [])):
            if target:
                profile = profile_workload(name, target, rules)
                (args.out / f"profile-{name}.txt").write_text(profile + "\n", encoding="utf-8")
                sections += ["", f"<details><summary>cProfile: {name} workload, in-process, top functions by own time"
                                 "</summary>", "", "```", profile, "```", "", "</details>"]
        text += "\n".join(sections) + "\n"
    (args.out / "results.md").write_text(text, encoding="utf-8")
    print(text)
    if args.update:
        update_benchmarks(text, args.benchmarks)
        print(f"bench: updated {args.benchmarks}", file=sys.stderr)
    return 0


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def render(command: str, info: dict[str, str], timings: dict[str, Timing], args: argparse.Namespace, sparse: Path,
           dense: Path, native_files: list[Path] | None, sparse_manifest: Path, dense_manifest: Path,
           export: Any) -> str:
    sparse_mb, dense_mb = sparse.stat().st_size / 1e6, dense.stat().st_size / 1e6
    t = timings
    bars = [
        Bar("sparse journal: logsift / LC_ALL=C grep -E (wall)", t["sparse logsift"].wall / t["sparse grep"].wall, 0.5, True,
            "at least 2x faster than grep over the rule regexes"),
        Bar("dense crash loop: seconds per MB / sparse seconds per MB",
            (t["dense logsift"].wall / dense_mb) / (t["sparse logsift"].wall / sparse_mb), 2.0, True,
            "a crash-loop day at most 2x the sparse cost per MB"),
        Bar("dense crash loop: peak RSS MiB", (t["dense logsift"].peak_rss_kb or 0) / 1024, 100, True, "<= 100 MiB on any input"),
        Bar("sparse journal: peak RSS MiB", (t["sparse logsift"].peak_rss_kb or 0) / 1024, 64, True, "<= 64 MiB sparse"),
        Bar("start-up on empty input: seconds", t["start-up"].wall, 0.1, True, "under 0.1 s"),
        Bar("--help: seconds", t["help"].wall, 0.1, True, "under 0.1 s"),
        Bar("without hyperscan: MB/s on the sparse journal", sparse_mb / t["sparse portable"].wall, 100, False,
            ">= 100 MB/s, engine chosen automatically"),
    ]
    if "native logsift" in t:
        bars += [
            Bar("native files: logsift / journalctl -o short-iso", t["native logsift"].wall / t["native journalctl"].wall,
                0.5, True, "at least 2x faster than journalctl renders them"),
            Bar("journalctl fallback: logsift / journalctl -o export alone",
                t["fallback logsift"].wall / t["export journalctl"].wall, 1.10, True, "the export parser keeps up"),
            Bar("journalctl -o short-iso | logsift: / journalctl alone", t["pipe"].wall / t["native journalctl"].wall,
                1.10, True, "within 1.10x of journalctl alone"),
        ]
    out = [f"Measured {info['date']} with `{command}` on {info['cpus']} (load average {info['load']} at the start), "
           f"Python {info['python']}, commit {info['commit']}; {info['versions']}.", "",
           f"Inputs: sparse `{_shown(sparse)}` ({sparse_mb:,.0f} MB, {NEAR_MISS:.0%} near-miss lines), "
           f"dense `{_shown(dense)}` ({dense_mb:,.0f} MB, crash loops of captured output)"
           + (f", native {len(native_files)} journal files ({sum(p.stat().st_size for p in native_files) / 1e6:,.0f} MB)"
              if native_files else ", no native journal (systemd-journal-remote missing)")
           + f". The grep yardstick runs {export.converted} of {export.total} rule regexes (those that convert to ERE).", "",
           "### The bars (ratios of the medians of one run)", "",
           "| bar | measured | limit | met |", "| --- | ---: | ---: | --- |"]
    for bar in bars:
        out.append(f"| {bar.name} ({bar.how}) | {bar.value:.2f} | {'<=' if bar.below else '>='} {bar.limit:g} | "
                   f"{'yes' if bar.met else '**no**'} |")
    out += ["", f"### Commands (median of {args.runs} rounds)", "",
            "| command | wall s | CPU s | peak RSS MiB | result |", "| --- | ---: | ---: | ---: | --- |"]
    for timing in t.values():
        out.append(f"| `{timing.command}` | {timing.wall:.2f} | {timing.cpu:.2f} | "
                   f"{(timing.peak_rss_kb or 0) / 1024:.1f} | {_summary(timing)} |")
    sparse_check = check_sparse(t["sparse logsift"].result, sparse_manifest) if t["sparse logsift"].result else None
    dense_check = check_dense(t["dense logsift"].result, dense_manifest) if t["dense logsift"].result else None
    out.append("")
    if sparse_check:
        out.append(f"Sparse: {sparse_check['injected']} failed runs injected, {sparse_check['found']} reported on the right "
                   f"unit, {sparse_check['right_class']} with the expected class, {sparse_check['extra']} reported where none "
                   "was injected.")
    if dense_check:
        out.append(f"Dense: {dense_check['written']} failed runs written, {dense_check['reported']} reported as failed "
                   f"runs in {dense_check['incidents']} incidents, {dense_check['right_class']} with a class the "
                   "captures were labelled with.")
    return "\n".join(out) + "\n"


def _summary(timing: Timing) -> str:
    if timing.error:
        return f"error: {timing.error[:100]}"
    text = timing.result.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return "unreadable JSON"
        summary = data.get("summary", {})
        return f"{len(data.get('incidents', []))} incidents, {summary.get('entries', 0):,} of {summary.get('lines', 0):,} parsed"
    first = text.split()[0] if text else ""
    return f"{int(first):,}" if first.isdigit() else ""


def replace_section(current: str, text: str, begin: str = BEGIN, end: str = END, where: str = "BENCHMARKS.md") -> str:
    """`current` with what lies between the markers `begin` and `end` replaced by `text` (every
    bench script writes its own section of BENCHMARKS.md this way)."""
    if begin not in current or end not in current:
        raise SystemExit(f"bench: {where} has no {begin} ... {end} section; add the two markers where the tables go")
    head, rest = current.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{text}{end}{tail}"


def update_benchmarks(text: str, path: Path, begin: str = BEGIN, end: str = END) -> None:
    path.write_text(replace_section(path.read_text(encoding="utf-8"), text, begin, end, str(path)), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
