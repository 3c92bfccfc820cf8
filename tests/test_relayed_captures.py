"""The real captures as a serving framework relays them (issue 9, point 2): vLLM's worker processes
print every line of a traceback behind `(VllmWorker rank=0 pid=97) ERROR 11-30 03:12:41
[multiproc_executor.py:375] `, torchrun behind `[rank0]: `, SGLang behind its `[time TP0] `. The
prefixes are how these programs print (their formats are in logsift/read/relay.py); the text
behind them is the unedited capture. Relayed, each capture must name the same class with the
same evidence line, and the terminal report must quote the exception line, not the prefix or
"Traceback (most recent call last):"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers import invoke, report
from tests.test_captured import CAPTURED, EXPECTED, KNOWN_MISSES, PRINTED_MISSES, _predicted, cases

# the captures logsift names wrongly today as printed (test_captured.KNOWN_MISSES, PRINTED_MISSES):
# strict xfails here too
FAILED = [(name, expected) for name, expected in EXPECTED if expected != "healthy"]
FAILED_CASES = cases(FAILED, KNOWN_MISSES | PRINTED_MISSES)

RELAYS: dict[str, Callable[[int], str]] = {
    "vllm-worker": lambda pid: f"(VllmWorker rank=0 pid={pid}) ERROR 11-30 03:12:41 [multiproc_executor.py:375] ",
    "ray-actor": lambda pid: f"(RayWorkerWrapper pid={pid}) ",
    "torchrun": lambda pid: "[rank0]: ",
    "sglang": lambda pid: "[2026-05-25 20:16:09 TP0] ",
}


def relayed(name: str, prefix: Callable[[int], str]) -> str:
    text = (CAPTURED / name).read_text(encoding="utf-8", errors="replace")
    return "".join(prefix(8146) + line + "\n" for line in text.splitlines())


def _root_cause(got: dict[str, Any]) -> dict[str, Any] | None:
    causes = [incident["root_cause"] for incident in got["incidents"] if incident["root_cause"]]
    return dict(causes[-1]) if causes else None


# A miss as printed that a relay's own level makes right: vLLM's worker prefix logs every line at
# ERROR, and an excerpt's error line with nothing after it is a failed run (cause unknown).
RIGHT_WHEN_RELAYED = {("nvidia-smi-bad-query-field.txt", "vllm-worker")}


@pytest.mark.parametrize("relay", sorted(RELAYS))
@pytest.mark.parametrize(("name", "expected"), FAILED_CASES)
def test_a_relayed_capture_names_the_same_cause_and_line(name: str, expected: str, relay: str) -> None:
    if (name, relay) in RIGHT_WHEN_RELAYED:
        pytest.xfail("right only through the relay's ERROR level, not what the capture itself says")
    _, bare = report(str(CAPTURED / name))
    _, got = report(input=relayed(name, RELAYS[relay]))
    bare_cause, got_cause = _root_cause(bare), _root_cause(got)
    assert _predicted(got["incidents"], expected) == expected
    if bare_cause is None:  # a run that only says it failed (mpirun-as-root): relayed, the same
        assert expected == "unknown" and got_cause is None
        return
    assert got_cause is not None
    # (indentation behind a prefix may be taken with the prefix)
    assert [str(line["text"]).strip() for line in got_cause["evidence"]] == [
        str(line["text"]).strip() for line in bare_cause["evidence"]
    ]


TRACEBACKS = [
    name for name, _ in FAILED if "Traceback (most recent call last):" in (CAPTURED / name).read_text(errors="replace")
]


@pytest.mark.parametrize("name", TRACEBACKS)
def test_the_terminal_report_of_a_vllm_prefixed_traceback_quotes_its_exception_line(name: str) -> None:
    _, got = report(str(CAPTURED / name))
    cause = _root_cause(got)
    assert cause is not None
    evidence = str(cause["evidence"][0]["text"])
    code, out, _ = invoke("--no-pager", input=relayed(name, RELAYS["vllm-worker"]))
    assert code == 1
    assert "Traceback (most recent call last)" not in evidence
    quoted = [line for line in out.splitlines() if line.lstrip().split(" ", 1)[0].isdigit() and " | " in line]
    assert quoted, out
    assert "[multiproc_executor.py:375]" not in quoted[0] and "Traceback" not in quoted[0]
    # the terminal cuts long lines in the middle: its two ends are the exception line's (without
    # its indentation: pip prints a build's traceback six spaces in)
    head = quoted[0].split(" | ", 1)[1].split(" ... ")[0].strip()
    assert evidence.strip().startswith(head), (quoted[0], evidence)
