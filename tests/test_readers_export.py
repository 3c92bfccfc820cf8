"""journalctl's export and verbose formats: binary-safe fields, many entries, cut streams."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from logsift import read as readers
from logsift.records import ReadProblems, Record
from tests.journal_tools import export_entry

BOOT = "5f0c2f4e8a3b4d0c9e51a7d2c4b6e8f1"


def fields(message: str | bytes, seconds: int = 0, pid: str = "4242", **extra: str) -> list[tuple[str, str | bytes]]:
    usec = 1779739862000000 + seconds * 1_000_000
    return [("__CURSOR", f"s=6af7;i={seconds + 1};b={BOOT};m=0;t={usec:x};x=1"), ("__REALTIME_TIMESTAMP", str(usec)),
            ("_BOOT_ID", BOOT), ("_HOSTNAME", "gpu-node-07"), ("SYSLOG_IDENTIFIER", "python3"), ("_PID", pid),
            ("_SYSTEMD_UNIT", "vllm.service"), *extra.items(), ("MESSAGE", message)]


def read(data: bytes, fmt: str = "auto") -> tuple[list[Record], ReadProblems]:
    problems = ReadProblems()
    return list(readers.read(io.BytesIO(data), "-", fmt, problems)), problems


def test_binary_safe_fields_and_their_line_numbers() -> None:
    traceback = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nRuntimeError: boom"
    data = export_entry(fields("first")) + export_entry(fields(traceback, 1)) + export_entry(fields(b"bad \xff\x1b[1mbold", 2))
    assert readers.detect(data) == "export"
    records, problems = read(data)
    assert [record.message for record in records] == ["first", traceback, "bad \ufffdbold"]
    text = data.split(b"\n")
    # `line` is where the MESSAGE value starts, `lines` how many input lines it spans.
    assert text[records[0].line - 1] == b"MESSAGE=first"
    assert text[records[1].line - 1].endswith(b"Traceback (most recent call last):") and records[1].lines == 3
    assert records[1].cursor == f"s=6af7;i=2;b={BOOT};m=0;t=652a9fa53a3c0;x=1"
    assert not problems.warnings()


def test_many_entries_stream_through_small_reads() -> None:
    data = b"".join(export_entry(fields(f"line {n}\nsecond", n)) for n in range(3000))

    class Trickle(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            return super().read(min(size if size and size > 0 else 7, 7))

    problems = ReadProblems()
    records = list(readers.REGISTRY["export"](Trickle(data), "-", problems))  # type: ignore[arg-type]
    assert len(records) == 3000 and records[-1].message == "line 2999\nsecond"
    assert not problems.warnings()


def test_a_stream_cut_mid_entry_reads_everything_before_it() -> None:
    data = b"".join(export_entry(fields(f"entry {n}", n)) for n in range(5))
    for cut in (len(data) - 2, len(data) - 30, data.rindex(b"MESSAGE=") + 3):
        records, problems = read(data[:cut])
        assert [record.message for record in records] == [f"entry {n}" for n in range(4)]
        assert problems.bad.count == 1 and "entry cut short by the end of the input" in problems.warnings()[0]
    # A binary field cut inside its length or its data, too.
    binary = export_entry(fields("ok")) + export_entry(fields("multi\nline", 1))
    start = binary.index(b"MESSAGE\n", binary.index(b"MESSAGE=ok"))
    for cut in (start + 9, start + 20):
        records, problems = read(binary[:cut])
        assert [record.message for record in records] == ["ok"] and problems.bad.count == 1


def test_no_empty_line_after_the_last_entry_is_fine() -> None:
    records, problems = read(export_entry(fields("only"))[:-1])
    assert [record.message for record in records] == ["only"] and not problems.warnings()


def test_garbage_and_entries_without_message_are_skipped_and_counted() -> None:
    good = export_entry(fields("good"))
    no_message = export_entry([item for item in fields("x") if item[0] != "MESSAGE"])
    garbage = b"\x00\x17\xfe random bytes\n\x01\x02\n\n"
    huge_length = b"MESSAGE\n" + (1 << 40).to_bytes(8, "little") + b"abc\n\n"
    records, problems = read(good + no_message + garbage + huge_length + export_entry(fields("after", 1)), "export")
    assert [record.message for record in records] == ["good", "after"]
    assert problems.bad.count == 3
    assert problems.warnings()[0].endswith("(first at line 10: entry has no MESSAGE field)")


def test_crlf_line_ends() -> None:
    data = export_entry(fields("windows copy")).replace(b"\n", b"\r\n")
    (record,), problems = read(data)
    assert record.message == "windows copy" and record.pid == 4242 and not problems.warnings()


def test_a_huge_message_is_capped_and_marked() -> None:
    big = b"A" * (3 << 20)
    records, problems = read(export_entry(fields(big)) + export_entry(fields(big + b"\n", 1)) + export_entry(fields("after", 2)))
    assert [len(record.message) < (1 << 20) + 100 for record in records] == [True, True, True]
    assert records[0].message.endswith("[logsift: line truncated, 2097152 bytes dropped]")
    assert records[2].message == "after"
    assert problems.notes["truncated"].count == 2


VERBOSE = """\
Mon 2026-05-25 20:11:02.000000 UTC [s=6af7;i=1;b=5f0c2f4e8a3b4d0c9e51a7d2c4b6e8f1;m=0;t=652a9fa446180;x=1]
    _PID=4242
    SYSLOG_IDENTIFIER=python3
    _SYSTEMD_UNIT=vllm.service
    _HOSTNAME=gpu-node-07
    MESSAGE=Traceback (most recent call last):
              File "x.py", line 1, in <module>

            RuntimeError: boom
    _SYSTEMD_INVOCATION_ID=0d6f3c4e2b1a49e8a7c6b5d4e3f2a1b0
Mon 2026-05-25 22:11:03.000000 CEST [s=6af7;i=2;b=5f0c2f4e8a3b4d0c9e51a7d2c4b6e8f1;m=0;t=652a9fa53a3c0;x=2]
    _PID=1
    SYSLOG_IDENTIFIER=systemd
    _SYSTEMD_UNIT=init.scope
    UNIT=vllm.service
    MESSAGE=[17B blob data]
"""


def test_verbose_entries_multiline_values_and_blob_notes() -> None:
    data = VERBOSE.encode()
    assert readers.detect(data) == "verbose"
    records, problems = read(data)
    first, second = records
    assert first.message == 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n\nRuntimeError: boom'
    assert (first.line, first.lines) == (6, 4)
    assert first.invocation == "0d6f3c4e2b1a49e8a7c6b5d4e3f2a1b0" and first.unit == "vllm.service"
    # The time comes from the cursor's t=, whatever zone the header was printed in.
    assert second.timestamp is not None and second.timestamp.isoformat() == "2026-05-25T20:11:03+00:00"
    assert second.unit == "vllm.service" and second.cursor is not None and second.cursor.endswith("x=2")
    assert problems.warnings() == ["1 value(s) shown as [blob data] (first at line 11): rerun journalctl with --all"]


# -- corrupt binary lengths: resynchronise only where an entry can start ----------------------

QUOTED = b"journalctl -o export printed:\n\n" + export_entry(fields("forged", 9)) + b"MESSAGE=forged too\n\nend"


def _binary(number: int, message: bytes, claim: int | None = None) -> bytes:
    """An entry whose MESSAGE is length-prefixed, claiming `claim` bytes (its length if None)."""
    entry = export_entry(fields(message, number))
    at = entry.index(b"MESSAGE\n") + len(b"MESSAGE\n")
    if claim is None:
        return entry
    return entry[:at] + claim.to_bytes(8, "little") + entry[at + 8:]


def test_a_value_that_quotes_export_text_is_one_value() -> None:
    # Its bytes hold "\n\n__CURSOR=...": a length that checks out is believed, never searched.
    data = export_entry(fields("before")) + _binary(1, QUOTED) + export_entry(fields("after", 2))
    records, problems = read(data)
    assert [record.message for record in records] == ["before", QUOTED.decode(), "after"]
    assert not problems.warnings()


@pytest.mark.parametrize("reads", [None, 7, 4096])
@pytest.mark.parametrize("delta", [-40, -1, 1, 9, 5000, 100_000_000])
def test_a_wrong_length_resynchronises_at_the_next_entry(delta: int, reads: int | None) -> None:
    # The next entry's own MESSAGE quotes export text: resynchronising inside it would forge entries.
    message = b"two\nlines of text, long enough for a short claim to stop inside them"
    good = _binary(1, message)
    data = (export_entry(fields("before")) + _binary(1, message, len(message) + delta) + _binary(2, QUOTED)
            + export_entry(fields("after", 3)))

    class Trickle(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            return super().read(reads or size)

    problems = ReadProblems()
    records = list(readers.REGISTRY["export"](Trickle(data), "-", problems))  # type: ignore[arg-type]
    assert [record.message for record in records] == ["before", QUOTED.decode(), "after"]
    assert problems.bad.count == 1 and problems.lost == len(good)
    assert any(why in problems.bad.first for why in ("field MESSAGE claims", "field MESSAGE is longer", "binary length"))


def test_a_wrong_length_on_the_last_entry_costs_only_it() -> None:
    message = b"multi\nline"
    for claim in (len(message) + 3, len(message) - 3, 1 << 20):
        records, problems = read(export_entry(fields("before")) + _binary(1, message, claim))
        assert [record.message for record in records] == ["before"] and problems.bad.count == 1


def test_a_long_value_is_believed_when_it_checks_out() -> None:
    # Over the look-ahead (a core dump): read through, then checked by what follows it.
    from logsift.read.export import LOOKAHEAD

    blob = b"\x00\x01" * (LOOKAHEAD // 2 + 10)
    entry = export_entry(fields("crashed", 1, COREDUMP=blob))  # type: ignore[arg-type]
    records, problems = read(export_entry(fields("before")) + entry + export_entry(fields("after", 2)))
    assert [record.message for record in records] == ["before", "crashed", "after"] and not problems.warnings()
    assert len(records[1].fields["COREDUMP"]) <= 4096


@pytest.mark.skipif(not __import__("tests.journal_tools", fromlist=["x"]).have_journal_remote(),
                    reason="needs systemd-journal-remote and journalctl (make test installs them)")
def test_journal_remote_and_journalctl_agree_on_a_quoting_value(tmp_path: Path) -> None:
    # The real tools store and print the quoting MESSAGE as one value; so does the reader.
    import subprocess

    from tests.journal_tools import build_journal

    journal = build_journal(export_entry(fields("before")) + _binary(1, QUOTED) + export_entry(fields("after", 2)),
                            tmp_path / "quoted.journal")
    printed = subprocess.run(["journalctl", "--file", str(journal), "-o", "export", "--all"], capture_output=True,
                             check=True).stdout
    records, problems = read(printed)
    assert [record.message for record in records] == ["before", QUOTED.decode(), "after"]
    assert not problems.warnings()
