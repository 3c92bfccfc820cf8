"""The native journal: --file, --directory, -u, --since/--until, -b, --after-cursor, through
systemd-python and through the journalctl fallback, checked against the real journalctl."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from logsift import read as readers
from logsift.exceptions import InputError
from logsift.read import selection, sources
from logsift.records import ReadProblems, Record
from tests.helpers import invoke, report
from tests.journal_tools import (
    SEED,
    SEED_UNIT,
    build_journal,
    entries_export,
    have_journal_remote,
    have_systemd_python,
    short_to_entries,
)

pytestmark = pytest.mark.skipif(not have_journal_remote(), reason="needs systemd-journal-remote and journalctl: "
                                "apt-get install systemd-journal-remote (make test installs it)")
BACKENDS = [
    pytest.param("python", marks=pytest.mark.skipif(not have_systemd_python(), reason="needs systemd-python: "
                                                    "pip install 'logsift[journal]' (make test installs it)")),
    "journalctl",
]
SEED_LINES = (SEED / "journal.txt").read_text().splitlines()


def _boot_entries() -> list[list[tuple[str, str]]]:
    """The seed's first run spread over three boots of one host, with a second unit's lines
    (rank 0's, as if another service ran the same code) interleaved."""
    seed = short_to_entries("\n".join(SEED_LINES[:117]))
    other_lines = [line.replace("python[71390]", "python[5150]") for line in SEED_LINES[:117] if "python[71390]" in line]
    other = short_to_entries("\n".join(other_lines), unit="other.service", salt="other")
    for fields in other:  # half a millisecond after the seed's line of the same second
        fields[0] = ("__REALTIME_TIMESTAMP", str(int(fields[0][1]) + 500))
    merged = sorted(seed + other, key=lambda fields: int(fields[0][1]))
    for index, fields in enumerate(merged):
        boot = short_to_entries(SEED_LINES[0], salt=f"boot{min(index * 3 // len(merged), 2)}")[0]
        replacements = {name: value for name, value in boot if name in ("_BOOT_ID", "_MACHINE_ID")}
        fields[:] = [(name, replacements.get(name, value)) for name, value in fields]
    return merged


BOOT_ENTRIES = _boot_entries()
BOOT_SIZES = [sum(1 for fields in BOOT_ENTRIES if dict(fields)["_BOOT_ID"] == boot)
              for boot in dict.fromkeys(dict(fields)["_BOOT_ID"] for fields in BOOT_ENTRIES)]


@pytest.fixture(scope="module")
def boots_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_journal(entries_export(BOOT_ENTRIES), tmp_path_factory.mktemp("boots") / "boots.journal")


def journalctl_cursors(journal: Path, *args: str) -> list[str]:
    result = subprocess.run(["journalctl", f"--file={journal}", "-o", "json", "--all", "--no-pager", *args],
                            capture_output=True, check=True, env={"TZ": "UTC", "PATH": "/usr/bin:/bin"})
    return [json.loads(line)["__CURSOR"] for line in result.stdout.splitlines()]


def records(backend: str, **options: object) -> list[Record]:
    problems = ReadProblems()
    got = list(sources.journal_records(selection.select(**options), problems, backend))  # type: ignore[arg-type]
    assert not problems.warnings()
    return got


SELECTIONS = {
    "all": ({}, []),
    "unit": ({"units": ["sglang-k26"]}, ["-u", "sglang-k26"]),
    "other-unit": ({"units": ["other.service"]}, ["-u", "other.service"]),
    "glob": ({"units": ["*-k26.service"]}, ["-u", "*-k26.service"]),
    "latest-boot": ({"boot": "0"}, ["-b"]),
    "boot-before": ({"boot": "-1"}, ["-b", "-1"]),
    "first-boot": ({"boot": "1"}, ["-b", "1"]),
    "unit-and-boot": ({"units": ["sglang-k26"], "boot": "-2"}, ["-u", "sglang-k26", "-b", "-2"]),
    "since-until": ({"since": "2026-05-25 20:11:18", "until": "2026-05-25 20:16:20"},
                    ["--since", "2026-05-25 20:11:18", "--until", "2026-05-25 20:16:20"]),
    "since-at": ({"since": "@1779740000"}, ["--since", "@1779740000"]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_is_journalctls(boots_journal: Path, backend: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    options, args = SELECTIONS[name]
    got = [record.cursor for record in records(backend, files=[str(boots_journal)], **options)]
    want = journalctl_cursors(boots_journal, *args)
    assert want and got == want


@pytest.mark.parametrize("backend", BACKENDS)
def test_after_cursor_resumes_after_it(boots_journal: Path, backend: str) -> None:
    cursors = journalctl_cursors(boots_journal, "-u", "sglang-k26")
    got = records(backend, files=[str(boots_journal)], units=["sglang-k26"], after_cursor=cursors[40])
    assert [record.cursor for record in got] == cursors[41:]


@pytest.mark.parametrize("backend", BACKENDS)
def test_unit_takes_pid_1_lines_about_it_and_records_keep_their_fields(boots_journal: Path, backend: str) -> None:
    got = records(backend, files=[str(boots_journal)], units=["sglang-k26"])
    pid1 = [record for record in got if record.pid == 1]
    assert pid1 and all(record.unit == SEED_UNIT and record.identifier == "systemd" for record in pid1)
    assert not any("Reloading" in record.message for record in got)  # PID 1, but not about the unit
    first = got[0]
    assert first.fields is not None and first.fields["_SYSTEMD_UNIT"] == "init.scope"
    assert first.fields["INVOCATION_ID"] == first.invocation
    assert first.cursor and first.boot and first.timestamp is not None
    # Records are numbered as the lines of `journalctl -o short`, boot separators included.
    short = subprocess.run(["journalctl", f"--file={boots_journal}", "-u", "sglang-k26", "--no-pager"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    for record in got[::25]:
        assert short[record.line - 1].endswith(record.message.split("\n")[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_directory_of_several_hosts_keeps_them_apart(tmp_path: Path, backend: str) -> None:
    text = "\n".join(SEED_LINES)
    failing_only = "\n".join(line.replace("dflash-train", "gpu-node-07") for line in SEED_LINES[:235])
    build_journal(entries_export(short_to_entries(text)), tmp_path / "remote-dflash-train.journal")
    build_journal(entries_export(short_to_entries(failing_only, salt="gpu-node-07")), tmp_path / "remote-gpu-node-07.journal")
    code, document = report("--directory", str(tmp_path), "-u", "sglang-k26", "--journal-reader", backend)
    assert code == 1
    got = {(incident["host"], incident["resolved"]): [(run["root_cause"] or {}).get("class") for run in incident["runs"]]
           for incident in document["incidents"]}
    assert got == {
        ("dflash-train", True): ["cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found", "cuda.header-missing", None],
        ("gpu-node-07", False): ["cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found"],
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_runs_are_told_apart_by_invocation_id_without_systemds_lines(tmp_path: Path, backend: str) -> None:
    # Only the service's own lines: no "Started", no "Main process exited".
    entries = [fields for fields in short_to_entries("\n".join(SEED_LINES[:235])) if ("_PID", "1") not in fields]
    journal = build_journal(entries_export(entries), tmp_path / "own.journal")
    _, document = report("--file", str(journal), "--journal-reader", backend)
    runs = [run for incident in document["incidents"] for run in incident["runs"]]
    assert [run["root_cause"]["class"] for run in runs] == ["cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found"]
    assert len({run["invocation"] for run in runs}) == 2


def test_b_takes_an_optional_value_as_journalctl_does(boots_journal: Path) -> None:
    assert len(BOOT_SIZES) == 3
    for args, boot in ((["-b"], 2), (["-b", "-1"], 1), (["--boot=-2"], 0), (["-b", "1"], 0)):
        code, document = report("--file", str(boots_journal), *args, "--journal-reader", "journalctl")
        assert code in (0, 1)
        assert document["summary"]["lines"] == BOOT_SIZES[boot], args  # one line per entry here
    code, _, err = invoke("--file", str(boots_journal), "-b", "-7")
    assert code == 2 and "no boot -7 in the journal" in err or "Data from the specified boot" in err


def test_unit_on_text_files_selects_incidents() -> None:
    code, out, _ = invoke("-u", "nosuch", str(SEED / "journal.txt"))
    assert code == 0 and "No incidents." in out
    code, out, _ = invoke("-u", "sglang-k26", str(SEED / "journal.txt"))
    assert code == 1 and "Incident 1: sglang-k26.service" in out


def test_journal_options_and_files_do_not_mix(boots_journal: Path) -> None:
    code, _, err = invoke("--file", str(boots_journal), str(SEED / "journal.txt"))
    assert code == 2 and "cannot be combined with --file" in err
    code, _, err = invoke("--file", str(boots_journal), "--since", "yesterday-ish")
    assert code == 2 and err.startswith("logsift: error: --since 'yesterday-ish': not a time")


def _without_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "systemd", None)
    monkeypatch.delitem(sys.modules, "logsift.read.native", raising=False)
    monkeypatch.delattr(readers, "native", raising=False)


def test_without_systemd_python_journalctl_reads_the_file(boots_journal: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _without_binding(monkeypatch)
    got = records("auto", files=[str(boots_journal)], units=["sglang-k26"])
    assert [record.cursor for record in got] == journalctl_cursors(boots_journal, "-u", "sglang-k26")
    with pytest.raises(InputError, match=r"pip install 'logsift\[journal\]'"):
        records("python", files=[str(boots_journal)])


def test_without_either_it_says_what_to_install(boots_journal: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _without_binding(monkeypatch)
    monkeypatch.setattr("logsift.read.journalctl.find_journalctl", lambda: None)
    code, out, err = invoke("--file", str(boots_journal))
    assert code == 2 and out == ""
    assert err.startswith("logsift: error: cannot read the journal: neither systemd-python nor journalctl")
    assert "apt-get install libsystemd-dev pkg-config" in err and len(err.splitlines()) == 1


def _no_local_journal() -> Iterator[Path]:
    for root in (Path("/var/log/journal"), Path("/run/log/journal")):
        if root.is_dir():
            yield from root.rglob("*.journal")


@pytest.mark.skipif(any(True for _ in _no_local_journal()), reason="this machine has a live journal")
@pytest.mark.parametrize("backend", BACKENDS)
def test_no_live_journal_is_one_clear_line(backend: str) -> None:
    code, _, err = invoke("-u", "sglang-k26", "--journal-reader", backend)
    assert code == 2
    assert err == f"logsift: error: {selection.NO_JOURNAL}\n"


KILLED_BY_XID = """\
May 25 20:00:01 gpu-7 systemd[1]: Started x.service - X.
May 25 20:00:09 gpu-7 python3[811]: RuntimeError: CUDA error: an illegal memory access was encountered
May 25 20:00:10 gpu-7 systemd[1]: x.service: Main process exited, code=exited, status=1/FAILURE
May 25 20:00:10 gpu-7 systemd[1]: x.service: Failed with result 'exit-code'.
"""


@pytest.fixture(scope="module")
def xid_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    entries = short_to_entries(KILLED_BY_XID, unit="x.service")
    first = dict(entries[1])
    kernel = [("__REALTIME_TIMESTAMP", str(int(first["__REALTIME_TIMESTAMP"]) - 500_000)),
              ("__MONOTONIC_TIMESTAMP", first["__MONOTONIC_TIMESTAMP"]), ("_BOOT_ID", first["_BOOT_ID"]),
              ("PRIORITY", "4"), ("SYSLOG_IDENTIFIER", "kernel"), ("_TRANSPORT", "kernel"),
              ("_HOSTNAME", "gpu-7"), ("_MACHINE_ID", first["_MACHINE_ID"]),
              ("MESSAGE", "NVRM: Xid (PCI:0000:3b:00): 79, pid=811, GPU has fallen off the bus.")]
    return build_journal(entries_export([entries[0], kernel, *entries[1:]]),
                         tmp_path_factory.mktemp("xid") / "xid.journal")


@pytest.mark.parametrize("backend", BACKENDS)
def test_unit_selection_keeps_the_kernel_lines_that_killed_it(xid_journal: Path, backend: str) -> None:
    _, document = report("--journal-reader", backend, "--file", str(xid_journal), "-u", "x")
    [incident] = document["incidents"]
    assert incident["unit"] == "x.service" and incident["root_cause"]["class"] == "gpu.xid"
    _, other = report("--journal-reader", backend, "--file", str(xid_journal), "-u", "y")
    assert other["incidents"] == []  # the kernel's lines alone are not another unit's incident


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["seed", "boots", "no-pid", "multi-line", "window", "small-batches"])
def test_skimming_native_files_gives_the_report_of_reading_every_entry(case: str, backend: str, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Both skims change nothing but speed: the native reader's (MESSAGE only, _PID read only
    while a process has an open event, PID 1's entries known from the journal's index, the
    entries that matter found again by the cursors kept while reading ahead) and the journalctl
    fallback's (export entries left unparsed): on the seed's journal, the three boots with two
    units, systemd lines without a _PID, a --since/--until window with an entry inside it whose
    clock went back before --since, and batches of 40 entries with a cursor every 8 (the seed
    fits in one batch of the real size)."""
    from logsift.match import Matcher
    from logsift.pipeline import analyze_source
    from logsift.read import native
    from logsift.report.document import Report
    from logsift.rules import load_rules

    window: dict[str, str] = {}
    if case == "small-batches":
        monkeypatch.setattr(native, "SKIM_BATCH", 40)
        monkeypatch.setattr(native, "MARK_EVERY", 8)
    if case == "boots":
        entries = BOOT_ENTRIES
    else:
        entries = short_to_entries("\n".join(SEED_LINES))
        if case == "no-pid":  # as journal-remote receives systemd's lines from some relays
            entries = [[field for field in fields if field != ("_PID", "1")] for fields in entries]
        if case == "multi-line":  # each traceback one MESSAGE (binary in export), a kernel line
            entries = _merged_tracebacks(entries)
            kernel = [(name, value) for name, value in entries[5] if name.startswith("__") or name == "_BOOT_ID"]
            entries.insert(6, [*kernel, ("_TRANSPORT", "kernel"), ("SYSLOG_IDENTIFIER", "kernel"),
                               ("_HOSTNAME", "dflash-train"), ("MESSAGE", "NVRM: loading NVIDIA UNIX x86_64 Kernel Module")])
        if case == "window":  # from the first run's start to past the second's failure; one entry's clock went back
            window = {"since": "2026-05-25 20:11:05", "until": "2026-05-25 20:40:00"}
            moved = dict(entries[60])
            entries[60] = [(name, str(int(moved["__REALTIME_TIMESTAMP"]) - 3_600_000_000) if name == "__REALTIME_TIMESTAMP"
                            else value) for name, value in entries[60]]
    journal = build_journal(entries_export(entries), tmp_path / f"{case}.journal")
    rules = load_rules()
    matcher = Matcher(rules)
    chosen = selection.select(files=[str(journal)], since=window.get("since"), until=window.get("until"))

    def document(skip: bool) -> dict[str, object]:
        analysis = analyze_source(lambda skipping: sources.journal_records(chosen, ReadProblems(), backend, skipping),
                                  rules, matcher, skip=skip)
        result = Report.from_analysis(analysis).to_dict()
        entries_parsed = result["summary"].pop("entries")  # type: ignore[attr-defined]
        result["parsed"] = entries_parsed
        return result

    skimmed, every = document(True), document(False)
    assert skimmed["parsed"] < every["parsed"]  # it did skim
    del skimmed["parsed"], every["parsed"]
    assert skimmed["summary"] == every["summary"]
    assert skimmed == every
    assert every["incidents"]


def _merged_tracebacks(entries: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    """Each run of a traceback's lines as one entry whose MESSAGE holds them all."""
    merged: list[list[tuple[str, str]]] = []
    for fields in entries:
        message = dict(fields)["MESSAGE"]
        previous = dict(merged[-1]) if merged else {}
        if merged and message.startswith((" ", "\t")) and previous.get("_PID") == dict(fields).get("_PID") \
                and "Traceback" in previous["MESSAGE"].split("\n", 1)[0]:
            merged[-1] = [(name, value + "\n" + message if name == "MESSAGE" else value) for name, value in merged[-1]]
            continue
        merged.append(fields)
    assert any("\n" in dict(fields)["MESSAGE"] for fields in merged)
    return merged
