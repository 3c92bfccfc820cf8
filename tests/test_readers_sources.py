"""Turning the command line's source options into a Selection: times, boots, paths."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from logsift.exceptions import UsageError
from logsift.read.selection import mangle_unit, parse_time, select

NOW = datetime(2026, 5, 25, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-05-25 20:11:00", "2026-05-25T20:11:00"),
    ("2026-05-25T20:11:00Z", "2026-05-25T20:11:00"),
    ("2026-05-25T22:11:00+02:00", "2026-05-25T20:11:00"),
    ("2026-05-25", "2026-05-25T00:00:00"),
    ("20:11", "2026-05-25T20:11:00"),
    ("today", "2026-05-25T00:00:00"),
    ("yesterday", "2026-05-24T00:00:00"),
    ("now", "2026-05-25T20:00:00"),
    ("-1h", "2026-05-25T19:00:00"),
    ("30min ago", "2026-05-25T19:30:00"),
    ("+2d", "2026-05-27T20:00:00"),
    ("@1779739862", "2026-05-25T20:11:02"),
])
def test_times_as_journalctl_reads_them(text: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    usec = parse_time(text, now=NOW)
    assert datetime.fromtimestamp(usec / 1e6, UTC).strftime("%Y-%m-%dT%H:%M:%S") == expected


@pytest.mark.parametrize(("options", "message"), [
    ({"since": "soonish"}, "--since 'soonish': not a time"),
    ({"since": "2026-05-25 21:00", "until": "2026-05-25 20:00"}, "--since is after --until"),
    ({"boot": "last"}, "-b 'last': give a boot ID"),
    ({"since": "-1h", "after_cursor": "s=1"}, "either --since or --after-cursor"),
    ({"files": ["/nonexistent.journal"]}, "--file /nonexistent.journal: no such file"),
    ({"directory": "/nonexistent"}, "--directory /nonexistent: no such directory"),
])
def test_wrong_options_are_usage_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        select(now=NOW, **options)  # type: ignore[arg-type]


def test_selection() -> None:
    selection = select(units=["sglang-k26"], boot=" -1 ", since="@1779739862")
    assert selection.wanted and selection.boot == "-1" and selection.since_usec == 1779739862000000
    assert not select().wanted
    assert [mangle_unit(name) for name in ("sglang-k26", "x.socket", "sglang-*")] == [
        "sglang-k26.service", "x.socket", "sglang-*"]
