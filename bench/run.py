#!/usr/bin/env python3
"""Time logsift against grep and wc on generated journals of 10 MB and 100 MB (`make bench`).

Whole-process runs, each the median of N runs on a warm page cache, all measured in the same
run on the same file: `logsift --format json FILE` with the hyperscan prefilter and with
hyperscan blocked (the portable `str.find` prefilter); `grep -c -E -f regexes.txt` with the
rule library's [[match]] regexes converted to POSIX ERE (those that convert); `grep -c -F -i -f
literals.txt` with the prefilter's literals; `wc -l`. Peak RSS comes from wait4(2) per process.
Then the stages of the pipeline are timed in-process, one after the other, so that the
bottleneck shows; `--profile` adds a cProfile of the full pipeline on the smallest file.

    python bench/run.py                          # 10M and 100M, 5 runs each
    python bench/run.py --sizes 1G --runs 3      # sizes: K, M, G are powers of 10
    python bench/run.py --update                 # also write the tables into BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import ere  # noqa: E402
import generate  # noqa: E402

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
BLOCK_HYPERSCAN = "import sys; sys.modules['hyperscan'] = None; from logsift.cli import entry; sys.argv[0] = 'logsift'; entry()"
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
    sources = [BENCH / name for name in ("generate.py", "host.py", "python_units.py", "services.py", "tracebacks.py")]
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


@dataclass
class Export:
    regexes: Path
    literals: Path
    total: int
    converted: int
    skipped: list[tuple[str, str]]  # (where, why)
    literal_count: int


def export_patterns(rules: Any, out: Path) -> Export:
    """regexes.txt (ERE, checked against each rule's sample messages) and literals.txt."""
    from logsift.readers.text import TextReader

    out.mkdir(parents=True, exist_ok=True)
    converted: list[str] = []
    skipped: list[tuple[str, str]] = []
    literals: set[str] = set()
    total = 0
    for rule in rules.rules:
        for pattern in (*rule.matches, *rule.context):
            literals.update(pattern.literals)
        messages = _sample_messages(rule.sample_path, TextReader)
        for pattern in rule.matches:
            total += 1
            where = f"{rule.id} [[match]] #{pattern.index + 1}"
            text, why = ere.to_ere(pattern.source)
            if text is None:
                skipped.append((where, why))
                continue
            differs = _differs(text, pattern.compiled, messages)
            if differs:
                skipped.append((where, f"converted, but grep and the rule disagree on a sample: {differs[:80]!r}"))
                continue
            converted.append(text)
    regexes = out / "regexes.txt"
    regexes.write_text("\n".join(converted) + "\n", encoding="utf-8")
    literal_path = out / "literals.txt"
    literal_path.write_text("\n".join(sorted(literals)) + "\n", encoding="utf-8")
    return Export(regexes, literal_path, total, len(converted), skipped, len(literals))


def _sample_messages(path: Path, reader: Any) -> list[str]:
    if not path.exists():
        return []
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    return [record.message for record in reader(str(path)).read(lines) if "\n" not in record.message]


def _differs(text: str, compiled: Any, messages: list[str]) -> str | None:
    """The first sample message where `grep -E text` and the rule's regex disagree."""
    if not messages:
        return None
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(messages) + "\n")
        name = handle.name
    try:
        result = subprocess.run(["grep", "-n", "-E", "-e", text, name], capture_output=True, text=True)
    finally:
        os.unlink(name)
    if result.returncode == 2:
        return f"grep: {result.stderr.strip()}"
    grep_hits = {int(line.split(":", 1)[0]) for line in result.stdout.splitlines()}
    for number, message in enumerate(messages, 1):
        if (compiled.search(message) is not None) != (number in grep_hits):
            return message
    return None


# -- whole-process timing -----------------------------------------------------------------------


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


# -- stages in-process --------------------------------------------------------------------------


@dataclass
class Stage:
    name: str
    seconds: dict[str, float]  # engine -> seconds
    note: str = ""


def _batches(lines: Iterable[str], size: int = 2048) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def stages(path: Path, rules: Any, engines: Sequence[str], runs: int) -> tuple[list[Stage], dict[str, int]]:
    """Cumulative stages of the pipeline, each timed on its own pass over the file."""
    import inspect

    from logsift import pipeline, readers
    from logsift.grouping import Grouper
    from logsift.matching import Matcher
    from logsift.readers.lines import iter_lines

    counts: dict[str, int] = {}
    accelerates = "accelerate" in inspect.signature(pipeline.analyze).parameters

    def split(matcher: Matcher) -> None:
        with open(path, "rb") as stream:
            counts["lines"] = sum(1 for _ in iter_lines(stream))

    def parse(matcher: Matcher) -> None:
        with open(path, "rb") as stream:
            counts["records"] = sum(1 for _ in readers.read(stream, str(path)))

    def prefilter_raw(matcher: Matcher) -> None:
        flagged = 0
        with open(path, "rb") as stream:
            for batch in _batches(iter_lines(stream)):
                flagged += sum(1 for hits in matcher.prefilter.scan(batch) if hits)
        counts["flagged raw lines"] = flagged

    def parse_prefilter(matcher: Matcher) -> None:
        flagged = 0
        with open(path, "rb") as stream:
            for _, hits in matcher.annotate(readers.read(stream, str(path))):
                flagged += bool(hits)
        counts["flagged records"] = flagged

    def grouped(matcher: Matcher) -> None:
        grouper = Grouper()
        events = 0
        with open(path, "rb") as stream:
            for record, hits in matcher.annotate(readers.read(stream, str(path))):
                events += sum(1 for _ in grouper.feed(record, hits))
        events += sum(1 for _ in grouper.flush())
        counts["events"] = events

    def matched(matcher: Matcher) -> None:
        grouper = Grouper()
        findings = 0
        with open(path, "rb") as stream:
            for record, hits in matcher.annotate(readers.read(stream, str(path))):
                for event in grouper.feed(record, hits):
                    findings += bool(matcher.match(event).findings)
        for event in grouper.flush():
            findings += bool(matcher.match(event).findings)
        counts["events with findings"] = findings

    def full(accelerate: bool) -> Callable[[Matcher], None]:
        def run(matcher: Matcher) -> None:
            with open(path, "rb") as stream:
                records = readers.read(stream, str(path))
                if accelerates:
                    analysis = pipeline.analyze(records, rules, matcher, accelerate=accelerate)
                else:
                    analysis = pipeline.analyze(records, rules, matcher)
            counts["incidents"] = len(analysis.diagnosis.incidents)
        return run

    plan: list[tuple[str, Callable[[Matcher], None], str]] = [
        ("split lines (readers.lines)", split, ""),
        ("+ parse every line into a Record", parse, ""),
        ("prefilter alone, raw lines in batches of 2048", prefilter_raw, "not cumulative"),
        ("parse + prefilter", parse_prefilter, ""),
        ("+ grouping", grouped, ""),
        ("+ rule regexes", matched, ""),
        ("+ diagnosis: analyze(), every line parsed" if accelerates else "+ diagnosis: analyze()",
         full(False), ""),
    ]
    if accelerates:
        plan.append(("analyze() skipping unflagged lines (the CLI's path)", full(True), ""))
    warm(path)
    results: list[Stage] = []
    matchers = {engine: Matcher(rules, engine=engine) for engine in engines}
    for name, function, note in plan:
        seconds: dict[str, float] = {}
        for engine in engines:
            if function in (split, parse) and seconds:
                seconds[engine] = next(iter(seconds.values()))  # no prefilter involved
                continue
            times = []
            for _ in range(runs):
                # CPU time of this process: other load on the machine does not count.
                began = time.process_time()
                function(matchers[engine])
                times.append(time.process_time() - began)
            seconds[engine] = statistics.median(times)
        results.append(Stage(name, seconds, note))
    return results, counts


def profile(path: Path, rules: Any, top: int = 18) -> str:
    from logsift import pipeline, readers

    profiler = cProfile.Profile()
    with open(path, "rb") as stream:
        profiler.enable()
        pipeline.analyze(readers.read(stream, str(path)), rules)
        profiler.disable()
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer)
    stats.sort_stats("tottime").print_stats(top)
    lines = buffer.getvalue().splitlines()
    start = next((index for index, line in enumerate(lines) if "ncalls" in line), 0)
    head = next((line.strip() for line in lines if "function calls" in line), "")
    return "\n".join([head, "", *[line.rstrip() for line in lines[start:] if line.strip()]])


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
        out += ["", f"### {entry['label']}B journal: {size / 1e6:,.0f} MB, {lines:,} lines "
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

    from logsift.prefilter import hyperscan
    from logsift.rules import load_rules

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
    text = render(command, machine(), export, results, stage_results, engines, profile_text, args.runs, args.stage_runs)
    (args.out / "results.md").write_text(text, encoding="utf-8")
    print(text)
    if args.update:
        update_benchmarks(text, args.benchmarks)
        print(f"bench: updated {args.benchmarks}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
