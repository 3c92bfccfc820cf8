"""`logsift explain`: the decisions behind one event's class, on a small library and journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, invoke
from tests.test_cli_patterns import PORT_RULE, PORT_SAMPLES, TRACEBACK_RULE, TRACEBACK_SAMPLES, write_library

# vLLM's API server under systemd when port 8000 is taken (asyncio's create_server wording).
JOURNAL = """\
Jun 02 10:00:00 gpu01 systemd[1]: Started vllm.service - vLLM OpenAI API server.
Jun 02 10:00:41 gpu01 python3[4242]: INFO:     Started server process [4242]
Jun 02 10:00:41 gpu01 python3[4242]: INFO:     Waiting for application startup.
Jun 02 10:00:41 gpu01 python3[4242]: Traceback (most recent call last):
Jun 02 10:00:41 gpu01 python3[4242]:   File "/usr/lib/python3.10/asyncio/base_events.py", line 1519, in create_server
Jun 02 10:00:41 gpu01 python3[4242]:     raise OSError(err.errno, 'error while attempting '
Jun 02 10:00:41 gpu01 python3[4242]: OSError: [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use
Jun 02 10:00:42 gpu01 systemd[1]: vllm.service: Main process exited, code=exited, status=1/FAILURE
Jun 02 10:00:42 gpu01 systemd[1]: vllm.service: Failed with result 'exit-code'.
"""


@pytest.fixture
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_library(tmp_path / "rules", {
        "demo/port-in-use.toml": PORT_RULE, "demo/port-in-use.log": PORT_SAMPLES,
        "demo/traceback.toml": TRACEBACK_RULE, "demo/traceback.log": TRACEBACK_SAMPLES,
    })
    monkeypatch.setenv("LOGSIFT_PATTERNS", str(root))
    monkeypatch.setenv("TZ", "UTC")
    path = tmp_path / "journal.txt"
    path.write_text(JOURNAL, encoding="utf-8")
    return path


def test_help() -> None:
    code, out, _ = invoke("explain", "--help")
    assert code == 0 and out.startswith("Usage: logsift explain [OPTIONS] FILE")


def test_root_cause_event_of_each_failed_run(journal: Path) -> None:
    code, out, err = invoke("explain", str(journal))
    assert (code, err) == (0, "")
    assert out == (
        "Event at line 4: kind traceback, 4 lines; stream: host gpu01, identifier python3, pid 4242\n"
        "  4 | Traceback (most recent call last):\n"
        '  5 |   File "/usr/lib/python3.10/asyncio/base_events.py", line 1519, in create_server\n'
        "  6 |     raise OSError(err.errno, 'error while attempting '\n"
        " >7 | OSError: [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n"
        "\n"
        "Rules the prefilter selected (a literal of theirs occurs in the event):\n"
        "  demo.port-in-use: \"[errno 98] error while attempting to bind on address ('\" on line 7\n"
        "  demo.traceback: 'error: ' on line 7\n"
        "Rules that matched:\n"
        "  demo.port-in-use on line 7 (priority 80, critical): port='8000'\n"
        "Matched but dropped: demo.traceback on line 7 reads the same line as demo.port-in-use, which explains it\n"
        "\n"
        "Run: vllm.service on gpu01, lines 1-9, failed, status=1/FAILURE\n"
        "  line      7  demo.port-in-use  root cause: priority 80, critical\n"
        "Why demo.port-in-use won: it is the only cause found in the run\n"
    )


def test_line_outside_every_event(journal: Path) -> None:
    code, out, _ = invoke("explain", str(journal), "--line", "2")
    assert code == 0
    assert out == (
        "Line 2 is in no event: no rule's literals occur in it (the prefilter skipped it),\n"
        "and it does not continue a traceback, build output, CUDA banner or NCCL burst.\n"
        "  2 | Started server process [4242]\n"
    )


def test_line_of_a_systemd_event(journal: Path) -> None:
    code, out, _ = invoke("explain", str(journal), "--line", "8")
    assert code == 0
    assert out.startswith("Event at line 8: kind lifecycle, 1 line; stream: host gpu01, identifier systemd, pid 1\n")
    assert "Rules the prefilter selected: none\nRules that matched: none\n" in out
    assert "Why demo.port-in-use won" in out


def test_line_beyond_the_input_is_a_usage_error(journal: Path) -> None:
    code, out, err = invoke("explain", str(journal), "--line", "99")
    assert (code, out) == (2, "")
    assert err == "logsift: error: --line 99 is outside the input (lines 1 to 9)\n"


def test_json(journal: Path) -> None:
    code, out, _ = invoke("explain", str(journal), "--line", "5", "--format", "json")
    assert code == 0
    document = json.loads(out)
    [event] = document["events"]
    assert event["line"] == 4 and event["event"]["kind"] == "traceback"
    assert event["event"]["stream"] == {"host": "gpu01", "unit": None, "identifier": "python3", "pid": 4242}
    assert [item["class"] for item in event["tried"]] == ["demo.port-in-use", "demo.traceback"]
    assert [(item["class"], item["line"], item["fields"]) for item in event["matched"]] == [
        ("demo.port-in-use", 7, {"port": "8000"})]
    assert event["dropped"] == [{"class": "demo.traceback", "line": 7, "explained_by": "demo.port-in-use"}]
    assert event["not_matched"] == []
    run = event["run"]
    assert run["root_cause"] == "demo.port-in-use" and run["outcome"] == "failed"
    assert [(item["class"], item["status"]) for item in run["findings"]] == [("demo.port-in-use", "root cause")]
    assert run["why"] == "it is the only cause found in the run"


def test_healthy_input_has_nothing_to_explain(journal: Path, tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.txt"
    quiet.write_text("Jun 02 10:00:41 gpu01 python3[4242]: INFO:     Application startup complete.\n", encoding="utf-8")
    code, out, _ = invoke("explain", str(quiet))
    assert code == 0
    assert out == "No failed run with a root cause in this input; name a line to explain with --line N.\n"
    code, out, _ = invoke("explain", str(quiet), "--format", "json")
    assert json.loads(out) == {"version": 1, "events": []}


def test_bundled_library_on_the_seed_incident(monkeypatch: pytest.MonkeyPatch) -> None:
    """One explanation per failed run of the seed story, each naming the diagnosis's root cause."""
    monkeypatch.delenv("LOGSIFT_PATTERNS", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    seed = str(FIXTURES / "seed-incident" / "journal.txt")
    code, out, err = invoke("explain", seed, "--format", "json")
    assert code == 0, err
    events = json.loads(out)["events"]
    roots = [event["run"]["root_cause"] for event in events]
    # Each run of the story has wrapper findings (build failure, systemd) that the cause explains.
    assert all(any(item["status"] == "explained" for item in event["run"]["findings"]) for event in events)
    code, triage, _ = invoke("--format", "json", seed)
    expected = [run["root_cause"]["class"] for incident in json.loads(triage)["incidents"]
                for run in incident["runs"] if run["outcome"] == "failed" and run["root_cause"]]
    assert roots == expected and len(roots) == 3
