#!/usr/bin/env python3
"""Hostile input, timed against yardsticks in the same run (issue 13): many units, many open
streams, and a catastrophic site rule on hostile lines.

    python bench/hostile.py                     # every workload, 3 whole-process runs each
    python bench/hostile.py --update            # also write the table into BENCHMARKS.md
    python bench/hostile.py --write units 100000 > units.txt   # only write an input

Workloads (`--write NAME N` writes one; journalctl `short` text, one host):

- `units N`: N distinct units that each start and stop (two PID 1 lines each), as timer and
  transient units do; the yardstick is `runs N`, one unit started and stopped N times: the same
  lines, so the ratio says what a unit costs beyond its lines.
- `pids N`: N processes with a Python traceback open at once (N header lines, then N frames,
  then N exception lines); the yardstick is the same lines from one process.
- `regex N`: N hostile lines (`a` x 5000 and a `!`) read with a site rule (`site/slow/catastrophic.toml`,
  written by the script) whose regex backtracks catastrophically, `(a+)+$`; the yardstick is the
  same input without the site rule.

Each logsift command is `logsift --no-model -o json FILE`; the time is the median of the runs,
wall and CPU (user + system), with the peak RSS. The machine may be shared: the ratios to the
yardstick of the same run are what to compare between runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterator

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))  # run as a script: import bench.*

from bench.timing import Timing, logsift_command, measure  # noqa: E402

BEGIN, END = "<!-- hostile:begin -->", "<!-- hostile:end -->"
CATASTROPHIC = """title = "slow"
severity = "error"
priority = 50
explanation = "A site rule whose regex backtracks catastrophically on a run of a's."

[[match]]
regex = '''(a+)+$'''
literals = ["aaa"]
"""


def units(count: int) -> Iterator[str]:
    for number in range(count):
        yield f"May 25 20:00:01 h systemd[1]: Started u{number}.service - U{number}."
        yield f"May 25 20:00:02 h systemd[1]: u{number}.service: Deactivated successfully."


def runs(count: int) -> Iterator[str]:
    for _ in range(count):
        yield "May 25 20:00:01 h systemd[1]: Started u.service - U."
        yield "May 25 20:00:02 h systemd[1]: u.service: Deactivated successfully."


def pids(count: int, one: bool = False) -> Iterator[str]:
    for line in ("Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
                 "RuntimeError: CUDA error: out of memory"):
        for number in range(count):
            yield f"May 25 20:00:01 h python[{1000 + (0 if one else number)}]: {line}"


def hostile(count: int) -> Iterator[str]:
    for _ in range(count):
        yield f"May 25 20:00:01 h python[1]: {'a' * 5000}!"


WORKLOADS: dict[str, Callable[[int], Iterator[str]]] = {
    "units": units, "runs": runs, "pids": pids, "pids-one": lambda count: pids(count, one=True), "regex": hostile,
}


def write(name: str, count: int, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as out:
        for line in WORKLOADS[name](count):
            out.write(line + "\n")
    return path


def _summary(timing: Timing) -> str:
    if timing.error:
        return f"error: {timing.error[:100]}"
    try:
        data = json.loads(timing.result)
    except ValueError:
        return "unreadable JSON"
    summary = data.get("summary", {})
    budget = summary.get("regex_budget") or {}
    parts = [f"{len(data.get('incidents', []))} incidents", f"{len(summary.get('units', [])):,} units"]
    if budget.get("timeouts"):
        parts.append(f"{budget['timeouts']} regex timeouts, {len(budget.get('suspended', []))} suspended, "
                     f"{budget.get('skipped_searches', 0)} searches skipped")
    return ", ".join(parts)


def measure_all(units_count: int, pids_count: int, regex_count: int, repeat: int, work: Path) -> list[tuple[str, Timing, Timing]]:
    logsift = [*logsift_command(), "--no-model", "-o", "json"]
    site = work / "site" / "slow"
    site.mkdir(parents=True, exist_ok=True)
    (site / "catastrophic.toml").write_text(CATASTROPHIC, encoding="utf-8")
    rows = []
    pairs = [
        (f"{units_count:,} units", ("units", units_count), ("runs", units_count), (), "one unit, as many runs"),
        (f"{pids_count:,} open tracebacks", ("pids", pids_count), ("pids-one", pids_count), (), "one process, as many lines"),
        (f"{regex_count} hostile lines, site rule `(a+)+$`", ("regex", regex_count), ("regex", regex_count),
         ("--patterns", str(work / "site")), "the same lines without the site rule"),
    ]
    for label, (name, count), (base, base_count), extra, base_label in pairs:
        path = write(name, count, work / f"{name}-{count}.txt")
        base_path = write(base, base_count, work / f"{base}-{base_count}.txt")
        print(f"bench: {label}", file=sys.stderr)
        shown = f"logsift --no-model -o json {'--patterns site ' if extra else ''}{path.name}"
        timing = measure(label, [*logsift, *extra, str(path)], repeat, work, shown=shown)
        yardstick = measure(base_label, [*logsift, str(base_path)], repeat, work,
                            shown=f"logsift --no-model -o json {base_path.name}")
        rows.append((label, timing, yardstick))
    return rows


def render(command: str, rows: list[tuple[str, Timing, Timing]], repeat: int) -> str:
    from bench.run import machine

    info = machine()
    out = [f"Measured {info['date']} with `{command}` on {info['cpus']}, Python {info['python']}; logsift "
           f"{info['commit']} ({info['versions']}); load {info['load']}; median of {repeat} whole-process runs. Inputs: `python bench/hostile.py --write "
           "NAME N` (the docstring of bench/hostile.py says what each is).", "",
           "| input | command | wall s | CPU s | peak RSS MiB | yardstick (same run) | its wall s | its CPU s | "
           "CPU ÷ yardstick | result |",
           "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"]
    for label, timing, yardstick in rows:
        ratio = timing.cpu / yardstick.cpu if yardstick.cpu else float("nan")
        out.append(f"| {label} | `{timing.command}` | {timing.wall:.2f} | {timing.cpu:.2f} | {(timing.peak_rss_kb or 0) / 1024:.1f} "
                   f"| {yardstick.name}: `{yardstick.command}` | {yardstick.wall:.2f} | {yardstick.cpu:.2f} | "
                   f"{ratio:.2f} | {_summary(timing)} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", nargs=2, metavar=("NAME", "N"), help=f"write one input to stdout: {', '.join(WORKLOADS)}")
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument("--pids", type=int, default=2_000)
    parser.add_argument("--regex", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3, help="whole-process runs per command (the median is reported)")
    parser.add_argument("--update", action="store_true", help=f"write the table into BENCHMARKS.md between {BEGIN} and {END}")
    parser.add_argument("--benchmarks", type=Path, default=ROOT / "BENCHMARKS.md", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write:
        name, count = args.write
        for line in WORKLOADS[name](int(count)):
            sys.stdout.write(line + "\n")
        return 0
    given = argv if argv is not None else sys.argv[1:]
    command = "python bench/hostile.py" + (" " + " ".join(given) if given else "")
    with tempfile.TemporaryDirectory(prefix="logsift-hostile-") as work:
        rows = measure_all(args.units, args.pids, args.regex, args.runs, Path(work))
    text = render(command, rows, args.runs)
    print(text)
    if args.update:
        from bench.run import update_benchmarks

        update_benchmarks(text, args.benchmarks, BEGIN, END)
        print(f"bench: updated {args.benchmarks}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
