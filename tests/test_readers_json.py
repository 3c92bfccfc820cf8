"""journalctl's JSON formats: values, byte arrays, nulls, mixed pastes, bad records."""

from __future__ import annotations

import io
import json
from typing import Any

from logsift import read as readers
from logsift.read.json import LINE_CAP, salvage
from logsift.records import ReadProblems, Record
from tests.helpers import invoke

BASE = {"_HOSTNAME": "gpu-node-07", "SYSLOG_IDENTIFIER": "python3", "_PID": "4242", "PRIORITY": "6",
        "_SYSTEMD_UNIT": "vllm.service", "_BOOT_ID": "5f0c2f4e8a3b4d0c9e51a7d2c4b6e8f1",
        "_SYSTEMD_INVOCATION_ID": "0d6f3c4e2b1a49e8a7c6b5d4e3f2a1b0"}


def entry(message: Any, seconds: int = 0, **fields: Any) -> dict[str, Any]:
    usec = 1779739862000000 + seconds * 1_000_000
    return {**BASE, "__CURSOR": f"s=6af7;i={seconds + 1};b=5f0c;m=0;t={usec:x};x=1",
            "__REALTIME_TIMESTAMP": str(usec), "MESSAGE": message, **fields}


def lines(*entries: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(item).encode() + b"\n" for item in entries)


def read(data: bytes, fmt: str = "auto") -> tuple[list[Record], ReadProblems]:
    problems = ReadProblems()
    return list(readers.read(io.BytesIO(data), "-", fmt, problems)), problems


def test_fields_become_a_record_that_points_back_into_the_journal() -> None:
    records, problems = read(lines(entry("Uvicorn running on http://0.0.0.0:8000")))
    (record,) = records
    assert record.message == "Uvicorn running on http://0.0.0.0:8000"
    assert (record.host, record.unit, record.identifier, record.pid, record.priority) == (
        "gpu-node-07", "vllm.service", "python3", 4242, 6)
    assert record.cursor == "s=6af7;i=1;b=5f0c;m=0;t=652a9fa446180;x=1"
    assert record.invocation == BASE["_SYSTEMD_INVOCATION_ID"]
    assert record.boot == BASE["_BOOT_ID"]
    assert record.timestamp is not None and record.timestamp.isoformat() == "2026-05-25T20:11:02+00:00"
    assert record.fields is not None and record.fields["_SYSTEMD_UNIT"] == "vllm.service"
    assert "MESSAGE" not in record.fields  # it is `message`; not kept twice
    assert not problems.warnings()


def test_pid_1_lines_name_the_unit_they_are_about() -> None:
    pid1 = entry("vllm.service: Main process exited, code=exited, status=1/FAILURE", _PID="1",
                 SYSLOG_IDENTIFIER="systemd", _SYSTEMD_UNIT="init.scope", UNIT="vllm.service",
                 INVOCATION_ID="11112222333344445555666677778888")
    pid1.pop("_SYSTEMD_INVOCATION_ID")
    (record,), _ = read(lines(pid1))
    assert (record.unit, record.invocation, record.is_systemd) == ("vllm.service", "11112222333344445555666677778888", True)


def test_source_timestamp_wins_as_journalctl_shows_it() -> None:
    (record,), _ = read(lines(entry("x", _SOURCE_REALTIME_TIMESTAMP="1779739800000000")))
    assert record.timestamp is not None and record.timestamp.isoformat() == "2026-05-25T20:10:00+00:00"


def test_byte_arrays_control_characters_and_invalid_utf8() -> None:
    ansi = list(b"\x1b[31mRuntimeError: CUDA error: out of memory\x1b[0m")
    broken = list(b"torch.OutOfMemoryError: \xff\xfe tried to allocate")
    records, problems = read(lines(entry(ansi), entry(broken, 1), entry(["first", "second"], 2)))
    assert [record.message for record in records] == [
        "RuntimeError: CUDA error: out of memory",
        "torch.OutOfMemoryError: \ufffd\ufffd tried to allocate",
        "first",  # a field given twice: journalctl shows the first value
    ]
    assert not problems.warnings()


def test_nulled_fields_say_that_journalctl_ran_without_all() -> None:
    records, problems = read(lines(entry(None), entry("ok", 1, _CMDLINE=None)))
    assert "journalctl drops values over 4096 bytes" in records[0].message
    assert problems.warnings() == [
        "2 null field value(s) (first at line 1): journalctl replaces values over 4096 bytes with null "
        "unless it is given --all; rerun it with --all"]


def test_json_seq_sse_and_pretty_are_detected_and_read() -> None:
    first, second = entry("one"), entry("two\nlines", 1)
    seq = b"".join(b"\x1e" + json.dumps(item).encode() + b"\n" for item in (first, second))
    sse = b"".join(b"data: " + json.dumps(item).encode() + b"\n\n" for item in (first, second))
    pretty = b"".join(json.dumps(item, indent="\t").encode() + b"\n" for item in (first, second))
    for data, name in ((seq, "json-seq"), (sse, "json-sse"), (pretty, "json-pretty"), (lines(first, second), "json")):
        assert readers.detect(data) == name
        records, problems = read(data)
        assert [record.message for record in records] == ["one", "two\nlines"], name
        assert not problems.warnings()
    records, _ = read(pretty)
    assert [record.line for record in records] == [1, 1 + pretty.split(b"\n}\n")[0].count(b"\n") + 2]


def test_bad_records_are_counted_and_the_rest_is_read() -> None:
    data = lines(entry("before")) + b'{"MESSAGE": "cut sho\n' + lines({"_PID": "1"}) + b"\x00\x01\x02\x03\x04\x05 \x06\x07\x08\n" + lines(entry("after", 1))
    records, problems = read(data)
    assert [record.message for record in records] == ["before", "after"]
    assert problems.warnings() == ["skipped 3 bad records, 44 bytes lost (first at line 2: invalid JSON)"]


def test_the_cli_reports_bad_records_on_one_stderr_line() -> None:
    data = lines(*(entry(f"line {n}", n) for n in range(16))) + b"{not json\n" + lines(entry("after", 20))
    code, _, err = invoke("--format", "json", input=data)
    assert code == 0
    assert err == "logsift: warning: skipped 1 bad record, 9 bytes lost (first at line 17: invalid JSON)\n"


def test_entirely_bad_input_is_an_input_error() -> None:
    code, out, err = invoke("-i", "json", input=b"{nope\n{also not\n")
    assert code == 2 and out == ""
    assert err == "logsift: error: nothing could be read: skipped 2 bad records, 14 bytes lost (first at line 1: invalid JSON)\n"


def test_a_paste_of_journal_json_and_plain_lines_reads_both() -> None:
    data = (lines(entry("Started the server", 0)) + b"May 25 20:11:05 gpu-node-07 python3[4242]: plain journal line\n"
            + b"a line someone typed\n" + lines(entry("json again", 9)))
    assert readers.detect(data) == "json"
    records, problems = read(data)
    assert [(record.line, record.message) for record in records] == [
        (1, "Started the server"), (2, "plain journal line"), (3, "a line someone typed"), (4, "json again")]
    assert records[1].host == "gpu-node-07" and records[1].pid == 4242
    assert not problems.warnings()


def test_application_json_logs_are_not_mistaken_for_the_journal() -> None:
    data = b'{"level": "info", "msg": "listening", "ts": 1}\n' * 3
    assert readers.detect(data) == "text"


def test_an_oversized_record_is_salvaged_with_its_cut_marked() -> None:
    huge = "x" * (LINE_CAP + 5000)
    data = lines(entry(huge)) + lines(entry("next", 1))
    records, problems = read(data)
    assert len(records) == 2
    first = records[0]
    assert first.message.startswith("xxx") and "[logsift: line truncated," in first.message
    assert len(first.message) < LINE_CAP + 100
    assert records[1].message == "next"
    assert any(warning.startswith("1 value(s) over the size cap were cut (first at line 1)")
               for warning in problems.warnings())


def test_salvage_keeps_complete_fields_and_the_start_of_the_cut_one() -> None:
    fields, cut = salvage('{"_PID": "7", "SYSLOG_IDENTIFIER": "python", "MESSAGE": "Traceback (most rec\\u00')
    assert cut == "MESSAGE"
    assert fields == {"_PID": "7", "SYSLOG_IDENTIFIER": "python", "MESSAGE": "Traceback (most rec"}
    fields, cut = salvage('{"MESSAGE": [84, 114, 97')
    assert (cut, fields["MESSAGE"]) == ("MESSAGE", [84, 114, 97])
