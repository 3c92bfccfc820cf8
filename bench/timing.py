"""Whole-process timings: wall and CPU time and peak RSS of each command, median of N runs."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from bench.baselines import Export

ROOT = Path(__file__).resolve().parent.parent
BLOCK_HYPERSCAN = "import sys; sys.modules['hyperscan'] = None; from logsift.cli import entry; sys.argv[0] = 'logsift'; entry()"


@dataclass
class Timing:
    name: str
    command: str
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    result: str = ""
    error: str = ""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls) if self.walls else float("nan")

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus) if self.cpus else float("nan")

    @property
    def peak_rss_kb(self) -> int | None:
        """The median of the runs' peaks: one run that, say, trained the model cache is an outlier."""
        return int(statistics.median(self.rss_kb)) if self.rss_kb else None


GNU_TIME = Path("/usr/bin/time")


def run_once(argv: Sequence[str], env: dict[str, str], stdout: Path) -> tuple[float, float, int | None, int]:
    """Wall seconds, CPU seconds (user+sys), peak RSS (KiB) and exit status of one process.

    The RSS comes from GNU time, which runs the command as its own child: a process forked from
    this (large) Python would report Python's RSS as its peak (the kernel keeps the high-water
    mark of the memory image that exec replaced). Without /usr/bin/time it is None.
    """
    report = stdout.with_suffix(".rusage")
    command = list(argv)
    if GNU_TIME.exists():
        command = [str(GNU_TIME), "-q", "-f", "%U %S %M", "-o", str(report), *command]
    with open(stdout, "wb") as out:
        began = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env)
        assert process.stderr is not None
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {code}: {errors.decode(errors='replace').strip()[-300:]}")
    if GNU_TIME.exists():
        user, system, rss = report.read_text(encoding="utf-8").split()[-3:]
        return wall, float(user) + float(system), int(rss), code
    return wall, usage.ru_utime + usage.ru_stime, None, code


def measure(name: str, argv: Sequence[str], runs: int, out: Path, env_extra: dict[str, str] | None = None,
            shown: str | None = None, warm_up: bool = False) -> Timing:
    """`runs` timed runs of a command; `warm_up`: one untimed run first (logsift builds its model
    cache on the first run after the rules changed)."""
    env = {**os.environ, "TZ": "UTC", **(env_extra or {})}
    prefix = " ".join(f"{key}={value}" for key, value in (env_extra or {}).items())
    timing = Timing(name, shown or (prefix + " " if prefix else "") + " ".join(argv))
    stdout = out / "stdout.tmp"
    try:
        if warm_up:
            run_once(argv, env, stdout)
        for _ in range(runs):
            wall, cpu, rss, _ = run_once(argv, env, stdout)
            timing.walls.append(wall)
            timing.cpus.append(cpu)
            if rss is not None:
                timing.rss_kb.append(rss)
        timing.result = stdout.read_text(encoding="utf-8", errors="replace")
    except (OSError, RuntimeError) as error:
        timing.error = str(error)
    return timing


def logsift_command() -> list[str]:
    script = Path(sys.executable).parent / "logsift"
    return [str(script)] if script.exists() else [sys.executable, "-m", "logsift"]


def shown_path(path: Path) -> str:
    """Relative to the checkout when inside it, as the commands are run from there."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def warm(path: Path) -> None:
    with open(path, "rb") as stream:
        while stream.read(1 << 24):
            pass


def whole_process(path: Path, export: Export, runs: int, out: Path) -> list[Timing]:
    warm(path)
    file = str(path)
    rel, regexes, literals = shown_path(path), shown_path(export.regexes), shown_path(export.literals)
    timings = [
        measure("logsift (hyperscan)", [*logsift_command(), "--format", "json", file], runs, out,
                shown=f"logsift --format json {rel}", warm_up=True),
        measure("logsift --no-model", [*logsift_command(), "--no-model", "--format", "json", file], runs, out,
                shown=f"logsift --no-model --format json {rel}  # rules only"),
        measure("logsift (find, no hyperscan)", [sys.executable, "-c", BLOCK_HYPERSCAN, "--format", "json", file], runs,
                out, shown=f"logsift --format json {rel}  # with `import hyperscan` failing"),
        measure("grep -E regexes", ["grep", "-c", "-E", "-f", str(export.regexes), file], runs, out,
                shown=f"grep -c -E -f {regexes} {rel}"),
        measure("grep -E regexes, LC_ALL=C", ["grep", "-c", "-E", "-f", str(export.regexes), file], runs, out,
                {"LC_ALL": "C"}, shown=f"LC_ALL=C grep -c -E -f {regexes} {rel}"),
        measure("grep -F -i literals", ["grep", "-c", "-F", "-i", "-f", str(export.literals), file], runs, out,
                shown=f"grep -c -F -i -f {literals} {rel}"),
        measure("grep -F -i literals, LC_ALL=C", ["grep", "-c", "-F", "-i", "-f", str(export.literals), file], runs,
                out, {"LC_ALL": "C"}, shown=f"LC_ALL=C grep -c -F -i -f {literals} {rel}"),
        measure("wc -l", ["wc", "-l", file], runs, out, shown=f"wc -l {rel}"),
    ]
    empty = out / "empty.txt"
    empty.write_bytes(b"")
    timings.append(measure("logsift start-up", [*logsift_command(), "--format", "json", str(empty)], runs, out,
                           shown="logsift --format json empty.txt  # start-up: imports, rules, prefilter"))
    rg = shutil.which("rg")
    if rg:
        timings.insert(4, measure("rg regexes", [rg, "-c", "-f", str(export.regexes), file], runs, out,
                                  shown=f"rg -c -f {regexes} {rel}"))
    return timings


def summarize_result(timing: Timing) -> str:
    if timing.error:
        return f"error: {timing.error[:120]}"
    text = timing.result.strip()
    if timing.name.startswith("logsift"):
        try:
            data = json.loads(text)
        except ValueError:
            return "unreadable JSON"
        return f"{len(data.get('incidents', []))} incidents"
    if timing.name.startswith("wc"):
        return f"{int(text.split()[0]):,} lines"
    return f"{int(text or 0):,} lines match"


def measure_rounds(plan: Sequence[tuple[str, Sequence[str], str]], rounds: int, out: Path) -> dict[str, Timing]:
    """Each command once per round, `rounds` rounds after an untimed one (caches, page cache):
    load on the machine then hits every command alike. Python runs with its bytecode cache, as
    installed software does (this environment may set PYTHONDONTWRITEBYTECODE)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["TZ"] = "UTC"
    timings = {name: Timing(name, shown) for name, _, shown in plan}
    for round_number in range(rounds + 1):
        for name, argv, _ in plan:
            timing = timings[name]
            if timing.error:
                continue
            stdout = out / f"stdout-{name.replace(' ', '-')}.txt"
            try:
                wall, cpu, rss, _ = run_once(argv, env, stdout)
            except (OSError, RuntimeError) as error:
                timing.error = str(error)
                continue
            if round_number == 0:
                continue
            timing.walls.append(wall)
            timing.cpus.append(cpu)
            if rss is not None:
                timing.rss_kb.append(rss)
            timing.result = stdout.read_text(encoding="utf-8", errors="replace")
    return timings
