"""The simulated vLLM unit: `vllm serve` with the V1 engine (APIServer, EngineCore and TP
worker prefixes in one stream), torch.compile and CUDA graph capture, serving, injected failures."""

from __future__ import annotations

import random
from typing import Iterator

from bench.host import ROUTES, Burst, Entry, Host, Unit, hexid, ip, pick
from bench.tracebacks import vllm_engine_failed, vllm_kv_cache_oom, vllm_port_in_use, vllm_shared_object_missing


class VLLM(Unit):
    """`vllm serve` (V1 engine): APIServer, EngineCore and TP workers share the unit's stdout."""

    unit = "vllm.service"
    description = "vLLM OpenAI-compatible server"
    failure_kinds = ("out-of-memory", "port-in-use", "shared-object-missing")

    def __init__(self, host: Host, rng: random.Random, start: float, restart_every: float, *, model: str, tp: int,
                 port: int) -> None:
        super().__init__(host, rng, start, restart_every)
        self.model = model
        self.tp = tp
        self.port = port
        self.site = "/opt/vllm/.venv/lib/python3.12/site-packages"
        self.main = 0
        self.engine = 0
        self.workers: list[int] = []
        self.next_stats = 0.0
        self.next_health = 0.0

    def log(self, who: str, level: str, source: str, text: str) -> Entry:
        return ("vllm", self.main, f"({who}) {level} {self.stamps().mmdd} [{source}] {text}")

    def api(self, text: str, level: str = "INFO", source: str = "api_server.py:1839") -> Entry:
        return self.log(f"APIServer pid={self.main}", level, source, text)

    def core(self, text: str, level: str = "INFO", source: str = "core.py:77") -> Entry:
        return self.log(f"EngineCore_DP0 pid={self.engine}", level, source, text)

    def worker(self, rank: int, text: str, level: str = "INFO", source: str = "gpu_model_runner.py:2602") -> Entry:
        return self.log(f"Worker_TP{rank} pid={self.workers[rank]}", level, source, text)

    def raw(self, who: str, text: str) -> Entry:
        return ("vllm", self.main, f"({who}) {text}")

    def uvicorn(self, text: str) -> Entry:
        return ("vllm", self.main, f"(APIServer pid={self.main}) INFO:     {text}")

    def start(self, upto: str | None = None) -> Iterator[Burst]:
        rng = self.rng
        self.main = self.host.pid(rng)
        self.engine = self.host.pid(rng)
        self.workers = [self.host.pid(rng) for _ in range(self.tp)]
        s = self.stamps
        yield self.at(rng.uniform(2, 4), [("vllm", self.main, f"INFO {s().mmdd} [__init__.py:216] Automatically detected platform cuda.")])
        if upto == "import":
            return
        yield self.at(rng.uniform(2, 4), [
            self.api("vLLM API server version 0.11.0"),
            self.api(f"non-default args: {{'model_tag': '{self.model}', 'host': '0.0.0.0', 'port': {self.port}, "
                     f"'model': '{self.model}', 'tensor_parallel_size': {self.tp}, 'gpu_memory_utilization': 0.9}}",
                     source="utils.py:233"),
            self.api("Found ulimit of 1024 and failed to automatically increase with error current limit exceeds "
                     "maximum limit. This can cause fd limit errors like `OSError: [Errno 24] Too many open files`. "
                     "Consider increasing with ulimit -n", level="WARNING", source="utils.py:2481"),
        ])
        if upto == "bind":
            return
        yield self.at(rng.uniform(3, 8), [
            self.api("Resolved architecture: Qwen3ForCausalLM", source="model.py:547"),
            self.api("Using max model len 40960", source="model.py:1510"),
            self.api("Chunked prefill is enabled with max_num_batched_tokens=8192.", source="scheduler.py:205"),
        ])
        yield self.at(rng.uniform(4, 8), [
            self.core("Waiting for init message from front-end.", source="core.py:644"),
            self.core(f"Initializing a V1 LLM engine (v0.11.0) with config: model='{self.model}', speculative_config=None, "
                      f"tokenizer='{self.model}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, "
                      f"trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=40960, download_dir=None, "
                      f"load_format=auto, tensor_parallel_size={self.tp}, pipeline_parallel_size=1, "
                      f"data_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, "
                      f"kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name={self.model}, "
                      f"enable_prefix_caching=True, chunked_prefill_enabled=True, pooler_config=None, "
                      "compilation_config={\"level\":3,\"debug_dump_path\":\"\",\"cache_dir\":\"\",\"backend\":\"\"}"),
            self.core("Reducing Torch parallelism from 32 threads to 1 to avoid unnecessary CPU contention. Set "
                      "OMP_NUM_THREADS in the external environment to tune this value as needed.", level="WARNING",
                      source="multiproc_executor.py:720"),
        ])
        yield self.at(rng.uniform(3, 6), [
            self.worker(rank, f"rank {rank} in world size {self.tp} is assigned as DP rank 0, PP rank 0, TP rank {rank}, EP rank {rank}",
                        source="parallel_state.py:1208") for rank in range(self.tp)])
        yield self.at(0.5, [
            *[self.worker(rank, f"Starting to load model {self.model}...") for rank in range(self.tp)],
            *[self.worker(rank, "Using Flash Attention backend on V1 engine.", source="cuda.py:366") for rank in range(self.tp)],
        ])
        shards = 17
        bar = f"Worker_TP0 pid={self.workers[0]}"
        yield self.at(0.5, [self.raw(bar, f"Loading safetensors checkpoint shards:   0% Completed | 0/{shards} [00:00<?, ?it/s]")])
        per = rng.uniform(0.4, 1.2)
        for done in range(1, shards + 1):
            elapsed = per * done
            left = per * (shards - done)
            yield self.at(per, [self.raw(bar, f"Loading safetensors checkpoint shards: {100 * done // shards:>3}% Completed | "
                                              f"{done}/{shards} [{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}<"
                                              f"{int(left) // 60:02d}:{int(left) % 60:02d},  {1 / per:.2f}it/s]")])
        yield self.at(0.2, [self.raw(bar, "")])
        took = per * shards
        yield self.at(0.3, [
            *[self.worker(rank, f"Loading weights took {took:.2f} seconds", source="default_loader.py:267") for rank in range(self.tp)],
            *[self.worker(rank, f"Model loading took 30.5855 GiB and {took + 0.9:.6f} seconds", source="gpu_model_runner.py:2653")
              for rank in range(self.tp)],
        ])
        digest = hexid(rng, 10)
        dynamo = rng.uniform(5, 9)
        yield self.at(dynamo, [
            self.worker(rank, f"Using cache directory: /root/.cache/vllm/torch_compile_cache/{digest}/rank_{rank}_0/backbone "
                              "for vLLM's torch.compile", source="backends.py:548") for rank in range(self.tp)])
        compile_time = rng.uniform(20, 40)
        yield self.at(compile_time, [self.worker(rank, f"Dynamo bytecode transform time: {dynamo:.2f} s", source="backends.py:559")
                                     for rank in range(self.tp)])
        yield self.at(rng.uniform(1, 3), [
            *[self.worker(rank, "Cache the graph for dynamic shape for later use", source="backends.py:197") for rank in range(self.tp)],
            *[self.worker(rank, f"Compiling a graph for dynamic shape takes {compile_time:.2f} s", source="backends.py:218")
              for rank in range(self.tp)],
            *[self.worker(rank, f"torch.compile takes {compile_time + dynamo:.2f} s in total", source="monitor.py:34")
              for rank in range(self.tp)],
        ])
        yield self.at(rng.uniform(1, 3), [self.worker(rank, "Available KV cache memory: 38.82 GiB", source="gpu_worker.py:298")
                                          for rank in range(self.tp)])
        if upto == "kv":
            return
        yield self.at(0.3, [
            self.core("GPU KV cache size: 317,984 tokens", source="kv_cache_utils.py:1087"),
            self.core("Maximum concurrency for 40,960 tokens per request: 7.76x", source="kv_cache_utils.py:1091"),
        ])
        yield self.at(rng.uniform(5, 7), [self.raw(bar, "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:05<00:00, 12.03it/s]")])
        yield self.at(rng.uniform(2, 3), [self.raw(bar, "Capturing CUDA graphs (decode, FULL): 100%|██████████| 35/35 [00:02<00:00, 14.61it/s]")])
        yield self.at(0.2, [self.worker(rank, "Graph capturing finished in 9 secs, took 0.87 GiB", source="gpu_model_runner.py:3480")
                            for rank in range(self.tp)])
        yield self.at(0.3, [self.core("init engine (profile, create kv cache, warmup model) took 62.71 seconds", source="core.py:210")])
        routes = ["/openapi.json", "/docs", "/health", "/load", "/tokenize", "/detokenize", "/v1/models", "/version",
                  "/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/metrics"]
        yield self.at(0.5, [
            self.api("Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 19874", source="loggers.py:147"),
            self.api("Default sampling parameters have been overridden by the model's Hugging Face generation config "
                     "recommended from the model creator. If this is not intended, please relaunch vLLM instance with "
                     "`--generation-config vllm`.", level="WARNING", source="serving_responses.py:137"),
            self.api("Supported_tasks: ['generate']", source="api_server.py:1634"),
            self.api(f"Starting vLLM API server 0 on http://0.0.0.0:{self.port}", source="api_server.py:1912"),
            self.api("Available routes are:", source="launcher.py:34"),
            *[self.api(f"Route: {route}, Methods: {'GET, HEAD' if route in ('/openapi.json', '/docs') else 'POST' if route.startswith(('/v1/c', '/v1/e', '/tok', '/detok')) else 'GET'}",
                       source="launcher.py:42") for route in routes],
            self.uvicorn(f"Started server process [{self.main}]"),
            self.uvicorn("Waiting for application startup."),
            self.uvicorn("Application startup complete."),
        ])

    def serve(self) -> Iterator[Burst]:
        rng = self.rng
        self.t += rng.expovariate(0.5)
        entries: list[Entry] = []
        if self.t >= self.next_health:
            entries.append(self.uvicorn(f'127.0.0.1:{rng.randint(40000, 60000)} - "GET /health HTTP/1.1" 200 OK'))
            self.next_health = self.t + 10.0
        if self.t >= self.next_stats:
            entries.append(self.api(f"Engine 000: Avg prompt throughput: {rng.uniform(0, 4000):.1f} tokens/s, Avg generation "
                                    f"throughput: {rng.uniform(0, 900):.1f} tokens/s, Running: {rng.randint(0, 30)} reqs, "
                                    f"Waiting: 0 reqs, GPU KV cache usage: {rng.uniform(0, 40):.1f}%, Prefix cache hit rate: "
                                    f"{rng.uniform(0, 80):.1f}%", source="loggers.py:127"))
            self.next_stats = self.t + 10.0
        entries.append(self.uvicorn(f"{ip(rng)} - {pick(rng, ROUTES)}"))
        yield Burst(self.t, entries, False)

    def goodbye(self) -> list[Entry]:
        return [
            self.api("Shutting down FastAPI HTTP server.", source="launcher.py:99"),
            self.uvicorn("Shutting down"),
            self.uvicorn("Waiting for application shutdown."),
            self.uvicorn("Application shutdown complete."),
        ]

    def fail(self, kind: str) -> Iterator[Burst]:
        rng = self.rng
        yield from self.stop()
        yield self.at(rng.uniform(2, 40), [self.started()], mark=kind)
        if kind == "shared-object-missing":
            self.main = self.host.pid(rng)
            lines = vllm_shared_object_missing(self.site)
            yield self.at(rng.uniform(2, 4), [("vllm", self.main, line) for line in lines])
        elif kind == "port-in-use":
            yield from self.start("bind")
            who = f"APIServer pid={self.main}"
            yield self.at(0.2, [self.raw(who, line) for line in vllm_port_in_use(self.site)])
        else:
            yield from self.start("kv")
            who = f"EngineCore_DP0 pid={self.engine}"
            stamp = self.stamps().mmdd
            yield self.at(0.3, [self.raw(who, f"ERROR {stamp} [core.py:708] {line}") for line in vllm_kv_cache_oom(self.site)])
            api = f"APIServer pid={self.main}"
            yield self.at(1.0, [self.raw(api, line) for line in vllm_engine_failed(self.site)])
        yield self.at(rng.uniform(0.2, 2), self.failed_lines("exited", "1/FAILURE", "exit-code"))
        yield from self.restart_after_failure()
