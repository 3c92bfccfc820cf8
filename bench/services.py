"""Simulated Ollama and text-generation-inference units, and the host's own background noise."""

from __future__ import annotations

import random
from typing import Iterator

from bench.host import Burst, Entry, Host, Unit, hexid, pick

OLLAMA_ROUTES = (
    ("POST", "/api/chat"), ("POST", "/api/chat"), ("POST", "/api/generate"), ("POST", "/api/embed"),
    ("GET", "/api/tags"), ("GET", "/api/ps"), ("HEAD", "/"), ("GET", "/api/version"),
)
GIN_ROUTES = (
    ("POST", "/api/pull", "PullHandler"), ("POST", "/api/generate", "GenerateHandler"),
    ("POST", "/api/chat", "ChatHandler"), ("POST", "/api/embed", "EmbedHandler"),
    ("POST", "/api/embeddings", "EmbeddingsHandler"), ("POST", "/api/create", "CreateHandler"),
    ("POST", "/api/push", "PushHandler"), ("POST", "/api/copy", "CopyHandler"),
    ("DELETE", "/api/delete", "DeleteHandler"), ("POST", "/api/show", "ShowHandler"),
    ("GET", "/api/ps", "PsHandler"), ("GET", "/api/tags", "ListHandler"), ("GET", "/api/version", "VersionHandler"),
)
OLLAMA_ENV = (
    "map[CUDA_VISIBLE_DEVICES:6 GPU_DEVICE_ORDINAL: HIP_VISIBLE_DEVICES: HSA_OVERRIDE_GFX_VERSION: HTTPS_PROXY: "
    "HTTP_PROXY: NO_PROXY: OLLAMA_DEBUG:false OLLAMA_FLASH_ATTENTION:false OLLAMA_GPU_OVERHEAD:0 "
    "OLLAMA_HOST:http://127.0.0.1:11434 OLLAMA_INTEL_GPU:false OLLAMA_KEEP_ALIVE:5m0s OLLAMA_KV_CACHE_TYPE: "
    "OLLAMA_LLM_LIBRARY: OLLAMA_LOAD_TIMEOUT:5m0s OLLAMA_MAX_LOADED_MODELS:0 OLLAMA_MAX_QUEUE:512 "
    "OLLAMA_MODELS:/usr/share/ollama/.ollama/models OLLAMA_MULTIUSER_CACHE:false OLLAMA_NOHISTORY:false "
    "OLLAMA_NOPRUNE:false OLLAMA_NUM_PARALLEL:0 OLLAMA_ORIGINS:[http://localhost https://localhost "
    "http://localhost:* https://localhost:* http://127.0.0.1 https://127.0.0.1 http://127.0.0.1:* "
    "https://127.0.0.1:* http://0.0.0.0 https://0.0.0.0 http://0.0.0.0:* https://0.0.0.0:* app://* file://* "
    "tauri://* vscode-webview://*] OLLAMA_SCHED_SPREAD:false ROCR_VISIBLE_DEVICES: http_proxy: https_proxy: no_proxy:]"
)


def go_duration(seconds: float) -> str:
    """A time.Duration as Go prints it: 52.1µs, 1.234567ms, 7.051234567s, 5m16.2s."""
    ns = max(1, int(seconds * 1e9))
    if ns < 1000:
        return f"{ns}ns"
    if ns < 1_000_000:
        return f"{ns / 1000:.3f}".rstrip("0").rstrip(".") + "µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.6f}".rstrip("0").rstrip(".") + "ms"
    minutes, rest = divmod(ns, 60_000_000_000)
    text = f"{rest / 1e9:.9f}".rstrip("0").rstrip(".") + "s"
    return f"{minutes}m{text}" if minutes else text


class Ollama(Unit):
    """`ollama serve`: Go slog lines, gin access lines, llama.cpp runner output on model loads."""

    unit = "ollama.service"
    description = "Ollama Service"
    failure_kinds = ("port-in-use", "permission-denied")

    def __init__(self, host: Host, rng: random.Random, start: float, restart_every: float) -> None:
        super().__init__(host, rng, start, restart_every)
        self.pid = 0
        self.gpu = f"GPU-{hexid(rng, 8)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 12)}"
        self.blob = f"sha256-{hexid(rng, 64)}"
        self.loaded_until = 0.0

    def o(self, text: str) -> Entry:
        return ("ollama", self.pid, text)

    def slog(self, level: str, source: str, text: str) -> Entry:
        ms = self.micros() // 1000
        return ("ollama", self.pid, f"time={self.stamps().rfc}.{ms:03d}Z level={level} source={source} {text}")

    def gin(self, status: int, latency: float, client: str, method: str, path: str) -> Entry:
        return ("ollama", self.pid, f"[GIN] {self.stamps().gin} | {status} | {go_duration(latency):>13} | "
                                    f"{client:>15} | {method:<7}  \"{path}\"")

    def start(self, upto: str | None = None) -> Iterator[Burst]:
        rng = self.rng
        self.pid = self.host.pid(rng)
        self.loaded_until = 0.0
        stamp = self.stamps().gin.replace(" - ", " ")
        yield self.at(rng.uniform(0.01, 0.1), [self.o(f"{stamp} routes.go:1187: INFO server config env=\"{OLLAMA_ENV}\"")])
        if upto == "config":
            return
        gin = [
            self.o("[GIN-debug] [WARNING] Creating an Engine instance with the Logger and Recovery middleware already attached."),
            self.o(""),
            self.o('[GIN-debug] [WARNING] Running in "debug" mode. Switch to "release" mode in production.'),
            self.o(" - using env:\texport GIN_MODE=release"),
            self.o(" - using code:\tgin.SetMode(gin.ReleaseMode)"),
            self.o(""),
            *[self.o(f"[GIN-debug] {method:<6} {path:<25} --> github.com/ollama/ollama/server.(*Server).{handler}-fm (5 handlers)")
              for method, path, handler in GIN_ROUTES],
        ]
        yield self.at(0.005, [
            self.slog("INFO", "images.go:432", f'msg="total blobs: {rng.randint(5, 40)}"'),
            self.slog("INFO", "images.go:439", 'msg="total unused blobs removed: 0"'),
            *gin,
            self.slog("INFO", "routes.go:1238", 'msg="Listening on 127.0.0.1:11434 (version 0.5.7)"'),
            self.slog("INFO", "routes.go:1267", 'msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v11_avx cuda_v12_avx rocm_avx]"'),
            self.slog("INFO", "gpu.go:226", 'msg="looking for compatible GPUs"'),
        ])
        yield self.at(rng.uniform(0.3, 0.8), [
            self.slog("INFO", "types.go:131", f'msg="inference compute" id={self.gpu} library=cuda variant=v12 compute=9.0 '
                                              'driver=12.8 name="NVIDIA H100 80GB HBM3" total="79.1 GiB" available="78.6 GiB"')])

    def load_model(self) -> Iterator[Burst]:
        """The first request after the keep-alive ran out loads the model into a runner again."""
        rng = self.rng
        model = f"/usr/share/ollama/.ollama/models/blobs/{self.blob}"
        port = rng.randint(33000, 45000)
        yield self.at(0.01, [
            self.slog("INFO", "sched.go:714", f'msg="new model will fit in available VRAM in single GPU, loading" model={model} '
                                              f'gpu={self.gpu} parallel=4 available=84452458496 required="21.5 GiB"'),
            self.slog("INFO", "server.go:104", 'msg="system memory" total="1007.6 GiB" free="951.1 GiB" free_swap="8.0 GiB"'),
            self.slog("INFO", "memory.go:356", 'msg="offload to cuda" layers.requested=-1 layers.model=65 layers.offload=65 '
                                               'layers.split="" memory.available="[78.6 GiB]" memory.gpu_overhead="0 B" '
                                               'memory.required.full="21.5 GiB" memory.required.partial="21.5 GiB" '
                                               'memory.required.kv="2.0 GiB" memory.required.allocations="[21.5 GiB]" '
                                               'memory.weights.total="17.5 GiB" memory.weights.repeating="16.9 GiB" '
                                               'memory.weights.nonrepeating="609.1 MiB" memory.graph.full="676.0 MiB" '
                                               'memory.graph.partial="916.1 MiB"'),
            self.slog("INFO", "server.go:376", f'msg="starting llama server" cmd="/usr/local/lib/ollama/runners/cuda_v12_avx/ollama_llama_server '
                                               f'runner --model {model} --ctx-size 8192 --batch-size 512 --n-gpu-layers 65 '
                                               f'--threads 32 --parallel 4 --port {port}"'),
            self.slog("INFO", "sched.go:449", 'msg="loaded runners" count=1'),
            self.slog("INFO", "server.go:555", 'msg="waiting for llama runner to start responding"'),
            self.slog("INFO", "server.go:589", 'msg="waiting for server to become available" status="llm server error"'),
        ])
        meta = [("general.architecture", "str", "qwen2"), ("general.type", "str", "model"),
                ("general.name", "str", "Qwen2.5 32B Instruct"), ("general.finetune", "str", "Instruct"),
                ("general.basename", "str", "Qwen2.5"), ("general.size_label", "str", "32B"),
                ("qwen2.block_count", "u32", "64"), ("qwen2.context_length", "u32", "32768"),
                ("qwen2.embedding_length", "u32", "5120"), ("qwen2.feed_forward_length", "u32", "27648"),
                ("qwen2.attention.head_count", "u32", "40"), ("qwen2.attention.head_count_kv", "u32", "8"),
                ("qwen2.rope.freq_base", "f32", "1000000.000000"), ("general.file_type", "u32", "15")]
        yield self.at(rng.uniform(0.1, 0.4), [
            self.slog("INFO", "runner.go:936", 'msg="starting go runner"'),
            self.o("ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no"),
            self.o("ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no"),
            self.o("ggml_cuda_init: found 1 CUDA devices:"),
            self.o("  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes"),
            self.slog("INFO", "runner.go:937", 'msg=system info="CUDA : ARCHS = 600,610,620,700,720,750,800,860,870,890,900 | '
                                               'USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 | SSSE3 = 1 | '
                                               'AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | LLAMAFILE = 1 | AARCH64_REPACK = 1 | '
                                               'cgo(gcc)" threads=32'),
            self.slog("INFO", ".:0", f'msg="Server listening on 127.0.0.1:{port}"'),
            self.o("llama_load_model_from_file: using device CUDA0 (NVIDIA H100 80GB HBM3) - 80568 MiB free"),
            self.o(f"llama_model_loader: loaded meta data with 34 key-value pairs and 771 tensors from {model} (version GGUF V3 (latest))"),
            self.o("llama_model_loader: Dumping metadata keys/values. Note: KV overrides do not apply in this output."),
            *[self.o(f"llama_model_loader: - kv {index:>3}: {key:>42} {kind:<16} = {value}")
              for index, (key, kind, value) in enumerate(meta)],
            self.o("llama_model_loader: - type  f32:  321 tensors"),
            self.o("llama_model_loader: - type q4_K:  385 tensors"),
            self.o("llama_model_loader: - type q6_K:   65 tensors"),
            self.o("llm_load_vocab: special tokens cache size = 22"),
            self.o("llm_load_vocab: token to piece cache size = 0.9310 MB"),
            self.o("llm_load_print_meta: format           = GGUF V3 (latest)"),
            self.o("llm_load_print_meta: arch             = qwen2"),
            self.o("llm_load_print_meta: n_ctx_train      = 32768"),
            self.o("llm_load_print_meta: n_embd           = 5120"),
            self.o("llm_load_print_meta: n_layer          = 64"),
            self.o("llm_load_print_meta: model type       = 32B"),
            self.o("llm_load_print_meta: model ftype      = Q4_K - Medium"),
            self.o("llm_load_print_meta: model params     = 32.76 B"),
            self.o("llm_load_print_meta: model size       = 18.48 GiB (4.85 BPW) "),
        ])
        yield self.at(rng.uniform(0.2, 0.6), [
            self.slog("INFO", "server.go:589", 'msg="waiting for server to become available" status="llm server loading model"'),
            self.o("llm_load_tensors: offloading 64 repeating layers to GPU"),
            self.o("llm_load_tensors: offloading output layer to GPU"),
            self.o("llm_load_tensors: offloaded 65/65 layers to GPU"),
            self.o("llm_load_tensors:   CPU_Mapped model buffer size =   417.66 MiB"),
            self.o("llm_load_tensors:        CUDA0 model buffer size = 18508.35 MiB"),
        ])
        took = rng.uniform(3, 9)
        yield self.at(took, [
            self.o("llama_new_context_with_model: n_seq_max     = 4"),
            self.o("llama_new_context_with_model: n_ctx         = 8192"),
            self.o("llama_new_context_with_model: n_ctx_per_seq = 2048"),
            self.o("llama_new_context_with_model: n_batch       = 2048"),
            self.o("llama_new_context_with_model: flash_attn    = 0"),
            self.o("llama_new_context_with_model: n_ctx_per_seq (2048) < n_ctx_train (32768) -- the full capacity of the model will not be utilized"),
            self.o("llama_kv_cache_init: kv_size = 8192, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 64, can_shift = 1"),
            self.o("llama_kv_cache_init:      CUDA0 KV buffer size =  2048.00 MiB"),
            self.o("llama_new_context_with_model: KV self size  = 2048.00 MiB, K (f16): 1024.00 MiB, V (f16): 1024.00 MiB"),
            self.o("llama_new_context_with_model:      CUDA0 compute buffer size =   696.00 MiB"),
            self.o("llama_new_context_with_model: graph nodes  = 2246"),
            self.o("llama_new_context_with_model: graph splits = 2"),
            self.slog("INFO", "server.go:594", f'msg="llama runner started in {took + 0.5:.2f} seconds"'),
        ])

    def serve(self) -> Iterator[Burst]:
        rng = self.rng
        self.t += rng.expovariate(0.2)
        method, path = OLLAMA_ROUTES[rng.randrange(len(OLLAMA_ROUTES))]
        if method == "POST" and self.t > self.loaded_until:
            self.busy = True
            yield from self.load_model()
            self.busy = False
        if method == "POST":
            self.loaded_until = self.t + 300.0
            latency = rng.uniform(0.2, 40) if path != "/api/embed" else rng.uniform(0.02, 0.3)
        else:
            latency = rng.uniform(20e-6, 2e-3)
        client = "127.0.0.1" if rng.random() < 0.6 else f"10.1.{rng.randint(0, 9)}.{rng.randint(2, 250)}"
        yield Burst(self.t, [self.gin(200, latency, client, method, path)], False)

    def fail(self, kind: str) -> Iterator[Burst]:
        rng = self.rng
        yield from self.stop()
        yield self.at(rng.uniform(2, 40), [self.started()], mark=kind)
        self.pid = self.host.pid(rng)
        if kind == "permission-denied":
            yield self.at(0.01, [
                self.o("Couldn't find '/usr/share/ollama/.ollama/id_ed25519'. Generating new private key."),
                self.o("Error: could not create directory mkdir /usr/share/ollama/.ollama: permission denied"),
            ])
        else:
            yield from self.start("config")
            yield self.at(0.003, [self.o("Error: listen tcp 127.0.0.1:11434: bind: address already in use")])
        yield self.at(0.01, self.failed_lines("exited", "1/FAILURE", "exit-code"))
        yield from self.restart_after_failure()


class TGI(Unit):
    """text-generation-launcher: Rust tracing lines of the launcher, its shard and the router."""

    unit = "text-generation-inference.service"
    description = "Hugging Face text-generation-inference"

    def __init__(self, host: Host, rng: random.Random, start: float, restart_every: float) -> None:
        super().__init__(host, rng, start, restart_every)
        self.pid = 0
        self.model = "meta-llama/Llama-3.1-8B-Instruct"

    def log(self, level: str, target: str, text: str) -> Entry:
        us = self.micros()
        return ("text-generation-launcher", self.pid, f"{self.stamps().rfc}.{us:06d}Z {level:>5} {target}: {text}")

    def start(self, upto: str | None = None) -> Iterator[Burst]:
        rng = self.rng
        self.pid = self.host.pid(rng)
        launcher = "text_generation_launcher"
        args = [f'    model_id: "{self.model}",', "    revision: None,", "    validation_workers: 2,",
                "    sharded: None,", "    num_shard: None,", "    quantize: None,", "    max_concurrent_requests: 128,",
                "    max_input_tokens: None,", "    max_total_tokens: None,", "    max_batch_prefill_tokens: None,",
                '    hostname: "0.0.0.0",', "    port: 8080,", '    huggingface_hub_cache: Some(\n        "/data",\n    ),',
                "    cuda_graphs: None,", "}"]
        arg_lines: list[str] = []
        for item in args:
            arg_lines.extend(item.split("\n"))
        yield self.at(rng.uniform(0.05, 0.3), [
            self.log("INFO", launcher, "Args {"),
            *[("text-generation-launcher", self.pid, line) for line in arg_lines],
            self.log("INFO", "hf_hub", 'Token file not found "/root/.cache/huggingface/token"'),
            self.log("INFO", launcher, "Using attention flashinfer - Prefix caching true"),
            self.log("INFO", launcher, "Default `max_batch_prefill_tokens` to 4096"),
            self.log("INFO", launcher, "Using default cuda graphs [1, 2, 4, 8, 16, 32]"),
            self.log("INFO", f"download: {launcher}", f"Starting check and download process for {self.model}"),
        ])
        yield self.at(rng.uniform(2, 4), [
            self.log("INFO", launcher, "Files are already present on the host. Skipping download."),
            self.log("INFO", f"download: {launcher}", f"Successfully downloaded weights for {self.model}"),
            self.log("INFO", f"shard-manager: {launcher}", "Starting shard rank=0"),
        ])
        yield self.at(rng.uniform(3, 5), [
            self.log("INFO", launcher, "Using prefix caching = True"),
            self.log("INFO", launcher, "Using Attention = flashinfer"),
        ])
        yield self.at(rng.uniform(5, 7), [self.log("INFO", f"shard-manager: {launcher}", "Waiting for shard to be ready... rank=0")])
        took = rng.uniform(10, 20)
        yield self.at(took - 10, [
            self.log("INFO", launcher, "Server started at unix:///tmp/text-generation-server-0"),
            self.log("INFO", f"shard-manager: {launcher}", f"Shard ready in {go_duration(took)} rank=0"),
            self.log("INFO", launcher, "Starting Webserver"),
            self.log("INFO", "text_generation_router_v3", "backends/v3/src/lib.rs:125: Warming up model"),
        ])
        yield self.at(rng.uniform(2, 5), [
            self.log("INFO", launcher, "Cuda Graphs are enabled for sizes [32, 16, 8, 4, 2, 1]"),
            self.log("INFO", "text_generation_router_v3", "backends/v3/src/lib.rs:137: Setting max batch total tokens to 122880"),
            self.log("WARN", "text_generation_router_v3::backend", "backends/v3/src/backend.rs:39: Model supports prefill "
                     "chunking. `waiting_served_ratio` and `max_waiting_tokens` are ignored."),
            self.log("INFO", "text_generation_router_v3", "backends/v3/src/lib.rs:166: Using backend V3"),
            self.log("INFO", "text_generation_router::server", "router/src/server.rs:1873: Using config Some(Llama)"),
            self.log("INFO", "text_generation_router::server", "router/src/server.rs:2363: Connected"),
        ])

    def serve(self) -> Iterator[Burst]:
        rng = self.rng
        self.t += rng.expovariate(0.4)
        inference = rng.uniform(0.05, 6)
        tokens = rng.randint(5, 400)
        span = pick(rng, ("chat_completions", "chat_completions", "generate", "generate_stream"))
        text = (f'{span}{{total_time="{go_duration(inference + 0.001)}" validation_time="{go_duration(rng.uniform(1e-4, 8e-4))}" '
                f'queue_time="{go_duration(rng.uniform(2e-5, 5e-3))}" inference_time="{go_duration(inference)}" '
                f'time_per_token="{go_duration(inference / tokens)}" seed="None"}}')
        yield Burst(self.t, [self.log("INFO", f"{text}: text_generation_router::server", "router/src/server.rs:637: Success")], False)

    def goodbye(self) -> list[Entry]:
        launcher = "text_generation_launcher"
        return [
            self.log("INFO", launcher, "Terminating webserver"),
            self.log("INFO", launcher, "Waiting for webserver to gracefully shutdown"),
            self.log("INFO", launcher, "webserver terminated"),
            self.log("INFO", launcher, "Shutting down shards"),
            self.log("INFO", f"shard-manager: {launcher}", "Terminating shard rank=0"),
            self.log("INFO", f"shard-manager: {launcher}", "Waiting for shard to gracefully shutdown rank=0"),
            self.log("INFO", f"shard-manager: {launcher}", "shard terminated rank=0"),
        ]


class Background(Unit):
    """The rest of the host: cron, timers, ssh sessions, the firewall. Never busy, never fails."""

    unit = "-"

    def __init__(self, host: Host, rng: random.Random, start: float) -> None:
        super().__init__(host, rng, start, 1e12)
        self.session = rng.randint(20, 400)
        self.logind = 812

    def life(self) -> Iterator[Burst]:
        self.busy = False
        while True:
            yield from self.serve()

    def timer(self, name: str, description: str, output: list[Entry]) -> Iterator[Burst]:
        yield self.at(0.0, [self.sd(f"Starting {name} - {description}...")])
        if output:
            yield self.at(self.rng.uniform(0.01, 0.5), output)
        yield self.at(self.rng.uniform(0.01, 2), [self.sd(f"{name}: Deactivated successfully."),
                                                   self.sd(f"Finished {name} - {description}.")])

    def serve(self) -> Iterator[Burst]:
        rng = self.rng
        self.t += rng.expovariate(1 / 25.0)
        roll = rng.random()
        if roll < 0.35:
            pid = self.host.pid(rng)
            yield self.at(0.0, [
                ("CRON", pid, "pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)"),
                ("CRON", pid + 1, "(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)"),
            ])
            yield self.at(rng.uniform(0.05, 1), [("CRON", pid, "pam_unix(cron:session): session closed for user root")])
        elif roll < 0.55:
            yield from self.timer("sysstat-collect.service", "system activity accounting tool", [])
        elif roll < 0.8:
            src = f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
            mac = ":".join(f"{rng.randrange(256):02x}" for _ in range(14))
            yield self.at(0.0, [("kernel", None,
                                 f"[UFW BLOCK] IN=eth0 OUT= MAC={mac} SRC={src} DST=10.1.2.7 LEN=44 TOS=0x00 PREC=0x00 "
                                 f"TTL={rng.randint(30, 250)} ID={rng.randint(1, 65535)} PROTO=TCP SPT={rng.randint(1024, 65535)} "
                                 f"DPT={pick(rng, ('22', '23', '3389', '8080', '5900', '445'))} WINDOW=1024 RES=0x00 SYN URGP=0")])
        elif roll < 0.9:
            yield from self.ssh_session()
        elif roll < 0.95:
            yield from self.timer("apt-daily.service", "Daily apt download activities", [])
        elif roll < 0.98:
            yield from self.timer("logrotate.service", "Rotate log files", [])
        else:
            yield from self.timer("fstrim.service", "Discard unused blocks on filesystems from /etc/fstab", [
                ("fstrim", self.host.pid(rng), f"/: {rng.uniform(10, 900):.1f} GiB ({rng.randint(10**10, 10**12)} bytes) trimmed on /dev/nvme0n1p2")])

    def ssh_session(self) -> Iterator[Burst]:
        rng = self.rng
        self.session += 1
        pid = self.host.pid(rng)
        user = pick(rng, ("ubuntu", "ops", "mlinfra"))
        uid = {"ubuntu": 1000, "ops": 1001, "mlinfra": 1002}[user]
        key = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(43))
        session = self.session
        yield self.at(0.0, [
            ("sshd", pid, f"Accepted publickey for {user} from 10.1.0.{rng.randint(2, 250)} port {rng.randint(40000, 65000)} ssh2: ED25519 SHA256:{key}"),
            ("sshd", pid, f"pam_unix(sshd:session): session opened for user {user}(uid={uid}) by (uid=0)"),
            ("systemd-logind", self.logind, f"New session {session} of user {user}."),
            self.sd(f"Started session-{session}.scope - Session {session} of User {user}."),
        ])
        yield self.at(rng.uniform(5, 900), [
            ("sshd", pid, f"Received disconnect from 10.1.0.{rng.randint(2, 250)} port {rng.randint(40000, 65000)}:11: disconnected by user"),
            ("sshd", pid, f"pam_unix(sshd:session): session closed for user {user}"),
            self.sd(f"session-{session}.scope: Deactivated successfully."),
            ("systemd-logind", self.logind, f"Session {session} logged out. Waiting for processes to exit."),
            ("systemd-logind", self.logind, f"Removed session {session}."),
        ])
