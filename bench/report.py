#!/usr/bin/env python3
"""What facts.toml and the post-mortem reporters cost, against logsift itself in the same run.

On a generated host journal (bench/generate.py, as `make bench` uses) and on the report fixtures,
whole-process runs, median of N, page cache warm (timing.py):

- `logsift --no-model -o json FILE` with the bundled library, and with the same library minus
  `facts.toml` (a copy in a temporary directory, through LOGSIFT_PATTERNS): the ratio is what
  reading facts per run costs a diagnosis;
- `logsift report --no-model FILE` (Markdown) and `-o html`, against `-o json` on the same file
  (the generated journal, the 40-run crash loop, the seed): the ratio is what telling the story
  costs on top of the diagnosis.

Ratios are of CPU seconds (user + system), which other load on the machine does not inflate.

    python bench/report.py                       # 100 MB journal, 5 runs each
    python bench/report.py --size 10M --runs 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))  # run as a script: import bench.*

from bench import generate  # noqa: E402
from bench.run import ensure_journal  # noqa: E402
from bench.timing import Timing, logsift_command, measure, shown_path, warm  # noqa: E402


def _journal(size: str, seed: int, data: Path) -> Path:
    """The same journal `make bench` reads (one injected failure per 5 MB)."""
    path, _ = ensure_journal(data, generate.parse_size(size), seed)
    return path


def _row(timing: Timing, yardstick: Timing | None) -> str:
    """Wall and CPU seconds, and CPU as a ratio to the yardstick: CPU time does not count the
    other load on the machine, which wall time does."""
    if timing.error:
        return f"| `{timing.command}` | failed: {timing.error} | | |"
    ratio = f"{timing.cpu / yardstick.cpu:.2f}" if yardstick is not None and yardstick.cpu else "1.00"
    return f"| `{timing.command}` | {timing.wall:.2f} | {timing.cpu:.2f} | {ratio} |"


def _in_process(journal: Path, runs: int) -> tuple[float, float, float]:
    """CPU seconds of a diagnosis without and with the facts (the same loaded rules otherwise),
    interleaved so that a change of load on the machine hits both; and the facts' load time."""
    import statistics
    import time
    from dataclasses import replace

    import logsift
    from logsift.rules import load_rules
    from logsift.rules.facts import load_facts

    rules = load_rules()
    bare = replace(rules, facts=())
    times: dict[str, list[float]] = {"bare": [], "full": []}
    for _ in range(runs):
        for name, chosen in (("bare", bare), ("full", rules)):
            began = time.process_time()
            logsift.diagnose(str(journal), model="off", rules=chosen)
            times[name].append(time.process_time() - began)
    began = time.process_time()
    for _ in range(10):
        load_facts(ROOT / "patterns" / "facts.toml")
    loading = (time.process_time() - began) / 10
    return statistics.median(times["bare"]), statistics.median(times["full"]), loading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100M", help="size of the generated journal (K, M, G: powers of 10)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, default=BENCH / "data")
    parser.add_argument("--out", type=Path, default=BENCH / "out")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    journal = _journal(args.size, args.seed, args.data)
    warm(journal)
    logsift = logsift_command()
    shown = shown_path(journal)
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="logsift-nofacts-") as scratch:
        library = Path(scratch) / "patterns"
        shutil.copytree(ROOT / "patterns", library, ignore=shutil.ignore_patterns("facts.toml", "facts.log"))
        command = [*logsift, "--no-model", "-o", "json", str(journal)]
        base = measure("no facts", command, args.runs, args.out, {"LOGSIFT_PATTERNS": str(library)},
                       shown=f"LOGSIFT_PATTERNS=<patterns without facts.toml> logsift --no-model -o json {shown}")
        with_facts = measure("facts", command, args.runs, args.out, shown=f"logsift --no-model -o json {shown}")
    rows += ["", f"Facts on a {args.size} host journal ({journal.stat().st_size / 1e6:.0f} MB), median of {args.runs}:",
             "", "| command | wall s | CPU s | CPU ratio |", "| --- | ---: | ---: | ---: |",
             _row(base, None), _row(with_facts, base)]
    bare, full, loading = _in_process(journal, args.runs)
    rows += ["", f"In-process, `logsift.diagnose(FILE, model='off', rules=...)`, CPU seconds, median of {args.runs} "
             "interleaved runs:", "", "| rules | CPU s | ratio |", "| --- | ---: | ---: |",
             f"| the library without facts | {bare:.3f} | 1.00 |", f"| the library with facts.toml | {full:.3f} | "
             f"{full / bare:.2f} |", "", f"Loading and checking facts.toml at start-up: {loading * 1000:.1f} ms."]
    for path in [journal, ROOT / "fixtures" / "reports" / "crash-loop" / "journal.txt",
                 ROOT / "fixtures" / "seed-incident" / "journal.txt"]:
        name = shown_path(path)
        json_run = measure("json", [*logsift, "--no-model", "-o", "json", str(path)], args.runs, args.out,
                           shown=f"logsift --no-model -o json {name}")
        markdown = measure("markdown", [*logsift, "report", "--no-model", str(path)], args.runs, args.out,
                           shown=f"logsift report --no-model {name}")
        html = measure("html", [*logsift, "report", "--no-model", "-o", "html", str(path)], args.runs, args.out,
                       shown=f"logsift report --no-model -o html {name}")
        rows += ["", "| command | wall s | CPU s | CPU ratio to -o json |", "| --- | ---: | ---: | ---: |",
                 _row(json_run, None), _row(markdown, json_run), _row(html, json_run)]
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
