"""Which failed run a kernel line took down (logsift/diagnosis/host.py): the index gives what a
scan of every run gives, and a kernel line lands on the unit it hit among many."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from logsift.diagnosis.host import HOST_EVENT_WINDOW, FailedRuns, Span
from tests.helpers import invoke

T0 = datetime(2026, 5, 25, 20, 0, tzinfo=UTC)


def _scan(runs: list[tuple[str, Span]], host: str, line: int, stamp: datetime | None) -> int | None:
    """Every run looked at, as diagnosis did before the index: the reference."""
    best: tuple[float, int, int] | None = None
    for run_host, span in runs:
        if run_host != host or span.first_line > line or span.last_line < line:
            continue
        if stamp is not None and span.ended is not None:
            gap = (span.ended - stamp).total_seconds()
            if not 0 <= gap <= HOST_EVENT_WINDOW.total_seconds():
                continue
        else:
            gap = float(span.last_line - line)
        if best is None or (gap, span.last_line) < best[:2]:
            best = (gap, span.last_line, span.order)
    return best[2] if best is not None else None


@pytest.mark.parametrize("seed", range(40))
def test_the_index_finds_what_a_scan_finds(seed: int) -> None:
    rng = random.Random(seed)
    runs: list[tuple[str, Span]] = []
    for order in range(rng.randint(0, 60)):
        first = rng.randint(1, 400)
        last = first + rng.randint(0, 80)
        ended = None if rng.random() < 0.3 else T0 + timedelta(seconds=last + rng.choice([0, 0, 5, -30, 200]))
        runs.append((rng.choice("ab"), Span(first, last, ended, order)))
    index = FailedRuns((host, span, span.order) for host, span in runs)
    for _ in range(200):
        line = rng.randint(1, 500)
        stamp = None if rng.random() < 0.3 else T0 + timedelta(seconds=line + rng.randint(-20, 20))
        host = rng.choice("abc")
        assert index.taken_down_by(host, line, stamp) == _scan(runs, host, line, stamp), (host, line, stamp)


def test_an_xid_among_many_units_goes_to_the_unit_it_took_down() -> None:
    lines = []
    for number in range(300):
        second = number * 4
        stamp = (T0 + timedelta(seconds=second)).strftime("%b %d %H:%M:%S")
        lines.append(f"{stamp} h systemd[1]: Started u{number}.service - U{number}.")
        if number == 150:
            lines.append(f"{stamp} h kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.")
            lines.append(f"{stamp} h systemd[1]: u{number}.service: Main process exited, code=exited, status=1/FAILURE")
            lines.append(f"{stamp} h systemd[1]: u{number}.service: Failed with result 'exit-code'.")
        else:
            lines.append(f"{stamp} h systemd[1]: u{number}.service: Deactivated successfully.")
    code, out, err = invoke("--no-model", "-o", "json", input="\n".join(lines) + "\n")
    incidents = json.loads(out)["incidents"]
    assert code == 1, err
    assert [(incident["unit"], incident["root_cause"]["class"]) for incident in incidents] == [("u150.service", "gpu.xid")]
