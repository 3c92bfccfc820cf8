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


# A pasted excerpt whose program logged an error and never came up stopped there (real wordings:
# Mooncake's transfer engine without etcd, fixtures/corpus case 500; uv behind a Ray relay, case
# 385; vLLM refusing a request after start-up, case 330).
MOONCAKE = (
    "WARNING: Logging before InitGoogleLogging() is written to STDERR\n"
    "E1204 10:45:22.126729 108700 transfer_metadata.cpp:74] Error from etcd client, etcd uri: 10.0.0.1:2379 error: 14 message: connections to all backends failing\n"
    "I1204 10:45:22.131613 108700 rdma_context.cpp:131] RDMA device: mlx5_0, LID: 28\n"
    "E1204 10:45:22.131772 108700 rdma_transport.cpp:92] Transfer engine cannot be initialized: cannot publish segments. Check the connectivity between this server and etcd servers\n"
)
UV = ("(setup pid=1293)  + wheel==0.45.1\n"
      "(setup pid=1293) error: unexpected argument '--torch-backend' found\n"
      "(setup pid=1293) \n"
      "(setup pid=1293)   tip: a similar argument exists: '--no-cache'\n")
REFUSED = ("INFO:     Application startup complete.\n"
           "ERROR 03-18 09:02:03 [serving_chat.py:133] Error with model object='error' message='The model `QwQ-32B-Q4_K_M` does not exist.' type='NotFoundError' param=None code=404\n"
           'INFO:     192.168.1.168:12475 - "POST /v1/chat/completions HTTP/1.1" 404 Not Found\n')


def test_an_excerpt_that_ends_in_error_lines_failed_of_unknown_cause() -> None:
    [(outcome, cause, failure)] = _runs(MOONCAKE)
    assert (outcome, cause) == ("failed", None)
    assert failure is not None and failure.startswith("Transfer engine cannot be initialized")
    [(outcome, cause, failure)] = _runs(UV)
    assert (outcome, cause, failure) == ("failed", None, "error: unexpected argument '--torch-backend' found")


def test_error_lines_of_a_program_that_came_up_or_of_a_journal_are_not_a_failure() -> None:
    assert _runs(REFUSED) == []
    assert _runs(REFUSED.split("\n", 1)[1] + REFUSED.split("\n", 1)[0] + "\n") == []  # ready after the error
    assert _runs(MOONCAKE.replace("E1204", "W1204")) == []
    journal = "".join(f"Dec 04 10:45:22 node-3 mooncake[108700]: {line}\n" for line in MOONCAKE.splitlines())
    assert _runs(journal) == []  # a journal's unit that may still be running


def test_an_excerpt_error_line_among_many_healthy_ones_is_found_with_skipping() -> None:
    lines = [f"I0501 10:00:04.551234   12345 tpu_client.cc:{i}] step {i} done\n" for i in range(3000)]
    lines.append(MOONCAKE.splitlines(keepends=True)[-1])
    rules = load_rules()
    skipped = logsift.diagnose(lines, rules=rules, model=False).to_dict()
    assert [run["outcome"] for incident in skipped["incidents"] for run in incident["runs"]] == ["failed"]
    assert skipped["summary"]["entries"] < 100  # the healthy lines were skipped, not parsed


def test_every_error_level_prefix_is_a_candidate_of_the_raw_shapes() -> None:
    # The prefilter must flag every raw line whose parsed record is an excerpt's error (else
    # skipping would lose it): the shapes' superset, for each relay shape that gives a level.
    from logsift.match import _ERROR_PATTERN
    from logsift.read.relay import unwrap
    from tests.test_relay import CASES

    lines = [line for line, _, _, level, _ in CASES if level in ("error", "critical")] + [
        "[2024-07-10 15:24:06,819 E 2474429 2474429] core_worker.cc:251: Failed to register worker 01 to Raylet.",
        "Jan 07 09:55:05 ERROR Failed to load model modelID=\"qwen3-vl-4b-thinking\"",
        "[2025-05-17 09:10:17,149] LMCache ERROR: Num retrieved tokens: 0, num expected tokens: 408",
        "E   AssertionError: assert 1 == 2",
        "time=2024-07-01T10:00:00.000Z level=ERROR source=server.go:12 msg=\"llama runner terminated\"",
        "(setup pid=1293) error: unexpected argument '--torch-backend' found",
    ]
    shapes = _ERROR_PATTERN.compiled
    for line in lines:
        said = unwrap(line)
        assert said.level in ("error", "critical") or said.message.startswith("error:"), line
        assert shapes.search(line) is not None, line


def test_a_journals_error_level_lines_are_left_unparsed() -> None:
    # Only a plain excerpt's error lines can fail a run; a journal's are not even parsed (the
    # sparse bench's near misses: healthy services log ERROR lines all day).
    lines = [f"Dec 04 10:{i // 60 % 60:02d}:{i % 60:02d} node-3 vllm[2161]: ERROR 12-04 10:45:22 [serving_chat.py:202] "
             f"Error in preprocessing prompt inputs: request {i} too long\n" for i in range(3000)]
    summary = logsift.diagnose(lines, rules=load_rules(), model=False).to_dict()["summary"]
    assert summary["incidents"] == 0 and summary["lines"] == 3000 and summary["entries"] < 10


def test_a_near_miss_error_line_still_fails_the_excerpt_for_the_learned_fallback() -> None:
    # With the fallback, a line sharing a rule's literal is an event of near misses (not marker
    # only); its error level must still make the excerpt's run fail (it once read as healthy).
    from logsift.match import NEAR, Matcher
    from logsift.pipeline import analyze
    from logsift.read.text import TextReader

    rules = load_rules()
    line = UV.splitlines()[1]
    matcher = Matcher(rules, near=True)
    assert NEAR in matcher.scan(list(TextReader("-").read([line])))[0]
    analysis = analyze(TextReader("-").read(UV.splitlines()), rules, matcher, fallback=lambda matched: matched)
    [incident] = analysis.diagnosis.incidents
    [run] = incident.runs
    assert (run.outcome, incident.root_cause) == ("failed", None)
    assert run.failure is not None and run.failure.text.startswith("error: unexpected argument")
