"""Healthy lines that look like trouble: what a literal prefilter cannot tell from a failure.

Healthy GPU services print "error", "failed", "warning", "timeout" and paths with "cuda" all
day: request logs of clients that sent bad requests, retries that succeeded, exporters that poll
a counter the GPU does not have, NCCL INFO lines, deprecation warnings. Each template below
shares words with some rule (a literal of the rule library) but is no failure of the host and
matches no rule regex (tests/test_bench.py checks both). `NearMiss` is a unit that prints
them at a given share of the journal's lines, under the processes of a real host: the API
gateway, the DCGM exporter, node_exporter, containerd and the serving engines' own loggers.
"""

from __future__ import annotations

import random
from typing import Iterator

from bench.host import Burst, Host, Unit

# (identifier, template). {ip}, {n}, {ms}, {gpu}, {id} are filled per line.
TEMPLATES: tuple[tuple[str, str], ...] = (
    ("envoy", '[{rfc}.{ms:03d}Z] "POST /v1/chat/completions HTTP/1.1" 400 - 0 118 {n} - "{ip}" '
              '"python-requests/2.32.3" "{id}" "sglang-k26" "10.1.2.7:30001" response_code_details=error_in_request_body'),
    ("envoy", '[{rfc}.{ms:03d}Z] "POST /v1/completions HTTP/1.1" 503 UF 0 91 {n} - "{ip}" "openai-python/1.51.0" "{id}" '
              '"vllm" "10.1.2.7:8000" upstream_reset_before_response_started{{connection_failure}}'),
    ("dcgm-exporter", 'time="{rfc}Z" level=warning msg="Failed to get field 1001 (DCGM_FI_PROF_GR_ENGINE_ACTIVE) '
                      'for GPU {gpu}: Error: this field is not supported by the device"'),
    ("dcgm-exporter", 'time="{rfc}Z" level=info msg="Collected 34 metrics for 8 GPUs (0 errors) in {ms}ms"'),
    ("node_exporter", 'ts={rfc}.{ms:03d}Z caller=textfile.go:227 level=error collector=textfile '
                      'msg="failed to collect textfile data" file=nvidia_smi.prom err="failed to parse textfile data '
                      'from \\"/var/lib/node_exporter/nvidia_smi.prom\\": text format parsing error in line 12: '
                      'expected float as value, got \\"N/A\\""'),
    ("containerd", 'time="{rfc}.{ms:03d}Z" level=error msg="failed to handle container TaskExit event" '
                   'error="failed to stop container: context deadline exceeded: unknown" id={id}'),
    ("python3", "[{dash}] INFO:     {ip}:{n} - \"POST /generate HTTP/1.1\" 400 Bad Request"),
    ("python3", "[{dash}] Error in request: prompt is longer than the maximum context length (135162 > 131072 tokens)"),
    ("python3", "[{dash} TP0] Decode out of memory happened, retracting {n} requests; #new_token_ratio: 0.4500 -> 0.7000"),
    ("python3", "[{dash}] Health check failed once (timeout after 20s), retrying; the server will be marked unhealthy after 3"),
    ("vllm", "(APIServer pid=2161) WARNING {mmdd} [protocol.py:73] The following fields were present in the request but "
             "ignored: {{'error_on_invalid', 'cuda_graph'}}"),
    ("vllm", "(APIServer pid=2161) ERROR {mmdd} [serving_chat.py:202] Error in preprocessing prompt inputs: the "
             "request has {n} tokens, more than max_model_len 32768"),
    ("vllm", "(APIServer pid=2161) INFO {mmdd} [launcher.py:29] Route: /v1/load_lora_adapter, Methods: POST "
             "(returns 400 on error)"),
    ("vllm", "(EngineCore_0 pid=2240) INFO {mmdd} [gpu_model_runner.py:2315] Graph capturing finished in {n} secs, "
             "took 0.54 GiB of CUDA memory"),
    ("ollama", 'time={rfc}.{ms:03d}Z level=WARN source=sched.go:655 msg="gpu VRAM usage didn\'t recover within '
               'timeout" seconds=5.0{ms} model=/root/.ollama/models/blobs/sha256-6a0746a1ec1a'),
    ("ollama", '[GIN] {gin} | 404 |     {ms}.{n}µs |       {ip} | POST     "/api/show" (model not found, try pulling it first)'),
    ("text-generation-launcher", '{rfc}.{ms:03d}Z  WARN text_generation_router::server: router/src/server.rs:1184: '
                                 'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096'),
    ("python", "[{dash}] WARNING: /usr/local/cuda-12.8/lib64/libcudnn.so.9 is older than the version torch was built "
               "against; falling back to the bundled cuDNN"),
    ("python", "gpu-node-07:2133:2218 [0] NCCL INFO Channel {n:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM/read, "
               "no error, retry count 0"),
    ("kernel", "NVRM: GPU at PCI:0000:{gpu}8:00: GPU-a3f0c2e1-7b44-4d0e-9a1c-5e2f0b8c7d6{gpu}: "
               "ECC error count reset after reboot: 0 correctable, 0 uncorrectable"),
)


class NearMiss(Unit):
    """Near-miss lines at `share` of all lines: one every `gap` seconds on average, where `gap`
    is set from the host's measured line rate by the writer (generate.py)."""

    unit = "-"

    def __init__(self, host: Host, rng: random.Random, start: float, gap: float) -> None:
        super().__init__(host, rng, start, 1e12)
        self.gap = gap
        self.pids = {ident: host.pid(rng) for ident, _ in TEMPLATES}

    def life(self) -> Iterator[Burst]:
        self.busy = False
        rng = self.rng
        while True:
            self.t += rng.expovariate(1 / self.gap)
            ident, template = TEMPLATES[rng.randrange(len(TEMPLATES))]
            stamps = self.stamps()
            text = template.format(
                rfc=stamps.rfc, dash=stamps.dash, mmdd=stamps.mmdd, gin=stamps.gin, ms=rng.randint(1, 999),
                n=rng.randint(2, 60000), gpu=rng.randint(0, 7), id=f"{rng.getrandbits(64):016x}",
                ip=f"10.{rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(2, 250)}",
            )
            pid = None if ident == "kernel" else self.pids[ident]
            yield self.at(0.0, [(ident, pid, text)])
