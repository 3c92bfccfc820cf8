"""One multi-run scenario, every way the journal reaches logsift, one diagnosis.

The seed incident (4 runs of sglang-k26.service: toolkit too old -> nvcc not found -> header
missing -> healthy) is stored as a real journal file (journal-remote, from the committed export
capture), rendered by the real `journalctl -o FORMAT`, and each rendering is piped into logsift
with the format auto-detected. The native file is read through systemd-python and through the
journalctl fallback. All must give the incidents, runs and root causes of the short text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import invoke, report
from tests.journal_tools import SEED, SEED_UNIT, have_systemd_python, render

FORMATS = ["short", "short-iso", "short-precise", "short-full", "short-monotonic", "short-unix", "with-unit",
           "json", "json-seq", "json-sse", "json-pretty", "cat", "export", "verbose"]


def shape(document: dict[str, Any]) -> list[dict[str, Any]]:
    """What must not depend on the input format: per incident, its runs' outcomes and causes."""
    return [
        {
            "unit": incident["unit"],
            "resolved": incident["resolved"],
            "runs": [(run["outcome"], (run["root_cause"] or {}).get("class")) for run in incident["runs"]],
            "root_cause": incident["root_cause"]["class"],
        }
        for incident in document["incidents"]
    ]


@pytest.fixture(scope="module")
def expected() -> list[dict[str, Any]]:
    _, document = report(str(SEED / "journal.txt"))
    got = shape(document)
    assert got == [{
        "unit": SEED_UNIT, "resolved": True, "root_cause": "cuda.header-missing",
        "runs": [("failed", "cuda.toolkit-too-old-for-arch"), ("failed", "cuda.nvcc-not-found"),
                 ("failed", "cuda.header-missing"), ("healthy", None)],
    }]
    return got


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_rendering_on_stdin_gives_the_same_diagnosis(seed_journal: Path, expected: list[dict[str, Any]],
                                                           fmt: str) -> None:
    rendering = render(seed_journal, fmt, "-u", SEED_UNIT)
    code, document = report(input=rendering)
    assert code == 1
    assert shape(document) == expected
    host = "dflash-train" if fmt != "cat" else None
    assert [incident["host"] for incident in document["incidents"]] == [host]


def test_the_committed_export_capture_reads_like_the_text(expected: list[dict[str, Any]]) -> None:
    _, document = report(str(SEED / "journal.export"))
    assert shape(document) == expected
    runs = document["incidents"][0]["runs"]
    # Runs carry the invocation ids the journal gave them: one per start of the unit.
    invocations = [run["invocation"] for run in runs]
    assert all(invocations) and len(set(invocations)) == 4


@pytest.mark.parametrize("backend", ["python", "journalctl"])
@pytest.mark.parametrize("unit", [("-u", "sglang-k26"), ()], ids=["unit", "whole-file"])
def test_native_file_through_each_backend(seed_journal: Path, expected: list[dict[str, Any]], backend: str,
                                          unit: tuple[str, ...]) -> None:
    if backend == "python" and not have_systemd_python():
        pytest.skip("needs systemd-python: pip install 'logsift[journal]' (make test installs it)")
    code, document = report("--file", str(seed_journal), *unit, "--journal-reader", backend)
    assert code == 1
    assert shape(document) == expected
    assert document["summary"]["lines"] == (445 if unit else 448)  # the lines of journalctl -o short


def test_a_journal_file_named_as_a_file_argument_is_read_natively(seed_journal: Path,
                                                                   expected: list[dict[str, Any]]) -> None:
    _, document = report(str(seed_journal))
    assert shape(document) == expected


def test_json_without_all_nulls_long_values_and_logsift_says_so(tmp_path: Path) -> None:
    from tests.journal_tools import build_journal, entries_export, short_to_entries

    lines = (SEED / "journal.txt").read_text().splitlines()
    entries = short_to_entries("\n".join(lines[235:348]))  # the third run: curand.h missing
    # A traceback written in one piece (Python's journal handler does that): one MESSAGE of many lines.
    start = next(index for index, fields in enumerate(entries) if "Traceback" in dict(fields)["MESSAGE"])
    pid = dict(entries[start])["_PID"]
    end = next(index for index in range(start, len(entries)) if dict(entries[index])["_PID"] == "1")
    block = [index for index in range(start, end) if dict(entries[index])["_PID"] == pid]
    entries[start][-1] = ("MESSAGE", "\n".join(dict(entries[index])["MESSAGE"] for index in block))
    entries = [fields for index, fields in enumerate(entries) if index not in block[1:]]
    assert len(entries[start][-1][1]) > 4096
    journal = build_journal(entries_export(entries), tmp_path / "long.journal")
    nulled = render(journal, "json", complete=False)
    assert b'"MESSAGE":null' in nulled
    code, out, err = invoke("--format", "json", input=nulled)
    assert code == 1
    assert err.startswith("logsift: warning: 1 null field value(s) (first at line ")
    assert "rerun it with --all" in err
    # With --all the traceback is there, and it is what the diagnosis rests on.
    _, complete = report(input=render(journal, "json"))
    assert shape(complete)[0]["root_cause"] == "cuda.header-missing"
