"""The reproducers of issue 13, each a test: a one-line error with exit 2, or the right
diagnosis with the loss reported; never "internal error", never a traceback."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from logsift.records import ReadProblems
from tests.helpers import invoke

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "seed-incident" / "journal.txt"
SEED_EXPORT = ROOT / "fixtures" / "seed-incident" / "journal.export"
SEED_CAUSES = ["cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found", "cuda.header-missing"]


def causes(data: dict[str, object]) -> list[str]:
    incidents = data["incidents"]
    assert isinstance(incidents, list) and incidents
    return [run["root_cause"]["class"] for run in incidents[0]["runs"] if run["root_cause"]]


def one_error(code: int, err: str) -> None:
    assert code == 2, err
    assert err.startswith("logsift: error: ") and err.count("\n") == 1, err
    assert "internal error" not in err and "Traceback" not in err


# -- crashes that lost the whole report ------------------------------------------------------


def test_overflowing_monotonic_time_is_no_crash() -> None:
    code, out, err = invoke("--no-model", input=b"[99999999999999999999.0] h python[1]: Traceback (most recent call last):\n")
    assert code == 1 and "internal error" not in err and "python.unclassified-traceback" in out


def test_json_nested_a_thousand_deep_is_one_record() -> None:
    deep = b'{"MESSAGE": "RuntimeError: CUDA error: out of memory", "_HOSTNAME": "h", "F": ' + b"[" * 1000 + b"]" * 1000 + b"}\n"
    code, out, err = invoke("--no-model", "-o", "json", input=deep)
    assert "internal error" not in err
    assert code == 1 and json.loads(out)["incidents"][0]["root_cause"]["class"] == "cuda.out-of-memory"


@pytest.mark.parametrize("line", [
    b'{"MESSAGE": "RuntimeError: CUDA error: out of memory", "_HOSTNAME": "h\\ud800"}\n',
    b'{"_HOSTNAME": "h\\ud800", "MESSAGE": "RuntimeError: CUDA error: out of memory \\ud800' + b"x" * (1 << 21) + b'"}\n',
])
def test_lone_surrogates_never_reach_the_output(line: bytes) -> None:
    code, out, err = invoke("--no-model", "-o", "json", input=line)
    assert code == 1 and "internal error" not in err
    data = json.loads(out)
    assert data["incidents"][0]["root_cause"]["class"] == "cuda.out-of-memory"
    out.encode("utf-8")  # no lone surrogate left in what was written


@pytest.mark.parametrize("since", ["0001-01-01 00:00:00", "@inf", "-99999999999 years", "@nan", "99999-01-01",
                                   "1969-12-31 23:59:59 UTC", "@-1", "-60years", "10000-01-01"])
def test_since_out_of_range_is_a_usage_error(since: str) -> None:
    # As journalctl ("Failed to parse timestamp"): no journal entry is dated before 1970 or after 9999.
    for option in ("--since", "--until"):
        code, _, err = invoke("--no-model", option, since, str(SEED))
        one_error(code, err)
        assert f"{option} {since!r}: " in err and ("out of range" in err or "not a time" in err)


@pytest.mark.parametrize("since", ["1970-01-01 00:00:00 UTC", "@0", "9999-12-30"])
def test_since_at_the_ends_of_the_range_is_a_time(since: str) -> None:
    code, _, err = invoke("--no-model", "--since", since, str(SEED))
    assert code in (0, 1) and "error" not in err


def test_a_file_name_too_long_is_one_clipped_line() -> None:
    code, _, err = invoke("a" * 5000)
    one_error(code, err)
    assert len(err) < 400 and "File name too long" in err


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="Linux /proc")
def test_a_read_error_is_one_line() -> None:
    code, _, err = invoke("/proc/self/mem")
    one_error(code, err)
    assert "Input/output error" in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "logsift", "--no-model", str(SEED)], stdout=full,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "TZ": "UTC"}, cwd=ROOT)
    one_error(result.returncode, result.stderr)
    assert "cannot write the report: No space left on device" in result.stderr


RULE = """title = "t {v}"
severity = "error"
priority = 50
explanation = "x"
"""


@pytest.mark.parametrize("body, says", [
    (RULE + "[[match]]\nregex = '''(?V1)oops here'''\n", "regex does not compile"),
    (RULE + 'defaults = "str"\n[[match]]\nregex = \'\'\'oops (?P<v>\\w+)\'\'\'\n', "defaults must be a table"),
    (RULE + "versions = 5\n[[match]]\nregex = '''oops (?P<v>\\w+)'''\n", "versions must be a table"),
    (RULE.replace("{v}", "{v!z}") + "[[match]]\nregex = '''oops (?P<v>\\w+)'''\n", "plain {name} fields only"),
    (RULE.replace("{v}", "{v:>99999999999999999999}") + "[[match]]\nregex = '''oops (?P<v>\\w+)'''\n",
     "plain {name} fields only"),
    (RULE.replace("{v}", "{v.__class__}") + "[[match]]\nregex = '''oops (?P<v>\\w+)'''\n", "a field is the name"),
])
def test_broken_site_rules_are_caught_by_check_and_skipped_by_triage(tmp_path: Path, body: str, says: str) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "broken.toml").write_text(body)
    code, out, err = invoke("patterns", "check", "--patterns", str(tmp_path))
    assert code != 0 and says in out + err and "internal error" not in err
    code, out, err = invoke("--no-model", "--patterns", str(tmp_path), str(SEED))
    assert code == 1 and "skipped a site rule" in err and says in err
    code, _, err = invoke("--no-model", "--strict-patterns", "--patterns", str(tmp_path), str(SEED))
    one_error(code, err)


# -- silent data loss ------------------------------------------------------------------------


EXPORT = SEED_EXPORT.read_bytes() if SEED_EXPORT.exists() else b""
FIRST_LINES = [b"garbage\n", b"\0\0\0\0\0\0\0\0\n", b'{"MESSAGE": "broken\n', b"\xef\xbb\xbf", b"      \n",
               b"-- Journal begins at Mon 2026-05-25 20:00:00 UTC, ends at Mon 2026-05-25 21:10:00 UTC. --\n"]


@pytest.mark.skipif(not EXPORT, reason="the seed export capture")
@pytest.mark.parametrize("first", FIRST_LINES)
def test_one_bad_first_line_before_an_export_stream_keeps_the_story(first: bytes) -> None:
    code, out, err = invoke("--no-model", "-o", "json", input=first + EXPORT)
    assert code == 1, err
    assert causes(json.loads(out)) == SEED_CAUSES
    if first.strip(b" \n\xef\xbb\xbf") and not first.startswith(b"-- "):
        assert "read as export after 1 leading line" in err and "skipped 1 bad record" in err


@pytest.mark.parametrize("first", FIRST_LINES)
def test_one_bad_first_line_before_json_and_verbose(first: bytes, seed_journal: Path) -> None:
    from tests.journal_tools import render

    for fmt in ("json", "json-seq", "json-sse", "json-pretty", "verbose"):
        code, out, err = invoke("--no-model", "-o", "json", input=first + render(seed_journal, fmt))
        assert code == 1, (fmt, err)
        assert causes(json.loads(out)) == SEED_CAUSES, fmt


def _entry(number: int, message: bytes, binary_claim: int | None = None) -> bytes:
    head = b"__CURSOR=s=1;i=%x\n__REALTIME_TIMESTAMP=%d\n_HOSTNAME=h\n_PID=7\nSYSLOG_IDENTIFIER=python\n" % (
        number, 1779739862000000 + number * 1000000)
    if binary_claim is None:
        return head + b"MESSAGE=" + message + b"\n\n"
    return head + b"MESSAGE\n" + struct.pack("<Q", binary_claim) + message + b"\n\n"


@pytest.mark.parametrize("claim", [100_000_000, 5000, 3, 1 << 40])
def test_a_corrupt_export_length_costs_one_entry_and_says_how_many_bytes(claim: int) -> None:
    from logsift.read.export import ExportReader

    stream = _entry(1, b"before") + _entry(2, b"two\nlines", claim) + _entry(3, b"after") + _entry(4, b"last")
    problems = ReadProblems()
    import io

    records = list(ExportReader("-", problems).read(io.BytesIO(stream)))
    assert [record.message for record in records] == ["before", "after", "last"]
    assert problems.bad.count == 1 and problems.lost > 0
    assert "bytes lost" in problems.warnings()[0]


def test_one_unreadable_file_among_several_costs_only_itself(tmp_path: Path) -> None:
    binary = tmp_path / "core.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    code, out, err = invoke("--no-model", "-o", "json", str(binary), str(tmp_path / "missing.log"), str(SEED))
    assert code == 1 and causes(json.loads(out)) == SEED_CAUSES
    assert "not read: " in err and "core.bin" in err and "missing.log: no such file" in err
    code, _, err = invoke("--no-model", str(binary), str(tmp_path / "missing.log"))
    one_error(code, err)


def test_carriage_return_line_endings_are_lines() -> None:
    text = SEED.read_bytes().replace(b"\n", b"\r")
    code, out, err = invoke("--no-model", "-o", "json", input=text)
    assert code == 1 and causes(json.loads(out)) == SEED_CAUSES
    assert "CR (carriage return) line endings" in err


# -- resources -------------------------------------------------------------------------------


def test_a_catastrophic_site_rule_is_suspended_and_reported(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "slow.toml").write_text(
        'title = "slow"\nseverity = "error"\npriority = 50\nexplanation = "x"\n'
        "[[match]]\nregex = '''(a|aa)+$'''\nliterals = [\"aaa\"]\n")
    lines = "".join(f"May 25 20:00:01 h python[1]: {'a' * 40}!\n" for _ in range(400))
    code, out, err = invoke("--no-model", "-o", "json", "--patterns", str(tmp_path), input=lines)
    budget = json.loads(out)["summary"]["regex_budget"]
    assert budget["suspended"] and budget["skipped_searches"] >= 390 and budget["timeouts"] <= 10
    assert "was skipped for the rest of the run" in err


def test_bundled_regexes_do_not_time_out_on_long_hostile_lines() -> None:
    shapes = ["x" * 20000 + " is", "a/" * 10000, "/" * 20000 + "bin/nvc", "a:" * 10000, "ab " * 7000,
              "lib" * 7000 + ": error while loading", "m" * 20000 + " does not appear to have"]
    text = "".join(f"May 25 20:00:01 h python[1]: {shape}\n" for shape in shapes for _ in range(3))
    code, out, err = invoke("--no-model", "-o", "json", input=text)
    assert json.loads(out)["summary"]["regex_timeouts"] == 0, err


def test_triage_never_trains_the_model(tmp_path: Path) -> None:
    cache = tmp_path / "nowhere" / "cache"
    journal = tmp_path / "journal.txt"
    journal.write_text(
        "2026-05-25T20:11:02+0000 h systemd[1]: Started demo.service - Demo.\n"
        "2026-05-25T20:11:05+0000 h python3[42]: Traceback (most recent call last):\n"
        '2026-05-25T20:11:05+0000 h python3[42]:   File "/srv/app.py", line 8, in f\n'
        "2026-05-25T20:11:05+0000 h python3[42]: ZeroDivisionError: integer division or modulo by zero\n"
        "2026-05-25T20:11:06+0000 h systemd[1]: demo.service: Main process exited, code=exited, status=1/FAILURE\n")
    result = subprocess.run([sys.executable, "-m", "logsift", str(journal)], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "TZ": "UTC", "LOGSIFT_CACHE_DIR": str(cache)})
    assert result.returncode == 1
    assert "not shown to the model" in result.stderr and "logsift train" in result.stderr
    assert not cache.exists() and not cache.parent.exists()
    result = subprocess.run([sys.executable, "-m", "logsift", "--model", str(journal)], capture_output=True,
                            text=True, cwd=ROOT, env={**os.environ, "TZ": "UTC", "LOGSIFT_CACHE_DIR": str(cache)})
    one_error(result.returncode, result.stderr)
