#!/usr/bin/env python3
"""Time logsift against grep and wc on generated journals of 10 MB and 100 MB (`make bench`).

Whole-process runs, each the median of N runs on a warm page cache, all measured in the same
run on the same file (timing.py): `logsift --format json FILE` with the hyperscan prefilter,
without the learned fallback, and with hyperscan blocked (the portable `str.find` prefilter);
`grep -c -E -f regexes.txt` with the rule library's [[match]] regexes converted to POSIX ERE
(those that convert, baselines.py); `grep -c -F -i -f literals.txt` with the prefilter's
literals; `wc -l`; logsift's start-up. Then the stages of the pipeline are timed in-process, one
after the other, so that the bottleneck shows (stages.py); `--profile` adds a cProfile of the
full pipeline on the smallest journal. Each logsift run is also checked against the failures
injected into the journal.

    python bench/run.py                          # 10M and 100M, 5 runs each
    python bench/run.py --sizes 1G --runs 3      # sizes: K, M, G are powers of 10
    python bench/run.py --update                 # also write the tables into BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Sequence

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))  # run as a script: import bench.*

from bench import generate  # noqa: E402
from bench.baselines import Export, export_patterns  # noqa: E402
from bench.stages import Stage, profile, stages  # noqa: E402
from bench.timing import summarize_result, whole_process  # noqa: E402

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
# What each injected failure should be diagnosed as.
EXPECTED = {
    "nvcc-not-found": "cuda.nvcc-not-found", "header-missing": "cuda.header-missing",
    "toolkit-too-old": "cuda.toolkit-too-old-for-arch", "out-of-memory": "cuda.out-of-memory",
    "nccl-watchdog": "nccl.watchdog-timeout", "module-missing": "python.module-missing",
    "oom-kill": "kernel.oom-kill", "port-in-use": "net.port-in-use",
    "shared-object-missing": "lib.shared-object-missing", "permission-denied": "fs.permission-denied",
}
FAILURES_PER_BYTE = 1 / 5e6  # one failed run per 5 MB of journal

# -- inputs ------------------------------------------------------------------------------------


def size_label(size: int) -> str:
    for unit, factor in (("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def ensure_journal(data: Path, size: int, seed: int, fmt: str = "short-iso") -> tuple[Path, Path]:
    """The journal of this size (generated once, again when the generator changed) and its manifest."""
    data.mkdir(parents=True, exist_ok=True)
    failures = max(1, round(size * FAILURES_PER_BYTE))
    stem = f"journal-{size_label(size)}-{fmt}-s{seed}-f{failures}"
    path, manifest = data / f"{stem}.txt", data / f"{stem}.manifest.tsv"
    sources = [BENCH / name for name in ("generate.py", "host.py", "sglang.py", "vllm.py", "services.py", "tracebacks.py")]
    newest = max(source.stat().st_mtime for source in sources)
    if not path.exists() or not manifest.exists() or path.stat().st_mtime < newest:
        print(f"bench: generating {path.name} ...", file=sys.stderr)
        with open(path, "wb") as out:
            summary = generate.generate(out, fmt=fmt, size=size, failures=failures, seed=seed)
        rows = ["line\tunit\tkind"] + [f"{item.line}\t{item.unit}\t{item.kind}" for item in summary.injected]
        manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path, manifest


def count_lines(path: Path) -> int:
    count = 0
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 22):
            count += chunk.count(b"\n")
    return count
def check_incidents(result: str, manifest: Path) -> dict[str, Any]:
    """How many injected failures logsift reported as incidents, and with which class."""
    data = json.loads(result)
    runs = []
    for incident in data.get("incidents", []):
        for run in incident.get("runs", []):
            cause = run.get("root_cause") or {}
            evidence = (cause.get("evidence") or [{}])[0].get("line")
            if run.get("outcome") == "failed" and evidence is not None:
                runs.append((incident.get("unit"), cause.get("class"), evidence))
    rows = [line.split("\t") for line in manifest.read_text(encoding="utf-8").splitlines()[1:] if line]
    injected = [(int(line), unit, kind) for line, unit, kind in rows]
    starts = sorted(line for line, _, _ in injected)
    found = right = 0
    claimed: set[int] = set()
    misses: list[str] = []
    for line, unit, kind in injected:
        later = [start for start in starts if start > line]
        limit = later[0] if later else 1 << 62
        hits = [(index, cls) for index, (run_unit, cls, evidence) in enumerate(runs)
                if run_unit == unit and line <= evidence < limit]
        if hits:
            found += 1
            claimed.update(index for index, _ in hits)
            if any(cls == EXPECTED.get(kind) for _, cls in hits):
                right += 1
            else:
                misses.append(f"{kind} at line {line} ({unit}): diagnosed as {hits[0][1]}")
        else:
            misses.append(f"{kind} at line {line} ({unit}): no failed run of {unit} with evidence after it")
    extra = [runs[index] for index in range(len(runs)) if index not in claimed]
    return {"injected": len(injected), "found": found, "right_class": right, "misses": misses,
            "extra": [f"{unit}: {cls} (line {line})" for unit, cls, line in extra]}


# -- report -------------------------------------------------------------------------------------


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
    for module in ("hyperscan", "regex"):
        try:
            versions[module] = __import__(module).__version__
        except (ImportError, AttributeError):
            versions[module] = "not installed"
    grep = subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout.splitlines()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "logsift", "patterns"], capture_output=True, text=True,
                           cwd=ROOT).stdout.strip()
    from logsift import __version__

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": f"{os.cpu_count()} ({model})",
        "python": platform.python_version(),
        "os": platform.platform(terse=True),
        "logsift": f"{__version__} (commit {commit or 'unknown'}{' + uncommitted changes' if dirty else ''})",
        "hyperscan": versions["hyperscan"],
        "regex": versions["regex"],
        "grep": grep[0] if grep else "unknown",
    }


def rss(kib: int | None) -> str:
    return "n/a" if kib is None else f"{kib / 1024:.1f}"


def fmt_rate(size: int, seconds: float) -> str:
    return f"{size / 1e6 / seconds:,.0f}" if seconds and seconds == seconds else "-"


def render(command: str, info: dict[str, str], export: Export, results: list[dict[str, Any]],
           stage_results: list[tuple[int, str, list[Stage], dict[str, int]]], engines: Sequence[str],
           profile_text: tuple[str, str] | None, runs: int, stage_runs: int) -> str:
    out: list[str] = []
    out.append(f"Measured {info['date']} with `{command}` on {info['cpus']}, Python {info['python']}, "
               f"{info['os']}; logsift {info['logsift']}, hyperscan {info['hyperscan']}, regex {info['regex']}, "
               f"{info['grep']}.")
    out.append("")
    out.append(f"Baselines use the rule library as it stood: {export.converted} of {export.total} `[[match]]` regexes "
               f"converted to POSIX ERE for `grep -E` (checked against each rule's sample lines); the other "
               f"{export.total - export.converted} are left out of the grep baseline, which therefore does less work "
               f"than logsift. `grep -F` searches the prefilter's {export.literal_count} literals.")
    for entry in results:
        size, lines, timings = entry["bytes"], entry["lines"], entry["timings"]
        logsift = next((timing for timing in timings if timing.name == "logsift (hyperscan)"), None)
        out += ["", f"### {entry['label']}B journal: {size / 1e6:,.{0 if size >= 10**7 else 1}f} MB, {lines:,} lines "
                    f"(median of {entry['runs']} whole-process runs, warm page cache)", ""]
        out.append("| command | wall s | CPU s | MB/s | logsift ÷ this | peak RSS MiB | result |")
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for timing in timings:
            ratio = "-"
            startup = timing.name == "logsift start-up"
            if logsift and timing.walls and logsift.walls and not startup:
                ratio = f"{logsift.wall / timing.wall:,.2f}"
            rate = "-" if startup else fmt_rate(size, timing.wall)
            out.append(f"| `{timing.command}` | {timing.wall:.2f} | {timing.cpu:.2f} | {rate} | "
                       f"{ratio} | {rss(timing.peak_rss_kb)} | {summarize_result(timing)} |")
        check = entry.get("check")
        if check:
            out.append("")
            out.append(f"Injected failed runs: {check['injected']}; reported as a failed run of the right unit: "
                       f"{check['found']}; with the expected root-cause class: {check['right_class']}; "
                       f"failed runs reported where none was injected: {len(check['extra'])}.")
            for miss in check["misses"][:6]:
                out.append(f"- missed: {miss}")
            for extra in check["extra"][:6]:
                out.append(f"- not injected: {extra}")
    for size, label, stage_list, counts in stage_results:
        out += ["", f"### Where the time goes: {label}B journal, in-process CPU seconds (median of {stage_runs})", ""]
        header = " | ".join(f"{engine} CPU s | {engine} MB/s" for engine in engines)
        out.append(f"| stage | {header} |")
        out.append("| --- |" + " ---: | ---: |" * len(engines))
        for stage in stage_list:
            cells = " | ".join(f"{stage.seconds[engine]:.2f} | {fmt_rate(size, stage.seconds[engine])}" for engine in engines)
            out.append(f"| {stage.name} | {cells} |")
        out.append("")
        out.append("Counts: " + ", ".join(f"{name} {value:,}" for name, value in counts.items()) + ".")
    if export.skipped:
        out += ["", "<details><summary>Regexes left out of the grep -E baseline</summary>", ""]
        out += [f"- {where}: {why}" for where, why in export.skipped]
        out += ["", "</details>"]
    if profile_text:
        out += ["", f"### cProfile of analyze() on the {profile_text[0]}B journal (top functions by own time)",
                "", "```", profile_text[1], "```"]
    return "\n".join(out) + "\n"


def update_benchmarks(text: str, path: Path) -> None:
    current = path.read_text(encoding="utf-8")
    if BEGIN not in current or END not in current:
        raise SystemExit(f"bench: {path} has no {BEGIN} ... {END} section; add the two markers where the tables go")
    head, rest = current.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10M,100M", help="comma-separated journal sizes (K, M, G: powers of 10)")
    parser.add_argument("--runs", type=int, default=5, help="whole-process runs per command (the median is reported)")
    parser.add_argument("--large-runs", type=int, default=3,
                        help="whole-process runs per command on journals over 100 MB")
    parser.add_argument("--stage-runs", type=int, default=3, help="in-process runs per stage (the median is reported)")
    parser.add_argument("--stage-max", type=generate.parse_size, default=generate.parse_size("100M"),
                        help="time the stages only on journals up to this size")
    parser.add_argument("--no-stages", action="store_true", help="skip the in-process stage timings")
    parser.add_argument("--profile", action="store_true", help="add a cProfile of analyze() on the smallest journal")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, default=BENCH / "data", help="where generated journals are kept")
    parser.add_argument("--out", type=Path, default=BENCH / "out", help="where results are written")
    parser.add_argument("--update", action="store_true", help=f"write the tables into BENCHMARKS.md between {BEGIN} and {END}")
    parser.add_argument("--benchmarks", type=Path, default=ROOT / "BENCHMARKS.md", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [generate.parse_size(part) for part in args.sizes.split(",") if part.strip()]
    command = "python bench/run.py" + ("" if argv is None and len(sys.argv) == 1 else " " + " ".join(argv if argv is not None else sys.argv[1:]))

    from logsift.rules import load_rules
    from logsift.rules.prefilter import hyperscan

    info = machine()  # before the runs: the commit measured, not the one that landed meanwhile
    rules = load_rules()
    args.out.mkdir(parents=True, exist_ok=True)
    export = export_patterns(rules, args.out)
    print(f"bench: {len(rules)} rules; {export.converted}/{export.total} regexes converted to ERE; "
          f"{export.literal_count} literals", file=sys.stderr)
    engines = ["hyperscan", "find"] if hyperscan is not None else ["find"]
    results: list[dict[str, Any]] = []
    stage_results: list[tuple[int, str, list[Stage], dict[str, int]]] = []
    for size in sizes:
        path, manifest = ensure_journal(args.data, size, args.seed)
        lines = count_lines(path)
        print(f"bench: timing {path.name} ({lines:,} lines)", file=sys.stderr)
        runs = args.runs if size <= 100 * 10**6 else min(args.runs, args.large_runs)
        timings = whole_process(path, export, runs, args.out)
        entry: dict[str, Any] = {"bytes": path.stat().st_size, "label": size_label(size), "lines": lines,
                                 "timings": timings, "runs": runs}
        logsift = timings[0]
        if not logsift.error:
            entry["check"] = check_incidents(logsift.result, manifest)
            (args.out / f"check-{size_label(size)}.json").write_text(json.dumps(entry["check"], indent=1), encoding="utf-8")
        results.append(entry)
        if not args.no_stages and size <= args.stage_max:
            print(f"bench: stages on {path.name}", file=sys.stderr)
            stage_list, counts = stages(path, rules, engines, args.stage_runs)
            stage_results.append((path.stat().st_size, size_label(size), stage_list, counts))
    profile_text = None
    if args.profile and sizes:
        path, _ = ensure_journal(args.data, min(sizes), args.seed)
        profile_text = (size_label(min(sizes)), profile(path, rules))
        (args.out / "profile.txt").write_text(profile_text[1] + "\n", encoding="utf-8")
    text = render(command, info, export, results, stage_results, engines, profile_text, args.runs, args.stage_runs)
    (args.out / "results.md").write_text(text, encoding="utf-8")
    print(text)
    if args.update:
        update_benchmarks(text, args.benchmarks)
        print(f"bench: updated {args.benchmarks}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
