"""A line its logger marked fatal (glog/absl `F`, logrus `level=fatal`) ends the process, so the run
failed even when no rule knows its text: the cause is unknown, never a guess, and reading the
journal with the prefilter's skipping finds the same as parsing every line. The wordings are real:
a JAX TPU import (glog, from the corpus), DCGM's exporter (logrus), an XLA check (absl)."""

from __future__ import annotations

import logsift
from logsift.rules import load_rules

TPU = "F external/org_tensorflow/tensorflow/core/tpu/tpu_executor_init_fns.inc:110] TpuTransferManager_ReadDynamicShapes not available in this library.\n"
DCGM = 'time="2021-12-14T17:28:56Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"\n'
HEALTHY = "".join(
    f"May 01 10:{i // 60:02d}:{i % 60:02d} tpu-0 app[12]: I0501 10:00:04.551234   12345 tpu_client.cc:{i}] step {i} done\n"
    for i in range(600)
)


def _runs(text: str, skip: bool = True) -> list[tuple[str, str | None, str | None]]:
    report = logsift.diagnose(text.splitlines(keepends=True), model=False)
    return [(run["outcome"], (run["root_cause"] or {}).get("class"), (run.get("failure") or {}).get("text"))
            for incident in report.to_dict()["incidents"] for run in incident["runs"]]


def test_a_glog_fatal_line_no_rule_knows_fails_the_run_of_unknown_cause() -> None:
    [(outcome, cause, failure)] = _runs(TPU)
    assert (outcome, cause) == ("failed", None)
    assert failure is not None and failure.startswith("TpuTransferManager_ReadDynamicShapes not available")


def test_a_logrus_fatal_line_fails_the_run() -> None:
    assert [(outcome, cause) for outcome, cause, _ in _runs(DCGM)] == [("failed", None)]


def test_info_and_warning_lines_of_the_same_loggers_are_healthy() -> None:
    assert _runs(HEALTHY) == []
    assert _runs(DCGM.replace("level=fatal", "level=warning")) == []


def test_a_fatal_line_among_many_healthy_ones_is_found_with_skipping() -> None:
    lines = HEALTHY.splitlines(keepends=True)
    lines.insert(400, "May 01 10:06:40 tpu-0 app[12]: F0501 10:06:40.000001   12345 tpu_executor_init_fns.inc:110] "
                      "TpuTransferManager_ReadDynamicShapes not available in this library.\n")
    rules = load_rules()
    skipped = logsift.diagnose(lines, rules=rules, model=False).to_dict()["incidents"]
    assert len(skipped) == 1 and skipped[0]["runs"][0]["outcome"] == "failed"


def test_a_fatal_line_a_rule_knows_is_named_by_that_rule() -> None:
    line = "F0501 10:00:04.551234   12345 pjrt_stream_executor_client.cc:1243] Check failed: device_ordinal < local_device_count (1 vs. 1)\n"
    assert [cause for _, cause, _ in _runs(line)] == ["process.crashed"]


def test_a_bare_killed_after_the_engine_stops_itself_is_not_the_oom_killer() -> None:
    # vLLM's V1 engine kills its process tree after a worker's exception; bash prints "Killed"
    # (the corpus's Llama-4 torch.compile case). With a kernel kill line the OOM killer stays the cause.
    engine = ("(VllmWorker rank=5 pid=9469) ERROR 04-07 10:56:15 [multiproc_executor.py:383] ValueError: too many values to unpack (expected 12)\n"
              "CRITICAL 04-07 10:56:15 [core_client.py:361] Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.\n"
              "Killed\n")
    assert [cause for _, cause, _ in _runs(engine)] == ["serving.shutdown-after-error"]
    kernel = "Out of memory: Killed process 9469 (python3) total-vm:123456kB, anon-rss:120000kB, file-rss:0kB, shmem-rss:0kB\n"
    assert [cause for _, cause, _ in _runs(kernel + engine)] == ["kernel.oom-kill"]
    assert [cause for _, cause, _ in _runs("allocated 448 MiB\nKilled\n")] == ["kernel.oom-kill"]
