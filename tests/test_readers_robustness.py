"""Untrusted input: invalid UTF-8, NULs, ANSI, a 50 MB line, CRLF, cut streams, garbage.
Bad records are skipped and counted, everything else is read, memory stays bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, invoke, report
from tests.journal_tools import SEED, SEED_UNIT, have_journal_remote, render, short_to_entries

SEED_TEXT = (SEED / "journal.txt").read_bytes()
CAUSES = ["cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found", "cuda.header-missing"]


def causes(document: dict[str, Any]) -> list[str | None]:
    return [(run["root_cause"] or {}).get("class") for incident in document["incidents"]
            for run in incident["runs"] if run["outcome"] == "failed"]


def with_line(text: bytes, after: int, extra: bytes) -> bytes:
    lines = text.split(b"\n")
    return b"\n".join([*lines[:after], extra, *lines[after:]])


def test_invalid_utf8_and_nul_bytes_in_lines_are_read() -> None:
    noisy = with_line(SEED_TEXT, 20, b"May 25 20:11:18 dflash-train python[71390]: caf\xe9 \xff\xfe\x00 weights ok")
    code, document = report(input=noisy)
    assert code == 1 and causes(document) == CAUSES


def test_a_block_of_binary_garbage_is_skipped_and_counted() -> None:
    garbage = bytes(byte for byte in range(256) if byte != 10) * 8 + b"\x00" * 4096  # one line
    code, out, err = invoke("--format", "json", input=with_line(SEED_TEXT, 30, garbage))
    assert code == 1 and causes(json.loads(out)) == CAUSES
    assert err == "logsift: warning: skipped 1 bad record, 6,137 bytes lost (first at line 31: binary data, not a log line)\n"


def test_input_that_is_all_garbage_is_one_line_and_exit_2() -> None:
    code, out, err = invoke(input=os.urandom(200_000))
    assert code == 2 and out == ""
    assert err.startswith("logsift: error: -: input looks like binary data") and err.count("\n") == 1


def test_crlf_line_ends() -> None:
    code, document = report(input=SEED_TEXT.replace(b"\n", b"\r\n"))
    assert code == 1 and causes(document) == CAUSES


@pytest.mark.skipif(not have_journal_remote(), reason="needs systemd-journal-remote: apt-get install systemd-journal-remote")
def test_colored_journalctl_output(seed_journal: Path) -> None:
    colored = subprocess.run(["journalctl", f"--file={seed_journal}", "-u", SEED_UNIT, "--no-pager"],
                             capture_output=True, check=True, env={**os.environ, "TZ": "UTC", "SYSTEMD_COLORS": "1"}).stdout
    assert b"\x1b[" in colored
    code, document = report(input=colored)
    assert code == 1 and causes(document) == CAUSES


@pytest.mark.skipif(not have_journal_remote(), reason="needs systemd-journal-remote: apt-get install systemd-journal-remote")
def test_json_stream_cut_mid_record(seed_journal: Path) -> None:
    rendering = render(seed_journal, "json", "-u", SEED_UNIT)
    code, out, err = invoke("--format", "json", input=rendering[: len(rendering) - 200])
    assert code == 1 and causes(json.loads(out)) == CAUSES
    assert err.startswith("logsift: warning: skipped 1 bad record, 649 bytes lost (first at line 445: invalid JSON)")


# -- a 50 MB line: capped, marked, and not held in memory -------------------------------------

BIG = 50 << 20


def peak_rss_growth_mib(path: Path) -> tuple[float, dict[str, Any], str]:
    """In one child process, logsift on the seed journal, then on `path`: how much the peak RSS
    grew for `path` (one-time costs such as compiling the rules are paid by the first run), the
    JSON report of `path` and the warnings."""
    code = (
        "import contextlib, io, resource, sys\nfrom logsift.cli import run\n"
        "def peak(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "with contextlib.redirect_stdout(io.StringIO()): run(['--format', 'json', sys.argv[1]])\n"
        "before = peak()\nrun(['--format', 'json', sys.argv[2]])\nsys.stdout.flush()\n"
        "print(peak() - before, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(SEED / "journal.txt"), str(path)], capture_output=True,
                            cwd=ROOT, env={**os.environ, "TZ": "UTC"}, timeout=300)
    *messages, growth = result.stderr.decode().strip().splitlines()
    return int(growth) / 1024, json.loads(result.stdout), "\n".join(messages)


def _huge_export(tmp_path: Path) -> Path:
    from tests.journal_tools import entries_export

    entries = short_to_entries(SEED_TEXT.decode())
    entries[25][-1] = ("MESSAGE", "A" * BIG)  # type: ignore[call-overload]
    path = tmp_path / "huge.export"
    path.write_bytes(entries_export(entries))
    return path


def _huge_json(tmp_path: Path) -> Path:
    path = tmp_path / "huge.json"
    with path.open("w") as out:
        for index, fields in enumerate(short_to_entries(SEED_TEXT.decode())):
            record = dict(fields)
            if index == 25:
                record["MESSAGE"] = "B" * BIG
            out.write(json.dumps(record) + "\n")
    return path


def _huge_text(tmp_path: Path) -> Path:
    path = tmp_path / "huge.txt"
    path.write_bytes(with_line(SEED_TEXT, 25, b"May 25 20:11:18 dflash-train python[71390]: " + b"C" * BIG))
    return path


@pytest.mark.parametrize("make", [_huge_text, _huge_json, _huge_export], ids=["text", "json", "export"])
def test_a_50_mb_line_is_capped_marked_and_memory_stays_bounded(tmp_path: Path, make: Any) -> None:
    growth, document, err = peak_rss_growth_mib(make(tmp_path))
    assert causes(document) == CAUSES
    # The line is cut at 1 MiB: a few copies of that, never the 50 MB.
    assert growth < 30, f"peak RSS grew by {growth:.0f} MiB for a 50 MB line"
    if make is not _huge_text:
        assert "over the size cap were cut" in err
