"""An error the program logged and carried on from (a rule with signal "handled") fails no run, and
hides no failure that comes after it; the same error without the words that say it was handled
still fails the run."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import report

UNIT = "embed.service"
HEADER = "E1201 19:57:47.916000 2125 torch/_inductor/select_algorithm.py:3541] [0/0] "
SKIPPED = [
    HEADER + "Exception No valid triton configs. OutOfMemoryError: out of resource: triton_mm Required: 262144"
    " Hardware limit:232448 Reducing block sizes or `num_stages` may help. for benchmark choice"
    " TritonTemplateCaller(/tmp/torchinductor_root/sf/csfm.py, BLOCK_K=128, BLOCK_M=128, num_stages=5, num_warps=8)",
    HEADER + "Traceback (most recent call last):",
    HEADER + '  File "/opt/venv/lib/python3.12/site-packages/torch/_inductor/runtime/triton_heuristics.py", line 664, in _make_launchers',
    HEADER + '    raise RuntimeError(f"No valid triton configs. {type(exc).__name__}: {exc}")',
    HEADER + "RuntimeError: No valid triton configs. OutOfMemoryError: out of resource: triton_mm Required: 262144"
    " Hardware limit:232448 Reducing block sizes or `num_stages` may help.",
    "AUTOTUNE mm(512x512, 512x512)",
    "  triton_mm_6 0.0211 ms 100.0% BLOCK_K=32, BLOCK_M=64, BLOCK_N=64, num_stages=2, num_warps=4",
    "SingleProcess AUTOTUNE benchmarking takes 0.3807 seconds and 2.0061 seconds precompiling for 20 choices",
]


def _journal(lines: list[str], failed: bool) -> str:
    out = [f"Dec 01 19:57:40 gpu-7 systemd[1]: Started {UNIT} - Embedding server."]
    out += [f"Dec 01 19:57:47 gpu-7 python3[2125]: {line}" for line in lines]
    if failed:
        out.append(f"Dec 01 19:57:52 gpu-7 systemd[1]: {UNIT}: Main process exited, code=exited, status=1/FAILURE")
        out.append(f"Dec 01 19:57:52 gpu-7 systemd[1]: {UNIT}: Failed with result 'exit-code'.")
    else:
        out.append(f"Dec 01 19:58:30 gpu-7 systemd[1]: {UNIT}: Deactivated successfully.")
    return "\n".join(out) + "\n"


def test_a_skipped_autotune_choice_is_no_incident() -> None:
    code, got = report(input=_journal(SKIPPED, failed=False))
    assert code == 0
    assert got["incidents"] == []


def test_a_skipped_autotune_choice_in_a_pasted_excerpt_is_no_incident() -> None:
    code, got = report(input="\n".join(SKIPPED) + "\n")
    assert code == 0
    assert got["incidents"] == []


def test_a_failure_after_the_handled_error_is_still_the_root_cause() -> None:
    later = [
        "Traceback (most recent call last):",
        '  File "/srv/embed/serve.py", line 88, in <module>',
        "    cache = torch.empty(200 << 30, dtype=torch.uint8, device='cuda')",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a total capacity of"
        " 139.80 GiB of which 139.19 GiB is free.",
    ]
    code, got = report(input=_journal(SKIPPED + later, failed=True))
    assert code == 1
    [incident] = got["incidents"]
    assert incident["root_cause"]["class"] == "cuda.out-of-memory"
    assert [symptom["class"] for symptom in incident["symptoms"]] == ["systemd.unit-failed"]


def test_the_same_error_ending_the_compile_still_fails_the_run() -> None:
    ended = [
        "Traceback (most recent call last):",
        '  File "/srv/embed/serve.py", line 41, in <module>',
        "    print(project(x, x))",
        "torch._inductor.exc.InductorError: RuntimeError: No valid triton configs. OutOfMemoryError: out of resource:"
        " triton_mm Required: 262144 Hardware limit:232448 Reducing block sizes or `num_stages` may help.",
    ]
    code, got = report(input=_journal(ended, failed=True))
    assert code == 1
    [incident] = got["incidents"]
    assert incident["root_cause"]["class"] != "python.handled-error"
    assert incident["root_cause"]["class"] is not None


# Python's socketserver prints a request handler's exception as a line that says so, then the
# traceback, between dashed lines, and serves on (fixtures/captured/healthy-http-server-handled-
# exceptions.txt, lines 1-30: the first request's error only).
CAPTURED = Path(__file__).resolve().parent.parent / "fixtures" / "captured"
SERVED = (CAPTURED / "healthy-http-server-handled-exceptions.txt").read_text(encoding="utf-8").splitlines()[:30]


def test_a_request_error_that_socketserver_announces_is_no_incident() -> None:
    assert SERVED[4].startswith("Exception occurred during processing of request from")
    assert SERVED[5] == "Traceback (most recent call last):"
    code, got = report(input="\n".join(SERVED) + "\n")
    assert code == 0, got["incidents"]
    assert got["incidents"] == []
    code, got = report(input=_journal(SERVED, failed=False))
    assert (code, got["incidents"]) == (0, [])


def test_the_announcement_covers_only_the_traceback_right_after_it() -> None:
    # A line between the announcement and the traceback: the traceback is the program's own.
    lines = [*SERVED[:5], "2026-12-02 13:23:07,416 INFO server: client retried", *SERVED[5:29]]
    code, got = report(input="\n".join(lines) + "\n")
    assert code == 1
    [incident] = got["incidents"]
    assert incident["root_cause"]["class"] == "python.unclassified-traceback"


# llama.cpp's scheduler logs the failed allocations, then says it retries without pipeline
# parallelism (fixtures/corpus/cases/880_..., a server that then came up).
RETRIED = (Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "cases"
           / "880_llamacpp_compute_buffer_oom_retry_healthy.log").read_text(encoding="utf-8").splitlines()


def test_a_handled_line_covers_the_error_lines_right_above_it() -> None:
    assert "retrying without pipeline parallelism" in RETRIED[3]
    code, got = report(input="\n".join(RETRIED) + "\n")
    assert (code, got["incidents"]) == (0, [])


def test_errors_further_above_the_handled_line_still_count() -> None:
    # Three lines no rule flags between the errors and the handled line: not the same report.
    filler = ["1.06.520.090 I sched_reserve: reserving", "1.06.520.091 I sched_reserve: n_seq = 1",
              "1.06.520.092 I sched_reserve: n_ctx = 50176"]
    lines = [*RETRIED[:3], *filler, *RETRIED[3:]]
    code, got = report(input="\n".join(lines) + "\n")
    assert code == 1
    [incident] = got["incidents"]
    assert incident["root_cause"]["class"] == "cuda.out-of-memory"
