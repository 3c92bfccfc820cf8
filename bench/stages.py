"""The pipeline's stages timed in-process, one pass over the file each, and a cProfile of it."""

from __future__ import annotations

import cProfile
import io
import pstats
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from bench.timing import warm


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

    from logsift import pipeline
    from logsift import read as readers
    from logsift.group import Grouper
    from logsift.match import Matcher
    from logsift.read.lines import iter_lines

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
    from logsift import pipeline
    from logsift import read as readers

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
