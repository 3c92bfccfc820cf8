"""Prefixes that the programs between a process and the journal put before every line.

A vLLM worker's traceback reaches the journal as
`(EngineCore_0 pid=8146) ERROR 11-30 03:12:41 [core.py:632] Traceback (most recent call last):`:
Ray's relay names the process, vLLM's logger the level and the code location, and only then does
the line say what happened. docker compose (`name  | `), kubectl (`[pod/name/container] `),
torchrun (`[rank0]:`), glog/absl/c10 (`E1130 03:12:41.123456 1234 file.cc:12] `), python logging
(`2026-05-25 20:16:09,412 - WARNING - flashinfer.jit: `), SGLang (`[2026-05-25 20:16:09 TP0] `),
TensorRT (`[04/09/2024-16:26:41] [TRT] [E] `), dmesg (`[ 1234.567890] `), a shell prompt and
`> ` quoting do the same. `unwrap` peels them off, stacked in any order, so that grouping and
the rules see the message itself, and says what they told:

- `stream`: the relayed process (Ray actor and pid, compose service, pod, rank): lines of two
  such processes are two streams, never one event;
- `level`: the logger's level, normalised (`debug`, `info`, `warning`, `error`, `critical`);
- `origin`: the logger's code location (`core.py:632`); consecutive lines with the same level and
  origin are one log record split into lines (vLLM logs a traceback line by line).

The shapes are data, in the order they are tried; adding one is one entry in SHAPES.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from logsift.lazy import compile_lazily

_LEVEL_WORD = r"(?P<level>INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE|NOTICE)"
_LEVELS = {
    "I": "info", "W": "warning", "E": "error", "F": "critical", "D": "debug", "V": "debug",
    "INFO": "info", "WARNING": "warning", "WARN": "warning", "ERROR": "error", "DEBUG": "debug", "TRACE": "debug",
    "CRITICAL": "critical", "FATAL": "critical", "NOTICE": "info", "ERR": "error",
    # logrus's four-letter words (Go: dcgm-exporter, the NVIDIA container toolkit, containerd)
    "ERRO": "error", "FATA": "critical", "PANI": "critical", "DEBU": "debug", "TRAC": "debug",
}
_TIME = r"\d\d:\d\d:\d\d(?:[.,]\d+)?"
# The source files native and glog-style loggers name before "]" (the prefilter keys on them:
# match.py's error-level shapes).
SOURCE_EXTENSIONS = ("cc", "cpp", "cxx", "c", "h", "hh", "hpp", "cu", "cuh", "inc", "py", "go", "rs", "m", "mm", "java")
_SOURCE = r"[\w./-]*\.(?:" + "|".join(SOURCE_EXTENSIONS) + r"):\d+"
_DATE = r"\d{4}-\d\d-\d\d"
_TRT_TIME = r"\d\d/\d\d/\d{4}-" + _TIME  # TensorRT's "04/09/2024-16:26:41"


@dataclass(frozen=True, slots=True)
class Shape:
    """One kind of prefix: `stream` names the relayed process, `level`/`origin` the logger's
    header; `text`-only shapes (timestamps, prompts) are dropped without a meaning."""

    name: str
    pattern: re.Pattern[str]


def _shape(name: str, regex: str) -> Shape:
    return Shape(name, compile_lazily(regex))


SHAPES: tuple[Shape, ...] = (
    # Ray and vLLM's multiprocessing relay: "(RayWorkerWrapper pid=4009) ", "(VllmWorker TP1 pid=9)",
    # "(EngineCore_DP0 pid=8146) ", "(pid=gcs_server) ", "(raylet, ip=10.0.0.2) "
    # (a paste may indent the whole block: "   (SGLangEngine pid=32887) ")
    _shape("ray", r"^ {0,8}\((?P<stream>[^()]*?\b(?:pid=[\w.-]+|ip=[\d.]+)[^()]*)\)(?: |$)"),
    # torchrun / torch.distributed: "[rank0]:", "[rank3]: "
    _shape("rank", r"^\[(?P<stream>rank\d+)\]:\s?"),
    # kubectl logs --prefix: "[pod/vllm-0/server] "
    _shape("kubectl", r"^\[(?P<stream>pod/[\w.-]+/[\w.-]+)\]\s"),
    # docker compose: "vllm-1  | ", "deepseek-v32-exp  | "
    _shape("compose", r"^(?P<stream>[A-Za-z0-9][\w.-]*)\s+\|(?: |$)"),
    # vLLM: "ERROR 11-30 03:12:41 [core.py:632] ", older "INFO 09-21 09:59:40 llm_engine.py:72] "
    _shape("vllm", r"^" + _LEVEL_WORD + r"\s+\d\d-\d\d " + _TIME
           + r"\s+(?:\[(?P<origin>[\w./ -]+:\d+)\]|(?P<origin2>[\w./-]+:\d+)\])\s?"),
    # glog, absl, c10 (bracketed by torch): "E1130 03:12:41.123456 1234 file.cc:12] ",
    # "[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] ", "[W1226 15:44:31.5 TCPStore.cpp:358] "
    # (torch before 2.4: "[E ProcessGroupNCCL.cpp:563] "; month without its zero: "E207")
    # (glog 0.7+ writes the year too: "E20260528 17:58:58.306107  2881 etcd_helper.cpp:135] ")
    _shape("glog", r"^\[?(?P<letter>[IWEF])(?:(?:\d{8}|\d{3,4}) " + _TIME + r")?\s+(?:\d+\s+)?(?P<origin>" + _SOURCE + r")\]\s?"),
    # SkyPilot (and other python loggers in glog's style): "E 11-26 17:47:34 backend_utils.py:992] "
    _shape("glog-python", r"^(?P<letter>[IWEF]) \d\d-\d\d " + _TIME + r" (?P<origin>" + _SOURCE + r")\]\s?"),
    # absl with a date: "2022-03-11 15:15:48.010379: W external/xla/xla/service/gpu/x.cc:80] "
    _shape("absl", r"^" + _DATE + r" " + _TIME + r": (?P<letter>[IWEF]) (?P<origin>" + _SOURCE + r")\]\s?"),
    # LMCache: "[2025-05-17 09:10:17,149] LMCache ERROR: "
    _shape("bracketed-time-named", r"^\[" + _DATE + r" " + _TIME + r"\] [A-Za-z][\w.-]* " + _LEVEL_WORD + r": "),
    # Ray's C++ core (raylet, GCS, core workers): "[2021-11-08 18:40:11,612 E 7813 40222436] core_worker.cc:251: "
    _shape("ray-core", r"^\[" + _DATE + r" " + _TIME + r" (?P<letter>[IWEF]) \d+ \d+\] (?P<origin>" + _SOURCE + r"): "),
    # spdlog's default pattern (C++ and Rust services, LlamaEdge's wasi logger): "[2024-07-11
    # 07:50:12.036] [logger] [error] ", without a logger name "[2021-12-23 01:23:45.067] [info] "
    _shape("spdlog", r"^\[" + _DATE + r" " + _TIME + r"\] (?:\[[^\[\]\n]{1,80}\] )?\[(?P<level>trace|debug|info|warning|warn"
           r"|error|critical)\] "),
    # SGLang and others: "[2026-05-25 20:16:09 TP0] ", "[2025-10-04 02:29:36 DP7 TP7] ", "[2024-01-01 00:00:00] "
    # (also a CI log view's "[2024-09-05T00:38:34Z] ")
    _shape("bracketed-time", r"^\[" + _DATE + r"[ T]" + _TIME + r"(?:Z|[+-]\d\d:?\d\d)?(?: [A-Z]+\d*)*\]\s?(?:" + _LEVEL_WORD
           + r":?\s+)?"),
    # rich's logging handler (distilabel, many CLIs): "[10/21/24 06:53:04] ERROR    "
    _shape("rich", r"^\[\d\d?/\d\d?/\d\d(?:\d\d)? " + _TIME + r"\] " + _LEVEL_WORD + r"\s+(?=\S)"),
    # ComfyUI's error report (markdown): "- **Exception Type:** torch.OutOfMemoryError", then
    # "- **Exception Message:** Allocation on device": the exception's type and message
    _shape("comfyui-report", r"^- \*\*Exception (?:Type|Message):\*\* ?"),
    # TensorRT: "[04/09/2024-16:26:41] [TRT] [E] ", "[TRT-LLM] [W] "; trtexec puts the level first:
    # "[09/07/2021-15:54:19] [E] [TRT] ", its own lines "[09/07/2021-15:54:19] [E] Engine set up failed"
    _shape("tensorrt", r"^(?:\[" + _TRT_TIME + r"\] \[(?P<level>[IWEVF])\](?: \[TRT\])?|(?:\[" + _TRT_TIME + r"\] )?"
           r"\[TRT(?:-LLM)?\] \[(?P<letter>[IWEVF])\]) "),
    # python logging: "2026-05-25 20:16:09,412 - WARNING - name: ", "2024-12-26 10:14:09,664 name 42 ERROR ",
    # "2024-12-26 10:14:09.664 | ERROR | mod:fn:12 - " (loguru), "2025-01-01T00:00:00.123Z ERROR ",
    # "2024-02-20 21:46:23 | ERROR | stderr | " (FastChat's workers)
    _shape("python-logging", r"^" + _DATE + r"[ T]" + _TIME + r"(?:Z|[+-]\d\d:?\d\d)?\s+(?:[-|]\s+)?(?:[\w.]+\s+)?"
           r"(?:\d+\s+)?" + _LEVEL_WORD + r"\b\s*(?:[-|:]\s*(?:(?P<origin>[\w.]+(?::[\w<>]+)*:\d+) - |[\w.]+: |[\w.]+ \| )?)?"),
    # "2026-05-25 20:16:09,412 - flashinfer.jit - WARNING - ", with a zone (GPUStack):
    # "2025-12-11 20:15:32.246580+08:00 - gpustack.worker.worker_manager - ERROR - "
    _shape("python-logging-named", r"^" + _DATE + r"[ T]" + _TIME + r"(?:Z|[+-]\d\d:?\d\d)? - [\w.]+ - " + _LEVEL_WORD
           + r" - "),
    # ONNX Runtime's logger: "2021-01-18 15:41:51.432762133 [E:onnxruntime:, inference_session.cc:1205 operator()] "
    _shape("onnxruntime", r"^" + _DATE + r" " + _TIME + r" \[(?P<letter>[VIWEF]):onnxruntime:[^,\]]*, (?P<origin>[\w./-]+:\d+)"
           r"(?: [^\]]*)?\]\s?"),
    # a syslog-style time before the level, no host (LocalAI 3): "Jan 07 09:55:05 ERROR "
    _shape("syslog-time-level", r"^[A-Z][a-z]{2} [ \d]\d " + _TIME + r" " + _LEVEL_WORD + r"\s+(?=\S)"),
    # docker logs --timestamps, kubectl --timestamps: "2024-05-01T10:00:00.123456789Z "; Docker
    # Desktop's log view and other collectors: "2025-03-05 09:00:31 " (after python-logging, which
    # takes such a time when a level follows it)
    _shape("rfc3339", r"^" + _DATE + r"[ T]" + _TIME + r"(?:Z|[+-]\d\d:?\d\d)? (?=\S)"),
    # Go's slog/logrus (Ollama): "time=2024-07-01T10:00:00.000Z level=ERROR source=server.go:12 msg=..."
    _shape("logfmt", r"^time=\S+ level=(?P<level>[A-Za-z]+) (?:source=(?P<origin>\S+) )?"),
    # logrus's text formatter (Go: dcgm-exporter, nvidia-container-toolkit, containerd, k3s):
    # "INFO[0000] ", "ERRO[0000] ", "FATA[2024-05-01T10:00:00Z] " (elapsed seconds or a time)
    _shape("logrus", r"^(?P<level>INFO|WARN|ERRO|FATA|PANI|DEBU|TRAC)\[[\dTZ:.+ -]{1,40}\]\s+(?=\S)"),
    # dmesg: "[ 1234.567890] ", "[Thu Jan  4 10:00:00 2024] "
    _shape("dmesg", r"^\[\s*\d+\.\d+\]\s?|^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d " + _TIME + r" \d{4}\]\s?"),
    # uvicorn and bare levels: "ERROR:    ", "WARNING:root:", "INFO:     Started server process"
    _shape("level-colon", r"^" + _LEVEL_WORD + r":(?:[\w.]+:)?\s*(?=\S)"),
    # Rust's tracing without a time (text-embeddings-inference, mistral.rs): "ERROR
    # text_embeddings_backend: ", "WARN mistralrs_core::pipeline: " (the target stays in the text)
    _shape("tracing", r"^(?P<level>TRACE|DEBUG|INFO|WARN|ERROR)\s+(?=[a-z_]\w*(?:::\w+)*: )"),
    # pytest's failure report: "E   RuntimeError: ..." (the exception lines of a failed test)
    _shape("pytest", r"^(?P<letter>E)   (?=\S)"),
    # Google Cloud Logging's entry view (a YAML-ish dump): the line's text is the entry's textPayload
    _shape("gcp-textpayload", r'^textPayload: "'),
    # a quoted paste or a shell prompt: "> ", "$ ", "# " (only with a space after)
    _shape("quote", r"^>(?: |$)"),
)
_FIRST = frozenset("([0123456789>-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
MAX_PREFIXES = 5
# An indented "(... pid=N) ": a Ray prefix in a paste that indented its block (the "ray" shape takes
# up to 8 spaces); matched in place, so a traceback's indented frames cost no copy.
_INDENTED_RELAY = compile_lazily(r" {1,8}\(")


# Loggers of Python programs: a traceback printed right after such a line belongs to it
# (logging's exc_info), so it was logged at that line's level. Native loggers (glog, absl,
# TensorRT, the kernel) never print Python tracebacks.
PYTHON_LOGGERS = frozenset({"vllm", "bracketed-time", "python-logging", "python-logging-named", "level-colon",
                            "glog-python", "rich", "bracketed-time-named"})


@dataclass(frozen=True, slots=True)
class Unwrapped:
    message: str
    stream: str | None = None
    level: str | None = None
    origin: str | None = None
    logger: str | None = None  # the SHAPES name of the header that gave the level
    prefix: str = ""  # what was peeled off


PLAIN = Unwrapped("")


def unwrap(message: str) -> Unwrapped:
    """The message without the relay and logger prefixes before it, and what they said."""
    if not message or (message[0] not in _FIRST and _INDENTED_RELAY.match(message) is None):
        return Unwrapped(message)
    stream: str | None = None
    level: str | None = None
    origin: str | None = None
    logger: str | None = None
    start = 0
    rest = message
    for _ in range(MAX_PREFIXES):
        for shape in SHAPES:
            found = shape.pattern.match(rest)
            if found is None or not found.end():
                continue
            if shape.name == "compose" and start:
                continue  # "name | " only as the outermost relay, never inside a message
            groups = found.groupdict()
            if groups.get("stream"):
                stream = _join(stream, groups["stream"])
            word = groups.get("level") or groups.get("letter")
            if word:
                level = _LEVELS.get(word.upper(), level)
                logger = shape.name
            origin = groups.get("origin") or groups.get("origin2") or origin
            start += found.end()
            rest = rest[found.end():]
            break
        else:
            break
        if not rest or rest[0] not in _FIRST:
            break
    if not start:
        return Unwrapped(message)
    return Unwrapped(message[start:], stream, level, origin, logger, message[:start])


def _join(outer: str | None, inner: str) -> str:
    return inner if outer is None else f"{outer} {inner}"


def strip(message: str) -> str:
    """Only the message (for the model and for templates)."""
    return unwrap(message).message
