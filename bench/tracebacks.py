"""The text of injected failures: tracebacks and build output as the software prints them.

Each function returns the message lines (no journal prefix) of one process. Wordings follow
what PyTorch, FlashInfer, SGLang, vLLM, NCCL, the kernel and the shell print; paths and
numbers are the simulated host's.
"""

from __future__ import annotations

import random

TORCH_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {want:.2f} GiB. GPU {gpu} has a total "
    "capacity of {total:.2f} GiB of which {free:.2f} MiB is free. Including non-PyTorch memory, this "
    "process has {used:.2f} GiB memory in use. Of the allocated memory {alloc:.2f} GiB is allocated by "
    "PyTorch, and {reserved:.2f} MiB is reserved by PyTorch but unallocated. If reserved but unallocated "
    "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
    "See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
)


def frame(path: str, line: int, func: str, code: str, caret: int = 0) -> list[str]:
    """One frame; with `caret`, Python 3.11+'s markers under the call, which starts after
    `return ` or an assignment's `= `."""
    lines = [f'  File "{path}", line {line}, in {func}', f"    {code}"]
    if caret:
        start = len(code) - len(code.lstrip())
        if code.lstrip().startswith("return "):
            start += len("return ")
        elif " = " in code:
            start = code.index(" = ") + 3
        lines.append(" " * (4 + start) + "^" * caret)
    return lines


def interleave(rng: random.Random, *streams: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Merge per-process line lists at random, keeping each one's order (ranks print at once)."""
    pending = [list(stream) for stream in streams if stream]
    merged: list[tuple[int, str]] = []
    positions = [0] * len(pending)
    while pending:
        index = rng.randrange(len(pending))
        merged.append(pending[index][positions[index]])
        positions[index] += 1
        if positions[index] == len(pending[index]):
            del pending[index]
            del positions[index]
    return merged


# -- SGLang scheduler (TP rank) failures --------------------------------------------------------


def sglang_head(site: str) -> list[str]:
    return [
        *frame(f"{site}/sglang/srt/managers/scheduler.py", 2890, "run_scheduler_process",
               "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)", 80),
        *frame(f"{site}/sglang/srt/managers/scheduler.py", 338, "__init__", "self.tp_worker = TpWorkerClass(", 14),
        *frame(f"{site}/sglang/srt/managers/tp_worker.py", 81, "__init__", "self.model_runner = ModelRunner(", 12),
        *frame(f"{site}/sglang/srt/model_executor/model_runner.py", 267, "__init__", "self.initialize(min_per_gpu_memory)"),
    ]


def sglang_nvcc_not_found(site: str, module: str, rng: random.Random) -> list[str]:
    """SGLang's jit_kernel build with CUDA_HOME=/dev/null (load_jit -> load_inline)."""
    torch = f"{site}/torch/utils/cpp_extension.py"
    cache = f"/root/.cache/torch_extensions/py312_cu128/{module}"
    nvcc = (f"/dev/null/bin/nvcc --generate-dependencies-with-compile --dependency-output cuda.cuda.o.d "
            f"-DTORCH_EXTENSION_NAME={module} -DTORCH_API_INCLUDE_EXTENSION_H -isystem {site}/torch/include "
            f"-isystem /dev/null/include -D__CUDA_NO_HALF_OPERATORS__ --expt-relaxed-constexpr "
            f"-gencode=arch=compute_120a,code=sm_120a --compiler-options '-fPIC' -O3 -std=c++17 "
            f"-c {cache}/cuda.cu -o cuda.cuda.o ")
    return [
        "Traceback (most recent call last):",
        *frame(torch, 2595, "_run_ninja_build", "subprocess.run("),
        *frame("/usr/lib/python3.12/subprocess.py", 571, "run", "raise CalledProcessError(retcode, process.args,"),
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        *sglang_head(site),
        *frame(f"{site}/sglang/srt/model_executor/cuda_graph_runner.py", 389, "capture",
               ") = self.capture_one_batch_size(bs, forward)", 40),
        *frame(f"{site}/sglang/srt/layers/moe/topk.py", 611, "biased_grouped_topk_gpu", "return fused_moe_gate(", 15),
        *frame(f"{site}/sglang/jit_kernel/moe_gate.py", 44, "fused_moe_gate", "module = _jit_moe_gate_module()", 22),
        *frame(f"{site}/sglang/jit_kernel/moe_gate.py", 31, "_jit_moe_gate_module", "return load_jit(", 9),
        *frame(f"{site}/sglang/jit_kernel/utils.py", 208, "load_jit", "return load_inline(", 12),
        *frame(torch, 2163, "load_inline", "return _jit_compile(", 13),
        *frame(torch, 2239, "_jit_compile", "_write_ninja_file_and_build_library("),
        *frame(torch, 2392, "_write_ninja_file_and_build_library", "_run_ninja_build("),
        *frame(torch, 2612, "_run_ninja_build", "raise RuntimeError(message) from e"),
        f"RuntimeError: Error building extension '{module}': [1/3] {nvcc}",
        "FAILED: cuda.cuda.o ",
        nvcc,
        "/bin/sh: 1: /dev/null/bin/nvcc: not found",
        f"[2/3] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME={module} -DTORCH_API_INCLUDE_EXTENSION_H "
        f"-isystem {site}/torch/include -isystem /dev/null/include -fPIC -std=c++17 -O3 -c {cache}/main.cpp -o main.o ",
        "ninja: build stopped: subcommand failed.",
        "",
    ]


def sglang_header_missing(site: str, toolkit: str) -> list[str]:
    """FlashInfer's JIT with a partial toolkit: curand.h is missing."""
    ops = "/root/.cache/flashinfer/0.6.8.post1/120a/cached_ops/sampling"
    nvcc = (f"{toolkit}/bin/nvcc --generate-dependencies-with-compile --dependency-output sampling.cuda.o.d "
            f"-DTORCH_EXTENSION_NAME=sampling -DTORCH_API_INCLUDE_EXTENSION_H -DPy_LIMITED_API=0x03090000 "
            f"-D_GLIBCXX_USE_CXX11_ABI=1 -isystem /usr/include/python3.12 -isystem {toolkit}/include "
            f"-isystem {toolkit}/include/cccl -isystem {site}/flashinfer/data/include "
            f"-gencode=arch=compute_120a,code=sm_120a -O3 -std=c++17 -c {site}/flashinfer/data/csrc/sampling.cu "
            f"-o {ops}/sampling.cuda.o")
    core = f"{site}/flashinfer/jit/core.py"
    return [
        "Traceback (most recent call last):",
        *frame(f"{site}/flashinfer/jit/cpp_ext.py", 332, "run_ninja", "subprocess.run("),
        *frame("/usr/lib/python3.12/subprocess.py", 571, "run", "raise CalledProcessError(retcode, process.args,"),
        f"subprocess.CalledProcessError: Command '['ninja', '-v', '-C', '{ops}', '-f', '{ops}/build.ninja']' "
        "returned non-zero exit status 1.",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        *sglang_head(site),
        *frame(f"{site}/sglang/srt/layers/sampler.py", 142, "forward",
               "batch_next_token_ids = top_k_top_p_sampling_from_probs(", 33),
        *frame(f"{site}/flashinfer/sampling.py", 68, "get_sampling_module",
               "module = gen_sampling_module().build_and_load()", 39),
        *frame(core, 318, "build_and_load", "self.build(verbose, need_lock=False)"),
        *frame(core, 300, "build", "run_ninja(jit_env.FLASHINFER_JIT_DIR, self.ninja_path, verbose)"),
        *frame(f"{site}/flashinfer/jit/cpp_ext.py", 344, "run_ninja", "raise RuntimeError(msg) from e"),
        "RuntimeError: Ninja build failed. Ninja output:",
        f"ninja: Entering directory `{ops}'",
        f"[1/4] {nvcc}",
        f"FAILED: [code=1] {ops}/sampling.cuda.o ",
        nvcc,
        f"In file included from {site}/flashinfer/data/csrc/sampling.cu:17:",
        f"{site}/flashinfer/data/include/flashinfer/sampling.cuh:19:10: fatal error: curand.h: No such file or directory",
        "   19 | #include <curand.h>",
        "      |          ^~~~~~~~~~",
        "compilation terminated.",
        f"[2/4] c++ -MMD -MF {ops}/flashinfer_sampling_binding.o.d -DTORCH_EXTENSION_NAME=sampling "
        f"-isystem {toolkit}/include -fPIC -O3 -std=c++17 -c {site}/flashinfer/data/csrc/flashinfer_sampling_binding.cu "
        f"-o {ops}/flashinfer_sampling_binding.o",
        "ninja: build stopped: subcommand failed.",
        "",
    ]


def sglang_arch_refused(site: str) -> list[str]:
    """FlashInfer dropped sm_120 (toolkit too old), then refuses the GPU."""
    return [
        "Traceback (most recent call last):",
        *sglang_head(site),
        *frame(f"{site}/sglang/srt/model_executor/model_runner.py", 412, "initialize", "self.init_device_graphs()"),
        *frame(f"{site}/sglang/srt/layers/sampler.py", 142, "forward",
               "batch_next_token_ids = top_k_top_p_sampling_from_probs(", 33),
        *frame(f"{site}/flashinfer/sampling.py", 68, "get_sampling_module",
               "module = gen_sampling_module().build_and_load()", 21),
        *frame(f"{site}/flashinfer/jit/core.py", 413, "gen_jit_spec", "check_cuda_arch()"),
        *frame(f"{site}/flashinfer/jit/core.py", 108, "check_cuda_arch",
               'raise RuntimeError("FlashInfer requires GPUs with sm75 or higher")'),
        "RuntimeError: FlashInfer requires GPUs with sm75 or higher",
        "",
    ]


def sglang_cuda_oom(site: str, gpu: int, rng: random.Random) -> list[str]:
    """Out of GPU memory while the model is built (weights allocated on the device)."""
    total = 139.81
    used = total - rng.uniform(0.2, 1.5)
    return [
        "Traceback (most recent call last):",
        *sglang_head(site),
        *frame(f"{site}/sglang/srt/model_executor/model_runner.py", 398, "initialize", "self.load_model()"),
        *frame(f"{site}/sglang/srt/model_executor/model_runner.py", 779, "load_model",
               "self.model = get_model(", 14),
        *frame(f"{site}/sglang/srt/model_loader/__init__.py", 28, "get_model", "return loader.load_model(", 18),
        *frame(f"{site}/sglang/srt/model_loader/loader.py", 563, "load_model", "model = _initialize_model(", 18),
        *frame(f"{site}/sglang/srt/model_loader/loader.py", 249, "_initialize_model", "return model_class(", 12),
        *frame(f"{site}/sglang/srt/models/qwen3_moe.py", 744, "__init__", "self.model = Qwen3MoeModel(", 19),
        *frame(f"{site}/torch/utils/_device.py", 104, "__torch_function__", "return func(*args, **kwargs)", 28),
        TORCH_OOM.format(want=rng.choice([0.75, 1.5, 1.75, 3.0]), gpu=gpu, total=total, free=rng.uniform(100, 900),
                         used=used, alloc=used - rng.uniform(1, 3), reserved=rng.uniform(10, 500)),
        "",
    ]


def sglang_module_missing(site: str, python: str) -> list[str]:
    """`python -m sglang.launch_server` when sgl_kernel is not installed in the venv."""
    return [
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "<frozen runpy>", line 88, in _run_code',
        *frame(f"{site}/sglang/launch_server.py", 7, "<module>",
               "from sglang.srt.entrypoints.http_server import launch_server"),
        *frame(f"{site}/sglang/srt/entrypoints/http_server.py", 44, "<module>",
               "from sglang.srt.entrypoints.engine import _launch_subprocesses"),
        *frame(f"{site}/sglang/srt/entrypoints/engine.py", 38, "<module>",
               "from sglang.srt.managers.data_parallel_controller import ("),
        *frame(f"{site}/sglang/srt/managers/data_parallel_controller.py", 31, "<module>",
               "from sglang.srt.managers.scheduler import run_scheduler_process"),
        *frame(f"{site}/sglang/srt/layers/activation.py", 44, "<module>",
               "from sgl_kernel import gelu_and_mul, gelu_tanh_and_mul, silu_and_mul"),
        "ModuleNotFoundError: No module named 'sgl_kernel'",
    ]


def nccl_watchdog(rank: int, seq: int, stamp: str, site: str, rng: random.Random) -> list[str]:
    """torch's ProcessGroupNCCL watchdog taking a rank down after a collective timed out."""
    ns = rng.randrange(10**9)
    op = f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=7168, NumelOut=7168, Timeout(ms)=600000)"
    ran = 600000 + rng.randint(10, 90)
    lib = f"{site}/torch/lib"
    prefix = f"[rank{rank}]:[E{stamp}.{ns:09d} ProcessGroupNCCL.cpp"
    addr = rng.getrandbits(44) | (0x7F << 40)
    return [
        f"{prefix}:632] [Rank {rank}] Watchdog caught collective operation timeout: {op} ran for {ran} milliseconds before timing out.",
        f"{prefix}:2271] [PG ID 2 PG GUID 3 Rank {rank}]  failure detected by watchdog at work sequence id: {seq} "
        f"PG status: last enqueued work: {seq}, last completed work: {seq - 1}",
        f"{prefix}:670] Stack trace of the failed collective not found, potentially because FlightRecorder is "
        "disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
        f"{prefix}:684] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous "
        "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        f"{prefix}:698] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
        f"{prefix}:1899] [PG ID 2 PG GUID 3 Rank {rank}] Process group watchdog thread terminated with exception: "
        f"[Rank {rank}] Watchdog caught collective operation timeout: {op} ran for {ran} milliseconds before timing out.",
        "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 (most recent call first):",
        f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 ({addr:#x} in {lib}/libc10.so)",
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        f"std::ratio<1l, 1000l> > >) + 0x23d ({addr + 0x5A3C1D:#x} in {lib}/libtorch_cuda.so)",
        f"frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0xc64 ({addr + 0x5A8F34:#x} in {lib}/libtorch_cuda.so)",
        f"frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d ({addr + 0x5AA13D:#x} in {lib}/libtorch_cuda.so)",
        f"frame #4: <unknown function> + 0xdc253 ({addr + 0x1B2C253:#x} in /lib/x86_64-linux-gnu/libstdc++.so.6)",
        f"frame #5: <unknown function> + 0x94ac3 ({addr + 0x2A94AC3:#x} in /lib/x86_64-linux-gnu/libc.so.6)",
        f"frame #6: <unknown function> + 0x126850 ({addr + 0x2B26850:#x} in /lib/x86_64-linux-gnu/libc.so.6)",
        "",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        f"  what():  [PG ID 2 PG GUID 3 Rank {rank}] Process group watchdog thread terminated with exception: "
        f"[Rank {rank}] Watchdog caught collective operation timeout: {op} ran for {ran} milliseconds before timing out.",
    ]


def kernel_oom_kill(comm: str, pid: int, unit: str, rng: random.Random) -> list[str]:
    """The kernel's OOM killer report (host memory), as `kernel:` lines."""
    anon = rng.randint(900_000_000, 1_900_000_000)
    return [
        f"{comm} invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), order=0, oom_score_adj=0",
        f"CPU: {rng.randint(0, 127)} PID: {pid} Comm: {comm} Tainted: P           OE      6.8.0-60-generic #63-Ubuntu",
        "Hardware name: Supermicro SYS-821GE-TNHR/X13DEG-OAD, BIOS 2.1 04/26/2024",
        "Call Trace:",
        " <TASK>",
        " dump_stack_lvl+0x76/0xa0",
        " dump_stack+0x10/0x20",
        " dump_header+0x47/0x1f0",
        " oom_kill_process+0x118/0x280",
        " out_of_memory+0x103/0x350",
        " __alloc_pages_may_oom+0x10c/0x1d0",
        " </TASK>",
        f"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset={unit},mems_allowed=0-1,global_oom,"
        f"task_memcg=/system.slice/{unit},task={comm},pid={pid},uid=0",
        f"Out of memory: Killed process {pid} ({comm}) total-vm:{anon + rng.randint(10**8, 4 * 10**8)}kB, "
        f"anon-rss:{anon}kB, file-rss:{rng.randint(10**5, 10**6)}kB, shmem-rss:{rng.randint(0, 10**5)}kB, "
        f"UID:0 pgtables:{rng.randint(10**6, 4 * 10**6)}kB oom_score_adj:0",
    ]


# -- vLLM -------------------------------------------------------------------------------------


def vllm_kv_cache_oom(site: str) -> list[str]:
    """EngineCore start-up: the KV cache does not fit (EngineCore's own log lines, without prefix)."""
    return [
        "EngineCore failed to start.",
        "Traceback (most recent call last):",
        *frame(f"{site}/vllm/v1/engine/core.py", 699, "run_engine_core", "engine_core = EngineCoreProc(*args, **kwargs)", 37),
        *frame(f"{site}/vllm/v1/engine/core.py", 498, "__init__", "super().__init__(vllm_config, executor_class, log_stats,"),
        *frame(f"{site}/vllm/v1/engine/core.py", 92, "__init__", "self._initialize_kv_caches(vllm_config)"),
        *frame(f"{site}/vllm/v1/engine/core.py", 199, "_initialize_kv_caches", "get_kv_cache_configs(vllm_config, kv_cache_specs,"),
        *frame(f"{site}/vllm/v1/core/kv_cache_utils.py", 1243, "get_kv_cache_configs",
               "check_enough_kv_cache_memory(vllm_config, kv_cache_spec_one_worker,"),
        *frame(f"{site}/vllm/v1/core/kv_cache_utils.py", 699, "check_enough_kv_cache_memory",
               'raise ValueError("No available memory for the cache blocks. "'),
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
    ]


def vllm_engine_failed(site: str) -> list[str]:
    """The API server's traceback after its engine core died during start-up."""
    return [
        "Traceback (most recent call last):",
        *frame("/opt/vllm/.venv/bin/vllm", 10, "<module>", "sys.exit(main())"),
        *frame(f"{site}/vllm/entrypoints/cli/main.py", 54, "main", "args.dispatch_function(args)"),
        *frame(f"{site}/vllm/entrypoints/cli/serve.py", 57, "cmd", "uvloop.run(run_server(args))"),
        *frame(f"{site}/vllm/entrypoints/openai/api_server.py", 1884, "run_server", "await run_server_worker(listen_address, sock, args, **uvicorn_kwargs)"),
        *frame(f"{site}/vllm/entrypoints/openai/api_server.py", 1902, "run_server_worker", "async with build_async_engine_client("),
        *frame(f"{site}/vllm/v1/engine/utils.py", 872, "wait_for_engine_startup", "raise RuntimeError("),
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ]


def vllm_port_in_use(site: str) -> list[str]:
    return [
        "Traceback (most recent call last):",
        *frame("/opt/vllm/.venv/bin/vllm", 10, "<module>", "sys.exit(main())"),
        *frame(f"{site}/vllm/entrypoints/cli/main.py", 54, "main", "args.dispatch_function(args)"),
        *frame(f"{site}/vllm/entrypoints/cli/serve.py", 57, "cmd", "uvloop.run(run_server(args))"),
        *frame(f"{site}/vllm/entrypoints/openai/api_server.py", 1880, "run_server", "sock = create_server_socket(sock_addr)"),
        *frame(f"{site}/vllm/entrypoints/openai/api_server.py", 1850, "create_server_socket", "sock.bind(addr)"),
        "OSError: [Errno 98] Address already in use",
    ]


def vllm_shared_object_missing(site: str) -> list[str]:
    """torch cannot load a CUDA library it links against (a wheel of another CUDA)."""
    return [
        "Traceback (most recent call last):",
        *frame("/opt/vllm/.venv/bin/vllm", 5, "<module>", "from vllm.entrypoints.cli.main import main"),
        *frame(f"{site}/vllm/__init__.py", 14, "<module>", "import vllm.env_override  # noqa: F401"),
        *frame(f"{site}/vllm/env_override.py", 5, "<module>", "import torch"),
        *frame(f"{site}/torch/__init__.py", 405, "<module>", "from torch._C import *  # noqa: F403"),
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
    ]
