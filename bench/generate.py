#!/usr/bin/env python3
"""Write a large, realistic, deterministic journal of one GPU inference host.

Mostly healthy serving: two SGLang units (TP ranks as separate PIDs), vLLM (V1 engine with
APIServer/EngineCore/worker prefixes), Ollama, text-generation-inference, and the host's own
cron, timers, ssh sessions and firewall lines; each unit now and then restarts, which replays its
start-up (NCCL INFO, weight loading, JIT builds that succeed, harmless warnings such as
FlashInfer's "SM 12.x requires CUDA >= 12.9" before the server comes up). `--failures N`
spreads N failed runs over the file (nvcc not found, missing curand.h, CUDA OOM, NCCL watchdog,
port in use...), each followed by a healthy restart; `--manifest` records where they are.

The same seed and options always give the same bytes. The journal stops at a quiet moment
after the size is reached: no unit is left in the middle of a start-up or a failure.

    python bench/generate.py --size 100M -o bench/data/journal.txt
    python bench/generate.py --lines 50000 --format short --failures 3 --manifest truth.tsv
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
import time
from calendar import timegm
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: import bench.*

from bench.host import Burst, Clock, Host, Unit  # noqa: E402
from bench.nearmiss import NearMiss  # noqa: E402
from bench.services import TGI, Background, Ollama  # noqa: E402
from bench.sglang import SGLang  # noqa: E402
from bench.vllm import VLLM  # noqa: E402

FORMATS = ("short-iso", "short", "plain")
HOSTNAME = "gpu-node-07"
START = "2026-05-25T06:00:00"
# (unit, kind): the order in which --failures N injects failures, round robin over the chosen units.
PLAN: tuple[tuple[str, str], ...] = (
    ("sglang-k26.service", "nvcc-not-found"),
    ("vllm.service", "out-of-memory"),
    ("sglang-qwen.service", "nccl-watchdog"),
    ("sglang-k26.service", "header-missing"),
    ("ollama.service", "port-in-use"),
    ("sglang-k26.service", "toolkit-too-old"),
    ("vllm.service", "port-in-use"),
    ("sglang-qwen.service", "out-of-memory"),
    ("sglang-qwen.service", "module-missing"),
    ("ollama.service", "permission-denied"),
    ("sglang-k26.service", "oom-kill"),
    ("vllm.service", "shared-object-missing"),
)
KINDS = sorted({kind for _, kind in PLAN})


@dataclass(frozen=True, slots=True)
class Injected:
    line: int  # 1-based line of the unit's "Started" that begins the failed run, or of the first failure line
    unit: str
    kind: str


@dataclass(frozen=True, slots=True)
class Summary:
    lines: int
    bytes: int
    injected: tuple[Injected, ...]
    seconds: float


def parse_size(text: str) -> int:
    """'100M' -> 100_000_000 (decimal units: K, M, G)."""
    text = text.strip().upper().removesuffix("B")
    factor = {"K": 10**3, "M": 10**6, "G": 10**9}.get(text[-1:], 1)
    number = text[:-1] if factor != 1 else text
    try:
        value = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r} is not a number with an optional K, M or G suffix") from None
    return int(value * factor)


UNIT_NAMES = ("sglang-k26", "sglang-qwen", "vllm", "ollama", "tgi", "host")
# Lines per second of simulated time that the units above write together (measured on the
# default journal), so that --near-miss can be given as a share of all lines.
BASE_RATE = 2.9


def build_units(host: Host, seed: int, start: float, restart_every: float,
                names: tuple[str, ...] = UNIT_NAMES, near_miss: float = 0.0) -> list[Unit]:
    """The units of the host, by short name ("host": cron, timers, ssh, kernel firewall lines)."""
    unknown = sorted(set(names) - set(UNIT_NAMES))
    if unknown:
        raise ValueError(f"unknown unit {unknown[0]!r}; known: {', '.join(UNIT_NAMES)}")

    def rng(index: int) -> random.Random:
        return random.Random(seed * 1009 + index)

    units: list[Unit] = [
        SGLang(host, rng(1), start + 2, restart_every, unit="sglang-k26.service",
               description="SGLang Kimi-K2.6 (TP4, autoregressive)", ident="python3", tp=4,
               model="/models/Kimi-K2.6", port=30001, blackwell=True, nccl_debug=False,
               arch_class="DeepseekV3ForCausalLM", shards=64),
        SGLang(host, rng(2), start + 40, restart_every, unit="sglang-qwen.service",
               description="SGLang Qwen3-30B-A3B (TP2)", ident="python", tp=2,
               model="/models/Qwen3-30B-A3B", port=30002, blackwell=False, nccl_debug=True,
               arch_class="Qwen3MoeForCausalLM", shards=16),
        VLLM(host, rng(3), start + 75, restart_every, model="Qwen/Qwen3-32B", tp=2, port=8000),
        Ollama(host, rng(4), start + 110, restart_every),
        TGI(host, rng(5), start + 130, restart_every),
        Background(host, rng(6), start),
    ]
    chosen = [unit for unit, name in zip(units, UNIT_NAMES, strict=False) if name in names]
    if near_miss > 0:
        if not 0 < near_miss < 1:
            raise ValueError("near_miss is a share of the lines: between 0 and 1")
        rate = BASE_RATE * len(chosen) / len(UNIT_NAMES) * near_miss / (1 - near_miss)
        chosen.append(NearMiss(host, rng(7), start + 1, 1 / rate))
    return chosen


def render(fmt: str, hostname: str, clock: Clock, burst: Burst) -> list[str]:
    if fmt == "plain":
        return [message + "\n" for _, _, message in burst.entries]
    stamps = clock(burst.t)
    stamp = stamps.iso if fmt == "short-iso" else stamps.short
    head = f"{stamp} {hostname} "
    out = []
    for ident, pid, message in burst.entries:
        if pid is None:
            out.append(f"{head}{ident}: {message}\n")
        else:
            out.append(f"{head}{ident}[{pid}]: {message}\n")
    return out


def generate(out: BinaryIO, *, fmt: str = "short-iso", lines: int | None = None, size: int | None = None,
             failures: int = 0, seed: int = 1, restart_every: float = 4 * 3600.0,
             start: str = START, hostname: str = HOSTNAME, units: tuple[str, ...] = UNIT_NAMES,
             near_miss: float = 0.0) -> Summary:
    """Write the journal to `out` (binary); stop after `lines` lines or `size` bytes, at a quiet moment."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if (lines is None) == (size is None):
        raise ValueError("give exactly one of lines= or size=")
    began = time.perf_counter()
    clock = Clock()
    host = Host(hostname, clock)
    start_t = float(timegm(time.strptime(start, "%Y-%m-%dT%H:%M:%S")))
    chosen = build_units(host, seed, start_t, restart_every, units, near_miss)
    by_name = {unit.unit: index for index, unit in enumerate(chosen)}
    plan = [(name, kind) for name, kind in PLAN if name in by_name]
    if failures and not plan:
        raise ValueError("none of the chosen units has failures to inject")
    target = lines if lines is not None else size
    assert target is not None
    thresholds = [target * (number + 1) // (failures + 1) for number in range(failures)]
    lives: list[Iterator[Burst]] = [unit.life() for unit in chosen]
    heap: list[tuple[float, int, Burst]] = []
    for index, life in enumerate(lives):
        burst = next(life)
        heap.append((burst.t, index, burst))
    heapq.heapify(heap)
    was_busy = [True] * len(chosen)
    written_lines = 0
    written_bytes = 0
    planned = 0
    injected: list[Injected] = []
    draining = False
    pending: list[bytes] = []
    pending_size = 0
    while heap:
        _, index, burst = heapq.heappop(heap)
        unit = chosen[index]
        if draining and not was_busy[index] and unit.inject is None:
            continue  # the unit is serving: end its part of the journal here
        if burst.entries:
            if burst.mark is not None:
                injected.append(Injected(written_lines + 1, unit.unit, burst.mark))
            data = "".join(render(fmt, hostname, clock, burst)).encode("utf-8")
            written_lines += len(burst.entries)
            written_bytes += len(data)
            pending.append(data)
            pending_size += len(data)
            if pending_size >= 1 << 20:
                out.write(b"".join(pending))
                pending, pending_size = [], 0
        was_busy[index] = burst.busy
        done = written_lines if lines is not None else written_bytes
        while planned < failures and done >= thresholds[planned]:
            name, kind = plan[planned % len(plan)]
            target_unit = chosen[by_name[name]]
            target_unit.inject = target_unit.inject or kind
            planned += 1
        if not draining and done >= target:
            draining = True
        following = next(lives[index])
        heapq.heappush(heap, (following.t, index, following))
    out.write(b"".join(pending))
    return Summary(written_lines, written_bytes, tuple(injected), time.perf_counter() - began)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    amount = parser.add_mutually_exclusive_group(required=True)
    amount.add_argument("--size", type=parse_size, help="stop after this many bytes (K, M, G: powers of 10)")
    amount.add_argument("--lines", type=int, help="stop after this many lines")
    parser.add_argument("--format", choices=FORMATS, default="short-iso", help="journalctl -o format, or plain messages")
    parser.add_argument("--failures", type=int, default=0, help="failed runs to spread over the journal")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--restart-every", type=float, default=4 * 3600.0, metavar="SECONDS",
                        help="mean time between planned restarts of each unit (simulated time)")
    parser.add_argument("--units", default=",".join(UNIT_NAMES),
                        help=f"comma-separated units to simulate (default: all of {','.join(UNIT_NAMES)})")
    parser.add_argument("--near-miss", type=float, default=0.0, metavar="SHARE",
                        help="share of lines that are healthy but share words with rules (bench/nearmiss.py), e.g. 0.1")
    parser.add_argument("--manifest", type=Path, help="write the injected failures here (TSV: line, unit, kind)")
    parser.add_argument("-o", "--output", type=Path, help="output file (default: stdout)")
    args = parser.parse_args(argv)
    out = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115
    try:
        summary = generate(out, fmt=args.format, lines=args.lines, size=args.size, failures=args.failures,
                           seed=args.seed, restart_every=args.restart_every,
                           units=tuple(name.strip() for name in args.units.split(",") if name.strip()),
                           near_miss=args.near_miss)
    finally:
        if args.output:
            out.close()
    if args.manifest:
        rows = ["line\tunit\tkind"] + [f"{item.line}\t{item.unit}\t{item.kind}" for item in summary.injected]
        args.manifest.write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"generate: {summary.lines} lines, {summary.bytes / 1e6:.1f} MB, {len(summary.injected)} failures "
          f"in {summary.seconds:.1f} s ({summary.bytes / 1e6 / max(summary.seconds, 1e-9):.0f} MB/s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
