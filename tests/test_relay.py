"""Relay and logger prefixes are peeled off each line, and what they said is kept."""

from __future__ import annotations

import pytest

from logsift.read.relay import unwrap

CASES = [
    # (line, message, stream, level, origin)
    ("(EngineCore_0 pid=8146) ERROR 11-30 03:12:41 [core.py:632] Traceback (most recent call last):",
     "Traceback (most recent call last):", "EngineCore_0 pid=8146", "error", "core.py:632"),
    ("(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught",
     "[Rank 1] Watchdog caught", "RayWorkerWrapper pid=4009 rank1", "error", "ProcessGroupNCCL.cpp:563"),
    ("[rank6]:[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] [Rank 6] Watchdog caught collective",
     "[Rank 6] Watchdog caught collective", "rank6", "error", "ProcessGroupNCCL.cpp:616"),
    ('deepseek-v32-exp  |   File "/x.py", line 431, in initialize', '  File "/x.py", line 431, in initialize',
     "deepseek-v32-exp", None, None),
    ("[2025-10-04 02:29:36 DP7 TP7] Scheduler hit an exception:", "Scheduler hit an exception:", None, None, None),
    ("2026-05-25 20:16:09,412 - WARNING - flashinfer.jit: Failed to get device capability",
     "Failed to get device capability", None, "warning", None),
    ("E1130 03:12:41.123456 1234 file.cc:12] Check failed", "Check failed", None, "error", "file.cc:12"),
    ("2022-03-11 15:15:48.010379: W external/xla/x.cc:80] could not open file", "could not open file", None,
     "warning", "external/xla/x.cc:80"),
    # SkyPilot's glog-style python logger; rich's handler (distilabel), both from fixtures/corpus
    ("E 11-26 17:47:34 backend_utils.py:992] Timed out: waited for more than 90 seconds",
     "Timed out: waited for more than 90 seconds", None, "error", "backend_utils.py:992"),
    ("[10/21/24 06:53:04] ERROR    ['distilabel.pipeline'] ❌ Failed to local.py:302",
     "['distilabel.pipeline'] ❌ Failed to local.py:302", None, "error", None),
    ("[04/09/2024-16:26:41] [TRT] [E] 9: Error Code 9: Internal Error", "9: Error Code 9: Internal Error", None,
     "error", None),
    ("INFO:     Application startup complete.", "Application startup complete.", None, "info", None),
    ("[ 1234.567890] NVRM: Xid (PCI:0000:01:00): 79", "NVRM: Xid (PCI:0000:01:00): 79", None, None, None),
    ("> RuntimeError: boom", "RuntimeError: boom", None, None, None),
    ("(APIServer pid=9) INFO 09-21 09:59:40 llm_engine.py:72] Init", "Init", "APIServer pid=9", "info",
     "llm_engine.py:72"),
    ("2024-12-26 10:14:09.664 | ERROR    | sglang.srt:run:12 - oops", "oops", None, "error", "sglang.srt:run:12"),
    ('time=2024-07-01T10:00:00.000Z level=ERROR source=server.go:12 msg="x"', 'msg="x"', None, "error",
     "server.go:12"),
    ("(Worker pid=1) (Worker_TP1 pid=1) ERROR 03-05 09:56:09 [multiproc_executor.py:880] [1/11] nvcc",
     "[1/11] nvcc", "Worker pid=1 Worker_TP1 pid=1", "error", "multiproc_executor.py:880"),
    # Ray writes one space after its prefix: what follows is the line's own indentation (a
    # traceback frame), which grouping needs to tell frames from the exception line.
    ('(RayWorkerWrapper pid=8146)   File "/x.py", line 764, in resolve', '  File "/x.py", line 764, in resolve',
     "RayWorkerWrapper pid=8146", None, None),
    # Docker Desktop's log view puts its own time before Ollama's logfmt header, and before the Go
    # runtime's crash lines.
    ('2025-03-05 08:58:54 time=2025-03-05T06:58:54.116Z level=INFO source=server.go:380 msg="starting llama server"',
     'msg="starting llama server"', None, "info", "server.go:380"),
    ("2025-03-05 09:00:31 SIGABRT: abort", "SIGABRT: abort", None, None, None),
    ("2024-05-01T10:00:00.123456789Z panic: runtime error", "panic: runtime error", None, None, None),
    # pytest's report of a failed test's exception.
    ("E   RuntimeError: operator torchvision::nms does not exist", "RuntimeError: operator torchvision::nms does not exist",
     None, "error", None),
    # A CI log view's UTC time in brackets, then uvicorn's level.
    ("[2024-09-05T00:38:34Z] ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 44319)",
     "[Errno 98] error while attempting to bind on address ('0.0.0.0', 44319)", None, "error", None),
    # spdlog's default pattern, with a logger name (LlamaEdge's wasi logger) and without one.
    ("[2024-07-11 07:50:12.036] [wasi_logging_stdout] [error] llama_core: Get the model metadata.",
     "llama_core: Get the model metadata.", None, "error", None),
    ("[2021-12-23 01:23:45.067] [info] log message", "log message", None, "info", None),
    # trtexec: the level before TensorRT's tag, and before trtexec's own lines.
    ("[09/07/2021-15:54:19] [E] [TRT] Network validation failed.", "Network validation failed.", None, "error", None),
    ("[09/07/2021-15:54:19] [E] Engine set up failed", "Engine set up failed", None, "error", None),
    ("[04/09/2024-16:26:41] [TRT] [W] Using default stream", "Using default stream", None, "warning", None),
    ("[TRT-LLM] [I] Set nccl_plugin to None.", "Set nccl_plugin to None.", None, "info", None),
    # A paste that indented a whole block of Ray's relayed lines.
    ("   (SGLangEngine pid=32887) torch.AcceleratorError: CUDA error: an illegal memory access was",
     "torch.AcceleratorError: CUDA error: an illegal memory access was", "SGLangEngine pid=32887", None, None),
    # Google Cloud Logging's entry view.
    ('textPayload: "vllm serve: error: argument --limit-mm-per-prompt: Value image:4 cannot be converted."',
     'vllm serve: error: argument --limit-mm-per-prompt: Value image:4 cannot be converted."', None, None, None),
    # logrus's text formatter (dcgm-exporter, corpus case 1279) and Rust's tracing without a time
    # (text-embeddings-inference, corpus case 766).
    ("ERRO[0000] Encountered a failure.", "Encountered a failure.", None, "error", None),
    ("FATA[2024-05-01T10:00:00Z] Error starting dcgm-exporter", "Error starting dcgm-exporter", None, "critical", None),
    ("ERROR text_embeddings_backend: backends/src/lib.rs:388:", "text_embeddings_backend: backends/src/lib.rs:388:",
     None, "error", None),
    ("WARN mistralrs_core::pipeline: Loading", "mistralrs_core::pipeline: Loading", None, "warning", None),
    # glog 0.7+ with the year in its header.
    ("E20260528 17:58:58.306311  2521 ha_helper.cpp:176] Master service stopped: 1", "Master service stopped: 1", None,
     "error", "ha_helper.cpp:176"),
]


@pytest.mark.parametrize(("line", "message", "stream", "level", "origin"), CASES)
def test_prefixes_are_peeled_off(line: str, message: str, stream: str | None, level: str | None,
                                 origin: str | None) -> None:
    got = unwrap(line)
    assert (got.message, got.stream, got.level, got.origin) == (message, stream, level, origin)
    assert got.prefix + got.message == line


@pytest.mark.parametrize("line", [
    "Traceback (most recent call last):", "  File \"/x.py\", line 1, in <module>", "RuntimeError: CUDA error: out of memory",
    "(most recent call last)", "nvcc fatal   : Unsupported gpu architecture 'compute_120'", "",
    "x = a | b", "Error: listen tcp 127.0.0.1:11434: bind: address already in use",
    "2025-03-05", "2025-03-05 09:00:31",
])
def test_messages_without_a_prefix_are_left_alone(line: str) -> None:
    got = unwrap(line)
    assert (got.message, got.stream, got.level) == (line, None, None)
