"""Where the time goes: a cProfile of logsift's whole pipeline on one workload, in-process."""

from __future__ import annotations

import cProfile
import io
import pstats
from pathlib import Path
from typing import Any


def profile_workload(name: str, paths: list[Path], rules: Any, top: int = 16) -> str:
    """The top functions by own time of `analyze_source` on the files (text, or journal files),
    as the CLI runs it (rules only, lines that cannot matter skipped)."""
    from logsift import read as readers
    from logsift.match import Matcher
    from logsift.pipeline import analyze_source
    from logsift.read import sources
    from logsift.read.selection import select
    from logsift.records import ReadProblems

    matcher = Matcher(rules)
    journal = paths[0].suffix == ".journal"
    profiler = cProfile.Profile()
    if journal:
        selection = select(files=[str(path) for path in paths])
        profiler.enable()
        analyze_source(lambda skipping: sources.journal_records(selection, ReadProblems(), "auto", skipping), rules,
                       matcher)
        profiler.disable()
    else:
        with open(paths[0], "rb") as stream:
            profiler.enable()
            analyze_source(lambda skipping: readers.read(stream, str(paths[0]), skipping=skipping), rules, matcher)
            profiler.disable()
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer)
    stats.sort_stats("tottime").print_stats(top)
    lines = buffer.getvalue().splitlines()
    start = next((index for index, line in enumerate(lines) if "ncalls" in line), 0)
    head = next((line.strip() for line in lines if "function calls" in line), "")
    return "\n".join([f"{name}: {head}", "", *[line.rstrip() for line in lines[start:] if line.strip()]])
