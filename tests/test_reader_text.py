"""The text reader: every journalctl short* variant, cat, plain logs, continuation lines, markers."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest

from logsift.read import read
from logsift.read.lines import iter_lines
from logsift.read.text import TextReader

MESSAGE = "sglang-k26.service: Main process exited, code=exited, status=1/FAILURE"
VARIANTS = {
    "short": f"May 25 20:37:37 dflash-train systemd[1]: {MESSAGE}",
    "short-precise": f"May 25 20:37:37.123456 dflash-train systemd[1]: {MESSAGE}",
    "short-iso": f"2026-05-25T20:37:37+0000 dflash-train systemd[1]: {MESSAGE}",
    "short-iso-new": f"2026-05-25T20:37:37+00:00 dflash-train systemd[1]: {MESSAGE}",
    "short-iso-precise": f"2026-05-25T20:37:37.123456+0000 dflash-train systemd[1]: {MESSAGE}",
    "short-full": f"Mon 2026-05-25 20:37:37 UTC dflash-train systemd[1]: {MESSAGE}",
    "short-unix": f"1779741457.123456 dflash-train systemd[1]: {MESSAGE}",
    "short-monotonic": f"[  12345.678901] dflash-train systemd[1]: {MESSAGE}",
    "with-unit": f"Mon 2026-05-25 20:37:37 UTC dflash-train init.scope[1]: {MESSAGE}",
}


def records(text: str) -> list:  # type: ignore[type-arg]
    return list(TextReader("t", year=2026).read(text.splitlines()))


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_short_variant(name: str) -> None:
    (record,) = records(VARIANTS[name])
    assert record.host == "dflash-train"
    assert record.identifier == "systemd" and record.pid == 1 and record.is_systemd
    assert record.message == MESSAGE
    assert record.timestamp is not None
    if name not in ("short-monotonic",):
        assert record.timestamp.astimezone(UTC).replace(microsecond=0) == datetime(2026, 5, 25, 20, 37, 37, tzinfo=UTC)


def test_with_unit_names_the_unit() -> None:
    (record,) = records("Mon 2026-05-25 20:37:37 UTC dflash-train sglang-k26.service[73647]: ready")
    assert record.unit == "sglang-k26.service" and record.pid == 73647


def test_continuation_lines_join_their_entry() -> None:
    text = (
        "May 25 20:37:37 host app[7]: first line\n"
        "                              second line\n"
        "                                indented third\n"
        "May 25 20:37:38 host app[7]: next entry\n"
    )
    first, second = records(text)
    assert first.message == "first line\nsecond line\n  indented third"
    assert first.line == 1 and first.lines == 3
    assert second.line == 4


def test_markers_are_skipped_and_boot_is_kept() -> None:
    text = (
        "-- Logs begin at Mon 2026-05-25 20:00:00 UTC, end at Mon 2026-05-25 21:00:00 UTC. --\n"
        "-- Boot 0123456789abcdef0123456789abcdef --\n"
        "May 25 20:37:37 host app[7]: hello\n"
        "-- No entries --\n"
    )
    (record,) = records(text)
    assert record.boot == "0123456789abcdef0123456789abcdef" and record.line == 3


def test_plain_lines_and_journal_lines_alternate() -> None:
    text = (
        "May 25 20:37:37 host app[7]: journal line\n"
        "Traceback (most recent call last):\n"
        "May 25 20:37:38 host app[7]: another journal line\n"
        "(RayWorkerWrapper pid=4242) ERROR worker died\n"
        "vllm-1  | INFO 06-01 10:00:00 [api_server.py:1] hello\n"
    )
    got = records(text)
    assert [r.identifier for r in got] == ["app", None, "app", "RayWorkerWrapper", "vllm-1"]
    assert got[1].message == "Traceback (most recent call last):"
    assert got[3].pid == 4242 and got[3].message == "ERROR worker died"
    # The logger's header is peeled off; what it said is kept (read/relay.py).
    assert (got[4].message, got[4].level, got[4].origin, got[4].relay) == ("hello", "info", "api_server.py:1", "vllm-1")


def test_a_level_word_after_a_time_is_a_logger_not_a_host() -> None:
    # Rust's tracing writes "TIME LEVEL target: message", the shape of a short-iso journal line
    # with the level where the host stands (corpus case 1325, mistral.rs).
    got = records(
        "2024-04-06T04:23:47.390913Z ERROR mistralrs_server: Could not start backend\n"
        "2024-04-06T04:23:47+0000 ERRORS app[7]: a host may be named so\n"
    )
    assert (got[0].host, got[0].identifier, got[0].level) == (None, None, "error")
    assert got[0].message == "mistralrs_server: Could not start backend"
    assert (got[1].host, got[1].identifier, got[1].pid) == ("ERRORS", "app", 7)


def test_ansi_colour_is_stripped() -> None:
    (record,) = records("\x1b[0;1;31mMay 25 20:37:37 host app[7]: \x1b[31mboom\x1b[0m")
    assert record.message == "boom" and record.host == "host"


def test_invalid_utf8_crlf_and_nul_do_not_stop_the_stream() -> None:
    data = b"May 25 20:37:37 host app[7]: caf\xe9\r\nMay 25 20:37:38 host app[7]: a\x00b\r\nlast"
    got = list(read(io.BytesIO(data), "t"))
    assert [r.message for r in got] == ["caf\ufffd", "a\x00b", "last"]


def test_overlong_line_is_capped_and_marked() -> None:
    data = b"x" * (3 << 20) + b"\nnext\n"
    lines = list(iter_lines(io.BytesIO(data), max_line=1 << 20, chunk=1 << 16))
    assert len(lines) == 2
    assert lines[0].startswith("x" * 100) and "truncated" in lines[0]
    assert len(lines[0]) < (1 << 20) + 100
    assert lines[1] == "next"


def test_records_of_the_same_text_share_it() -> None:
    """A crash loop prints the same lines restart after restart and keeps them in its runs'
    events: the reader keeps one copy of each text (message, host, identifier, relay, origin)."""
    lines = [f"2026-05-25T20:16:{second:02d}+0000 gpu-7 python3[{pid}]: (EngineCore pid={pid}) ERROR 05-25 20:16:09 "
             f"[core.py:632] RuntimeError: CUDA error: out of memory" for second, pid in ((1, 7), (2, 7), (3, 8))]
    records = list(TextReader().read(lines))
    assert [record.line for record in records] == [1, 2, 3]
    first, second, third = records
    assert first.message == "RuntimeError: CUDA error: out of memory"
    assert first.message is second.message is third.message
    assert first.host is third.host and first.origin is third.origin and first.relay is second.relay
