"""The command line behaves like journalctl and says what it read (issue 8)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

import logsift
from logsift.cli.options import use_color
from tests.helpers import FIXTURES, invoke, report
from tests.journal_tools import build_journal, entries_export, have_journal_remote, short_to_entries

SEED = FIXTURES / "seed-incident" / "journal.txt"
needs_journal = pytest.mark.skipif(not have_journal_remote(), reason="needs systemd-journal-remote and journalctl")


def test_top_level_help_shows_triage_options_and_commands() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    for option in ("-u, --unit", "-S, --since", "--file", "-o, --output", "-D, --directory", "--utc", "-n, --lines",
                   "-t, --identifier", "-p, --priority"):
        assert option in out, option
    assert "patterns" in out and "completion" in out and "schema" in out


def test_output_option_and_its_alias() -> None:
    for option in ("-o", "--output", "--format"):
        code, out, _ = invoke(option, "json", str(SEED))
        assert code == 1
        jsonschema.validate(json.loads(out), logsift.schema())


def test_dash_f_is_no_longer_format() -> None:
    code, _, err = invoke("-f", "json", str(SEED))
    assert code == 2 and "-o/--output" in err and "Traceback" not in err


def test_mistyped_command_gets_a_did_you_mean() -> None:
    code, _, err = invoke("pattern", "list")
    assert code == 2 and "did you mean `logsift patterns`" in err


def test_completion_scripts() -> None:
    for shell in ("bash", "zsh", "fish"):
        code, out, _ = invoke("completion", shell)
        assert code == 0 and "_LOGSIFT_COMPLETE" in out, shell


def test_schema_command_prints_the_schema() -> None:
    code, out, _ = invoke("schema")
    assert code == 0 and json.loads(out) == logsift.schema()
    jsonschema.Draft202012Validator.check_schema(json.loads(out))


# -- saying what was read -------------------------------------------------------------------


def test_empty_stdin_says_it_read_nothing() -> None:
    code, out, err = invoke(input=b"")
    assert code == 0 and "Nothing was read" in out
    assert "logsift: note: read nothing: the input was empty" in err


def test_every_run_ends_with_what_was_read() -> None:
    code, _, err = invoke(str(SEED))
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last == ("logsift: read 448 lines (189 parsed), 1 unit, 1 host, 2026-05-25 20:11:02 UTC to "
                    "2026-05-25 21:19:34 UTC, 4 runs, 1 incident")
    _, document = report(str(SEED))
    summary = document["summary"]
    assert (summary["lines"], summary["units"], summary["hosts"]) == (448, ["sglang-k26.service"], ["dflash-train"])
    # The window comes from the first and last lines, although most lines were never parsed.
    assert (summary["since"], summary["until"]) == ("2026-05-25T20:11:02+00:00", "2026-05-25T21:19:34+00:00")


def test_quiet_drops_the_notes() -> None:
    _, _, err = invoke("-q", input=b"")
    assert err == ""


@needs_journal
def test_unit_that_matches_nothing_says_so(seed_journal: Path) -> None:
    code, out, err = invoke("--file", str(seed_journal), "-u", "nosuchunit")
    assert code == 0 and "Nothing was read" in out
    assert f"logsift: note: read nothing: no entries in {seed_journal} matched -u nosuchunit.service" in err


@needs_journal
def test_directory_of_host_subfolders(tmp_path: Path) -> None:
    text = SEED.read_text()
    for host in ("gpu-node-07", "gpu-node-08"):
        folder = tmp_path / "journals" / host
        folder.mkdir(parents=True)
        entries = [[(name, host if name == "_HOSTNAME" else value) for name, value in entry]
                   for entry in short_to_entries(text, salt=host)]
        build_journal(entries_export(entries), folder / "system.journal")
    _, document = report("-D", str(tmp_path / "journals"))
    assert sorted(incident["host"] for incident in document["incidents"]) == ["gpu-node-07", "gpu-node-08"]
    code, out, _ = invoke("-D", str(tmp_path / "journals"))
    assert code == 1
    # The same cause on two hosts is one block naming both, with a row per host.
    assert out.count("Incident ") == 1 and "sglang-k26.service on 2 hosts, same cause: cuda.header-missing" in out
    assert re.search(r"^  gpu-node-07 +4 +3 ", out, re.M) and re.search(r"^  gpu-node-08 +4 +3 ", out, re.M)


# -- evidence you can act on ----------------------------------------------------------------


@needs_journal
def test_journal_evidence_has_a_stable_entry_number_and_a_context_command(seed_journal: Path) -> None:
    _, everything = report("--file", str(seed_journal))
    _, one_unit = report("--file", str(seed_journal), "-u", "sglang-k26")
    evidence = everything["incidents"][0]["root_cause"]["evidence"][0]
    assert evidence == one_unit["incidents"][0]["root_cause"]["evidence"][0]
    assert evidence["line"] == evidence["entry"] and evidence["cursor"].startswith("s=")
    assert evidence["pid"] and evidence["invocation"] and evidence["timestamp"].startswith("2026-05-25T20:5")
    code, out, _ = invoke("--file", str(seed_journal))
    invocation = everything["incidents"][0]["runs"][2]["invocation"]
    assert f"journalctl --file={seed_journal} _SYSTEMD_INVOCATION_ID={invocation} + INVOCATION_ID={invocation}" in out


def test_text_evidence_has_time_and_process_and_a_journalctl_window() -> None:
    _, out, _ = invoke(str(SEED))
    assert "(2026-05-25 20:54:08 UTC, python[75188])" in out
    assert "journalctl -u sglang-k26.service -S '2026-05-25 20:46:37' -U '2026-05-25 20:54:10'" in out


# -- times ----------------------------------------------------------------------------------


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("new_york")
def test_times_are_local_with_their_zone_and_utc_on_request() -> None:
    _, out, _ = invoke(str(SEED))
    # The seed's short lines carry no zone: they are local time, as journalctl printed them.
    assert "run 1  2026-05-25 20:11:02 EDT" in out
    _, document = report(str(SEED))
    assert document["incidents"][0]["runs"][0]["started"] == "2026-05-26T00:11:02+00:00"
    _, out, _ = invoke("--utc", str(SEED))
    assert "run 1  2026-05-25 20:11:02 UTC" in out
    os.environ["TZ"] = "America/New_York"  # --utc changed it for this process; the fixture restores it
    time.tzset()


@pytest.mark.usefixtures("new_york")
def test_since_is_read_in_the_same_zone_as_the_report() -> None:
    _, later = report("--since", "2026-05-25 20:40:00", str(SEED))
    runs = later["incidents"][0]["runs"]
    assert [run["root_cause"]["class"] for run in runs if run["root_cause"]] == ["cuda.header-missing"]


def test_monotonic_and_cat_input_do_not_invent_dates() -> None:
    text = ("[ 1234.500000] host python[5]: Traceback (most recent call last):\n"
            "[ 1234.600000] host python[5]:   File \"x.py\", line 1, in <module>\n"
            "[ 1234.700000] host python[5]: OSError: [Errno 98] Address already in use\n"
            "[ 1240.000000] host systemd[1]: x.service: Main process exited, code=exited, status=1/FAILURE\n")
    _, out, err = invoke(input=text)
    assert "1970" not in out + err and "1234.500s after boot" in out
    _, document = report(input=text)
    run = document["incidents"][0]["runs"][0]
    assert run["started"] is None and run["started_since_boot_s"] == 1234.5
    cat = "OSError: [Errno 98] Address already in use\nx.service: Main process exited, code=exited, status=1/FAILURE\n"
    _, out, _ = invoke(input=cat)
    assert "? -> ?" not in out and "Incident 1: x.service" in out


# -- a report that fits the terminal ---------------------------------------------------------


def test_prose_fits_the_width_and_commands_are_never_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = invoke(str(SEED))
    body = out.split("  incident  unit")[0]  # the summary table is as wide as its columns
    for line in body.splitlines():
        if line.startswith("    journalctl "):
            continue  # a command is printed whole, whatever the width
        assert len(line) <= 80, line
        assert line.count("`") % 2 == 0, f"inline code broken across lines: {line!r}"
    assert "half-built" in body and "half-\n" not in body


def test_colour_follows_the_conventions(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal:
        def isatty(self) -> bool:
            return True

    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    assert use_color("auto", Terminal()) is True
    monkeypatch.setenv("TERM", "dumb")
    assert use_color("auto", Terminal()) is False
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert use_color("auto", object()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color("auto", Terminal()) is False
    assert use_color("always", Terminal()) is True


def test_force_color_colours_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" in invoke(str(SEED))[1]
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert "\x1b[" not in invoke(str(SEED))[1]


# -- journalctl's filters --------------------------------------------------------------------


def _json_lines() -> str:
    entries = short_to_entries(SEED.read_text())
    lines = []
    for entry in entries:
        fields = dict(entry)
        fields.setdefault("PRIORITY", "3" if "error" in fields.get("MESSAGE", "").lower() else "6")
        lines.append(json.dumps(fields))
    return "\n".join(lines) + "\n"


def test_identifier_priority_and_last_lines_filter_before_diagnosis() -> None:
    text = _json_lines()
    _, everything = report(input=text)
    assert everything["summary"]["incidents"] == 1
    _, systemd_only = report("-t", "systemd", input=text)
    assert all(run["root_cause"] is None or run["root_cause"]["class"].startswith("systemd.")
               for incident in systemd_only["incidents"] for run in incident["runs"])
    _, errors = report("-p", "err", input=text)
    assert errors["summary"]["entries"] < everything["summary"]["entries"]
    _, last = report("-n", "20", input=text)
    assert last["summary"]["entries"] == 20


def test_priority_on_text_input_says_it_cannot_apply() -> None:
    _, _, err = invoke("-p", "err", str(SEED))
    assert "-p has no effect here" in err


def test_a_progress_bar_for_long_inputs_only_when_asked_or_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from logsift.cli import triage

    monkeypatch.setattr(triage, "PROGRESS_MIN", 0)
    _, _, err = invoke("--progress", str(SEED))
    assert "reading journal.txt" in err
    _, _, err = invoke(str(SEED))  # stderr is no terminal here
    assert "reading journal.txt" not in err


def test_piped_unit_text_says_the_kernel_lines_are_missing_and_how_to_see_them() -> None:
    text = ("May 25 20:00:01 gpu-7 systemd[1]: Started x.service - X.\n"
            "May 25 20:00:09 gpu-7 python3[811]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
            "May 25 20:00:10 gpu-7 systemd[1]: x.service: Main process exited, code=exited, status=1/FAILURE\n")
    _, out, _ = invoke(input=text)
    assert "The kernel's lines were not in the input" in out
    assert "journalctl _TRANSPORT=kernel -S '2026-05-25 19:58:01' -U '2026-05-25 20:00:10'" in out
    _, document = report(input=text)
    assert document["summary"]["kernel_lines"] is False
    with_kernel = text + "May 25 20:00:11 gpu-7 kernel: usb 1-1: new high-speed USB device number 2\n"
    _, out, _ = invoke(input=with_kernel)
    assert "The kernel's lines were not in the input" not in out


def test_a_run_that_says_it_failed_without_why_is_an_incident_of_unknown_cause() -> None:
    text = ("2025-05-01T10:00:00.000Z INFO dynamo_runtime::worker: starting\n"
            "Error: Failed to connect to etcd server with config ClientOptions { etcd_url: [\"http://localhost:2379\"] }\n")
    code, document = report(input=text)
    [incident] = document["incidents"]
    run = incident["runs"][0]
    assert code == 1 and incident["root_cause"] is None and run["outcome"] == "failed"
    assert run["failure"]["line"] == 2 and run["failure"]["text"].startswith("Error: Failed to connect to etcd")
    _, out, _ = invoke(input=text)
    assert "The run failed, line 2: Error: Failed to connect" in out and "no rule names it" in out
