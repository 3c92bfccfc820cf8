"""The text reader's block fast path: it parses candidate entries and the lines of streams with an
open event, nothing else, and the report is the one parsing every line gives, whatever the
interleaving, the entry shapes and where blocks are cut."""

from __future__ import annotations

import functools
import io

import pytest

from logsift import read as readers
from logsift.match import Matcher
from logsift.pipeline import analyze_source
from logsift.read import lines as line_module
from logsift.report.document import Report
from logsift.rules import load_rules

RULES = load_rules()
MATCHER = Matcher(RULES)
HOST = "gpu-node-07"


def _journal(noise: int) -> bytes:
    """Two TP ranks: rank 0's traceback interleaved with `noise` lines of others between its
    lines, a multi-line MESSAGE, a boot marker, and systemd's failure lines."""
    out = [f"-- Boot {'a' * 32} --",
           f"2026-05-25T20:11:02+00:00 {HOST} systemd[1]: Started sglang.service - SGLang."]
    traceback = ["Traceback (most recent call last):", '  File "/opt/x/launch.py", line 12, in <module>',
                 "    main()", "RuntimeError: Error building extension 'flashinfer'", "[1/2] c++ -c main.cpp -o main.o",
                 "/bin/sh: 1: /dev/null/bin/nvcc: not found", "ninja: build stopped: subcommand failed."]
    second = 3
    for index, text in enumerate(traceback):
        out.append(f"2026-05-25T20:11:{second:02d}+00:00 {HOST} python3[1920]: {text}")
        for other in range(noise):
            out.append(f"2026-05-25T20:11:{second:02d}+00:00 {HOST} python3[1977]: [TP1] decode batch {index}.{other} ok")
            if other % 7 == 3:
                out.append(f"2026-05-25T20:11:{second:02d}+00:00 {HOST} python3[2032]: first line of a message")
                out.append("    its continuation line, healthy")
    out.append(f"2026-05-25T20:11:20+00:00 {HOST} systemd[1]: sglang.service: Main process exited, code=exited, status=1/FAILURE")
    out.append(f"2026-05-25T20:11:20+00:00 {HOST} systemd[1]: sglang.service: Failed with result 'exit-code'.")
    return ("\n".join(out) + "\n").encode()


def _report(data: bytes, skip: bool) -> tuple[dict[str, object], int]:
    parsed = 0

    def records(skipping):  # type: ignore[no-untyped-def]
        nonlocal parsed
        for record in readers.read(io.BytesIO(data), "test", skipping=skipping):
            parsed += 1
            yield record

    document = Report.from_analysis(analyze_source(records, RULES, MATCHER, skip=skip)).to_dict()
    del document["summary"]["entries"]
    return document, parsed


@pytest.mark.parametrize("noise", [0, 3, 40])
@pytest.mark.parametrize("chunk", [1 << 20, 777])
def test_the_fast_path_gives_the_report_of_every_line(noise: int, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks cut anywhere: between a line and its continuation lines, inside the traceback.
    monkeypatch.setattr(readers, "entry_blocks", functools.partial(line_module.entry_blocks, chunk=chunk))
    data = _journal(noise)
    fast, parsed = _report(data, skip=True)
    every, all_lines = _report(data, skip=False)
    assert fast == every
    incident = fast["incidents"][0]  # type: ignore[index]
    assert incident["root_cause"]["class"] == "cuda.nvcc-not-found"
    if noise >= 40:
        assert parsed < all_lines / 10  # the other ranks' lines were never parsed


def test_only_the_open_streams_lines_are_parsed() -> None:
    data = _journal(40)
    seen = []

    def records(skipping):  # type: ignore[no-untyped-def]
        for record in readers.read(io.BytesIO(data), "test", skipping=skipping):
            seen.append(record)
            yield record

    analyze_source(records, RULES, MATCHER)
    assert {record.pid for record in seen} <= {1, 1920}
    assert [record.message for record in seen if record.pid == 1920][0] == "Traceback (most recent call last):"
