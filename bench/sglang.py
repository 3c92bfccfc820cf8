"""Simulated SGLang units: TP ranks as separate PIDs, NCCL set-up, JIT builds that succeed,
FlashInfer's SM 12.x warning on the Blackwell unit, serving, and injected failures."""

from __future__ import annotations

import random
from typing import Iterator

from bench.host import ROUTES, Burst, Entry, Host, Unit, hexid, ip, pick
from bench.tracebacks import (
    interleave,
    kernel_oom_kill,
    nccl_watchdog,
    sglang_arch_refused,
    sglang_cuda_oom,
    sglang_header_missing,
    sglang_module_missing,
    sglang_nvcc_not_found,
)


def pynvml_warning(site: str) -> list[str]:
    return [
        f"{site}/torch/cuda/__init__.py:63: FutureWarning: The pynvml package is deprecated. Please install "
        "nvidia-ml-py instead. If you did not install pynvml directly, please report this to the maintainers "
        "of the package that installed pynvml for you.",
        "  import pynvml  # type: ignore[import]",
    ]


def nccl_info(host: str, pid: int, rank: int, ranks: int, comm: str, commid: str, rng: random.Random) -> list[str]:
    """NCCL_DEBUG=INFO output of one rank during communicator set-up (NCCL 2.21)."""
    p = f"{host}:{pid}:{pid} [{rank}] NCCL INFO"
    t = f"{host}:{pid}:{pid + rng.randint(60, 90)} [{rank}] NCCL INFO"
    bus = f"{0x18 + 0x10 * rank:x}000"
    lines = [
        f"{p} Bootstrap : Using eth0:10.1.2.7<0>",
        f"{p} NET/Plugin: No plugin found (libnccl-net.so)",
        f"{p} NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so",
        f"{p} NET/Plugin: Using internal network plugin.",
        f"{p} cudaDriverVersion 12080",
    ]
    if rank == 0:
        lines.append("NCCL version 2.21.5+cuda12.4")
    lines += [
        f"{t} Failed to open libibverbs.so[.1]",
        f"{t} NET/Socket : Using [0]eth0:10.1.2.7<0>",
        f"{t} Using non-device net plugin version 0",
        f"{t} Using network Socket",
        f"{t} ncclCommInitRank comm {comm} rank {rank} nranks {ranks} cudaDev {rank} nvmlDev {rank} busId {bus} commId {commid} - Init START",
        f"{t} NVLS multicast support is not available on dev {rank}",
        f"{t} comm {comm} rank {rank} nRanks {ranks} nNodes 1 localRanks {ranks} localRank {rank} MNNVL 0",
    ]
    order = " ".join(f"{r:>3}" for r in range(ranks))
    if rank == 0:
        lines += [f"{t} Channel {c:02d}/24 : {order}" for c in range(4)]
    lines += [
        f"{t} Trees [0] {rank + 1 if rank + 1 < ranks else -1}/-1/-1->{rank}->{rank - 1} [1] {rank + 1 if rank + 1 < ranks else -1}/-1/-1->{rank}->{rank - 1}",
        f"{t} P2P Chunksize set to 524288",
        f"{t} Channel 00/0 : {rank}[{rank}] -> {(rank + 1) % ranks}[{(rank + 1) % ranks}] via P2P/CUMEM/read",
        f"{t} Channel 01/0 : {rank}[{rank}] -> {(rank + 1) % ranks}[{(rank + 1) % ranks}] via P2P/CUMEM/read",
        f"{t} Connected all rings",
        f"{t} Connected all trees",
        f"{t} threadThresholds 8/8/64 | {8 * ranks}/8/64 | 512 | 512",
        f"{t} 24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
        f"{t} TUNER/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-tuner.so",
        f"{t} TUNER/Plugin: Using internal tuner plugin.",
        f"{t} ncclCommInitRank comm {comm} rank {rank} nranks {ranks} cudaDev {rank} nvmlDev {rank} busId {bus} commId {commid} - Init COMPLETE",
    ]
    return lines


class SGLang(Unit):
    """`python3 -m sglang.launch_server` with TP ranks as separate processes (PIDs)."""

    failure_kinds = ("nvcc-not-found", "header-missing", "toolkit-too-old", "out-of-memory", "nccl-watchdog",
                     "module-missing", "oom-kill")

    def __init__(self, host: Host, rng: random.Random, start: float, restart_every: float, *, unit: str,
                 description: str, ident: str, tp: int, model: str, port: int, blackwell: bool,
                 nccl_debug: bool, arch_class: str, shards: int) -> None:
        super().__init__(host, rng, start, restart_every)
        self.unit = unit
        self.description = description
        self.ident = ident
        self.tp = tp
        self.model = model
        self.port = port
        self.blackwell = blackwell
        self.nccl_debug = nccl_debug
        self.arch_class = arch_class
        self.shards = shards
        self.venv = f"/opt/{unit.split('.')[0]}/.venv"
        self.site = f"{self.venv}/lib/python3.12/site-packages"
        # The system toolkit that JIT builds find. On the Blackwell unit it is 12.8: FlashInfer warns
        # that SM 12.x wants 12.9, uses its AOT kernels, and the server comes up anyway.
        self.toolkit = "/usr/local/cuda-12.8"
        self.main = 0
        self.ranks: list[int] = []
        self.next_metrics = 0.0
        self.next_health = 0.0
        self.seq = 1000

    # -- helpers ------------------------------------------------------------------------------

    def m(self, text: str) -> Entry:
        return (self.ident, self.main, f"[{self.stamps().dash}] {text}")

    def r(self, rank: int, text: str) -> Entry:
        return (self.ident, self.ranks[rank], f"[{self.stamps().dash} TP{rank}] {text}")

    def all_ranks(self, text: str) -> list[Entry]:
        order = list(range(self.tp))
        if self.rng.random() < 0.5:
            self.rng.shuffle(order)
        return [self.r(rank, text) for rank in order]

    def py_log(self, pid: int, level: str, logger: str, text: str) -> Entry:
        ms = self.micros() // 1000
        return (self.ident, pid, f"{self.stamps().dash},{ms:03d} - {level} - {logger}: {text}")

    # -- start-up ------------------------------------------------------------------------------

    def start(self, upto: str | None = None, warn: bool = True) -> Iterator[Burst]:
        rng = self.rng
        self.main = self.host.pid(rng)
        self.ranks = [self.host.pid(rng) for _ in range(self.tp)]
        if upto == "import":
            return
        args = (f"server_args=ServerArgs(model_path='{self.model}', tokenizer_path='{self.model}', tokenizer_mode='auto', "
                f"skip_tokenizer_init=False, load_format='auto', trust_remote_code=True, dtype='auto', kv_cache_dtype='auto', "
                f"quantization=None, context_length=131072, device='cuda', served_model_name='{self.model.rsplit('/', 1)[1].lower()}', "
                f"chat_template=None, is_embedding=False, host='0.0.0.0', port={self.port}, mem_fraction_static=0.88, "
                f"max_running_requests=64, tp_size={self.tp}, stream_interval=1, random_seed=1234, log_level='info', "
                f"attention_backend='flashinfer', sampling_backend='flashinfer', enable_metrics=True)")
        yield self.at(rng.uniform(3, 5), [(self.ident, self.main, line) for line in pynvml_warning(self.site)])
        yield self.at(rng.uniform(0.2, 1), [self.m(args)])
        yield self.at(1.0, [self.m("Using default HuggingFace chat template with detected content format: string")])
        yield self.at(rng.uniform(4, 7), self.all_ranks("Init torch distributed begin."))
        if not self.blackwell:
            # This unit sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; c10 says once per
            # rank that the platform cannot do it, and carries on.
            yield self.at(rng.uniform(0.1, 0.5), [
                (self.ident, pid, f"[W{self.stamps().glog}.{self.micros() * 1000 + rng.randrange(1000):09d} "
                                  "CUDAAllocatorConfig.h:28] Warning: expandable_segments not supported on this platform "
                                  "(function operator())") for pid in self.ranks])
        if self.nccl_debug:
            comm = f"0x{rng.getrandbits(44) | (0x55 << 40):x}"
            commid = f"0x{hexid(rng, 16)}"
            streams = [[(pid, line) for line in nccl_info(self.host.name, pid, rank, self.tp, comm, commid, rng)]
                       for rank, pid in enumerate(self.ranks)]
            merged = interleave(rng, *streams)
            for start in range(0, len(merged), 16):
                yield self.at(rng.uniform(0, 0.4), [(self.ident, pid, line) for pid, line in merged[start:start + 16]])
        yield self.at(rng.uniform(1, 3), self.all_ranks(f"sglang is using nccl=={'2.27.3' if self.blackwell else '2.21.5'}"))
        yield self.at(rng.uniform(1, 3), self.all_ranks("Init torch distributed ends. mem usage=0.90 GB"))
        yield self.at(0.1, self.all_ranks("Load weight begin. avail mem=93.10 GB" if self.blackwell else "Load weight begin. avail mem=78.54 GB"))
        if upto == "weights":
            yield self.at(rng.uniform(20, 60), [(self.ident, self.ranks[0],
                          f"Loading safetensors checkpoint shards:  {25:>3}% Completed | {self.shards // 4}/{self.shards} [00:40<02:00,  2.50s/it]")])
            return
        if upto == "model":
            return
        per = rng.uniform(1.5, 6.0)
        steps = 8
        for step in range(steps + 1):
            done = self.shards * step // steps
            elapsed = per * done
            left = per * (self.shards - done)
            text = (f"Loading safetensors checkpoint shards: {100 * done // self.shards:>3}% Completed | "
                    f"{done}/{self.shards} [{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}<{int(left) // 60:02d}:{int(left) % 60:02d},  {per:.2f}s/it]")
            yield self.at(per * self.shards / steps if step < steps else 2.0, [(self.ident, self.ranks[0], text)])
        yield self.at(2.0, self.all_ranks(f"Load weight end. type={self.arch_class}, dtype=torch.bfloat16, avail mem=25.31 GB, mem usage=67.79 GB."))
        if self.blackwell:
            kv = "KV Cache is allocated. #tokens: 412345, KV size: 21.02 GB"
        else:
            kv = "KV Cache is allocated. #tokens: 1203451, K size: 27.54 GB, V size: 27.54 GB"
        yield self.at(2.0, self.all_ranks(kv))
        yield self.at(0.1, [self.r(0, "Memory pool end. avail mem=3.11 GB")])
        if self.blackwell and warn:
            # FlashInfer's harmless warning: the AOT kernels are used, the server comes up anyway.
            order = list(range(self.tp))
            rng.shuffle(order)
            yield self.at(rng.uniform(0.5, 1.5), [
                self.py_log(self.ranks[rank], "WARNING", "flashinfer.jit",
                            "Failed to get device capability: SM 12.x requires CUDA >= 12.9.") for rank in order])
        began = self.t
        yield self.at(rng.uniform(0.5, 2), self.all_ranks("Capture cuda graph begin. This can take up to several minutes. avail mem=2.95 GB"))
        if upto == "graph":
            return
        yield from self.jit_build()
        self.t += rng.uniform(10, 60)
        elapsed = self.t - began
        yield self.at(2.0, self.all_ranks(f"Capture cuda graph end. Time elapsed: {elapsed:.2f} s. mem usage=1.21 GB. avail mem=1.74 GB."))
        yield self.at(1.0, [self.r(0, "max_total_num_tokens=412345, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                                      "max_running_requests=64, context_len=131072, available_gpu_mem=1.74 GB")])
        yield self.at(1.0, [
            self.m(f"INFO:     Started server process [{self.main}]"),
            self.m("INFO:     Waiting for application startup."),
            self.m("INFO:     Application startup complete."),
            self.m(f"INFO:     Uvicorn running on http://0.0.0.0:{self.port} (Press CTRL+C to quit)"),
        ])
        yield self.at(1.0, [self.m('INFO:     127.0.0.1:53218 - "GET /get_model_info HTTP/1.1" 200 OK')])
        yield self.at(2.0, [self.r(0, "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ")])
        yield self.at(3.0, [self.m('INFO:     127.0.0.1:53222 - "POST /generate HTTP/1.1" 200 OK'),
                            self.m("The server is fired up and ready to roll!")])

    def jit_build(self) -> Iterator[Burst]:
        """A JIT extension build that succeeds (torch cpp_extension with verbose output), on TP0."""
        rng = self.rng
        arch = "sm120" if self.blackwell else "sm90"
        gencode = "compute_120a,code=sm_120a" if self.blackwell else "compute_90a,code=sm_90a"
        module = f"sglang_jit_fused_moe_gate_{arch}"
        root = "/root/.cache/torch_extensions/py312_cu128"
        pid = self.ranks[0]
        build = [
            f"Using {root} as PyTorch extensions root...",
            f"Emitting ninja build file {root}/{module}/build.ninja...",
            f"Building extension module {module}...",
            "Allowing ninja to set a default number of workers... (overridable by setting the environment variable MAX_JOBS=N)",
            f"[1/3] {self.toolkit}/bin/nvcc --generate-dependencies-with-compile --dependency-output cuda.cuda.o.d "
            f"-DTORCH_EXTENSION_NAME={module} -DTORCH_API_INCLUDE_EXTENSION_H -isystem {self.site}/torch/include "
            f"-isystem {self.toolkit}/include -D__CUDA_NO_HALF_OPERATORS__ --expt-relaxed-constexpr "
            f"-gencode=arch={gencode} --compiler-options '-fPIC' -O3 -std=c++17 -c {root}/{module}/cuda.cu -o cuda.cuda.o ",
        ]
        if rng.random() < 0.5:
            build.append(f"{self.site}/sglang/jit_kernel/include/moe_gate.cuh(87): warning #177-D: variable \"lane\" was declared but never referenced")
            build.append("")
            build.append("Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"")
            build.append("")
        build += [
            f"[2/3] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME={module} -DTORCH_API_INCLUDE_EXTENSION_H "
            f"-isystem {self.site}/torch/include -isystem {self.toolkit}/include -fPIC -std=c++17 -O3 -c {root}/{module}/main.cpp -o main.o ",
            f"[3/3] c++ main.o cuda.cuda.o -shared -L{self.site}/torch/lib -lc10 -lc10_cuda -ltorch_cpu -ltorch_cuda "
            f"-ltorch -ltorch_python -L{self.toolkit}/lib64 -lcudart -o {module}.so",
            f"Loading extension module {module}...",
        ]
        yield self.at(rng.uniform(20, 60), [(self.ident, pid, line) for line in build[:5]])  # nvcc runs
        yield self.at(rng.uniform(0.1, 1), [(self.ident, pid, line) for line in build[5:]])
        others = [(self.ident, self.ranks[rank], line) for rank in range(1, self.tp) for line in (
            f"Using {root} as PyTorch extensions root...",
            f"No modifications detected for re-loaded extension module {module}, skipping build step...",
            f"Loading extension module {module}...")]
        if others:
            yield self.at(rng.uniform(0.1, 1), others)
        yield self.at(rng.uniform(0.1, 1), [self.py_log(pid, "INFO", "flashinfer.jit", "Loading JIT ops: sampling")])
        yield self.at(rng.uniform(1, 4), [self.py_log(pid, "INFO", "flashinfer.jit", "Finished loading JIT ops: sampling")])

    # -- serving -------------------------------------------------------------------------------

    def serve(self) -> Iterator[Burst]:
        rng = self.rng
        delay = rng.expovariate(0.6)
        self.t += delay
        entries: list[Entry] = []
        if self.t >= self.next_health:
            entries.append(self.m('INFO:     127.0.0.1:' f'{rng.randint(40000, 60000)} - "GET /health HTTP/1.1" 200 OK'))
            self.next_health = self.t + 5.0
        if self.t >= self.next_metrics:
            entries.append(self.m(f'INFO:     10.1.0.4:{rng.randint(40000, 60000)} - "GET /metrics HTTP/1.1" 200 OK'))
            self.next_metrics = self.t + 15.0
        roll = rng.random()
        running = rng.randint(1, 24)
        if roll < 0.35:
            new = rng.randint(12, 6000)
            entries.append(self.r(0, f"Prefill batch. #new-seq: 1, #new-token: {new}, #cached-token: {rng.randint(0, new)}, "
                                     f"token usage: {rng.random() * 0.3:.2f}, #running-req: {running}, #queue-req: 0, "))
        elif roll < 0.8:
            entries.append(self.r(0, f"Decode batch. #running-req: {running}, #token: {rng.randint(500, 90000)}, "
                                     f"token usage: {rng.random() * 0.3:.2f}, cuda graph: True, "
                                     f"gen throughput (token/s): {rng.uniform(40, 900):.2f}, #queue-req: 0, "))
        else:
            entries.append(self.m(f"INFO:     {ip(rng)} - {pick(rng, ROUTES)}"))
        yield Burst(self.t, entries, False)

    # -- failures ------------------------------------------------------------------------------

    def fail(self, kind: str) -> Iterator[Burst]:
        rng = self.rng
        if kind == "nccl-watchdog":
            yield from self.nccl_failure(kind)
            yield from self.restart_after_failure()
            return
        yield from self.stop()
        yield self.at(rng.uniform(2, 40), [self.started()], mark=kind)
        upto = {"module-missing": "import", "oom-kill": "weights", "out-of-memory": "model"}.get(kind, "graph")
        # With CUDA_HOME=/dev/null (nvcc-not-found) or the partial CUDA 13.0 toolkit (header-missing)
        # FlashInfer's version check passes, so its SM 12.x warning is not printed in those runs.
        yield from self.start(upto, warn=kind not in ("nvcc-not-found", "header-missing"))
        if kind == "module-missing":
            lines = sglang_module_missing(self.site, self.ident)
            yield self.at(rng.uniform(2, 5), [(self.ident, self.main, line) for line in lines])
            yield self.at(rng.uniform(0.05, 0.5), self.failed_lines("exited", "1/FAILURE", "exit-code"))
        elif kind == "oom-kill":
            victim = self.ranks[rng.randrange(self.tp)]
            kernel = [("kernel", None, line) for line in kernel_oom_kill(self.ident, victim, self.unit, rng)]
            yield self.at(0.05, kernel)
            yield self.at(0.5, [self.sd(f"{self.unit}: A process of this unit has been killed by the OOM killer.")])
            yield self.at(0.5, [self.m("Received sigquit from a child process. It usually means the child failed.")])
            killed = [self.sd(f"{self.unit}: Killing process {pid} ({self.ident}) with signal SIGKILL.")
                      for pid in self.ranks if pid != victim]
            yield self.at(1.0, [self.sd(f"{self.unit}: Main process exited, code=killed, status=9/KILL"), *killed,
                                self.sd(f"{self.unit}: Failed with result 'oom-kill'."), self.consumed()])
        else:
            if kind == "nvcc-not-found":
                module = f"sglang_jit_fused_moe_gate_{'sm120' if self.blackwell else 'sm90'}"
                body = sglang_nvcc_not_found(self.site, module, rng)
            elif kind == "header-missing":
                body = sglang_header_missing(self.site, "/usr/local/cuda-13.0")
            elif kind == "toolkit-too-old":
                body = sglang_arch_refused(self.site)
            else:
                body = sglang_cuda_oom(self.site, 0, rng)
            head = f"[{self.stamps().dash} TP{{rank}}] Scheduler hit an exception: {body[0]}"
            streams = []
            for rank in range(min(self.tp, 2)):
                lines = [head.format(rank=rank), *body[1:]]
                streams.append([(self.ranks[rank], line) for line in lines])
            merged = interleave(rng, *streams)
            yield self.at(rng.uniform(1, 10), [(self.ident, pid, line) for pid, line in merged])
            yield self.at(1.0, [self.m("Received sigquit from a child process. It usually means the child failed.")])
            killed = [self.sd(f"{self.unit}: Killing process {pid} ({self.ident}) with signal SIGKILL.") for pid in self.ranks[1:]]
            yield self.at(1.0, [self.sd(f"{self.unit}: Main process exited, code=killed, status=9/KILL"), *killed,
                                self.sd(f"{self.unit}: Failed with result 'signal'."), self.consumed()])
        yield from self.restart_after_failure()

    def nccl_failure(self, kind: str) -> Iterator[Burst]:
        rng = self.rng
        self.seq += rng.randint(1000, 90000)
        rank = rng.randrange(self.tp)
        stamp = self.stamps().glog
        lines = nccl_watchdog(rank, self.seq, stamp, self.site, rng)
        yield self.at(rng.uniform(1, 5), [(self.ident, self.ranks[rank], line) for line in lines], mark=kind)
        yield self.at(1.0, [self.m("Received sigquit from a child process. It usually means the child failed.")])
        killed = [self.sd(f"{self.unit}: Killing process {pid} ({self.ident}) with signal SIGKILL.")
                  for index, pid in enumerate(self.ranks) if index != rank]
        yield self.at(1.0, [self.sd(f"{self.unit}: Main process exited, code=killed, status=9/KILL"), *killed,
                            self.sd(f"{self.unit}: Failed with result 'signal'."), self.consumed()])
