#!/usr/bin/env python3
"""A crash-looping host's journal: real GPU failure output, dense, restart after restart.

The worst case for a diagnosis tool: nearly every line is relevant. Each run of the unit prints
real output captured on a GPU machine (`fixtures/captured/*.txt`: JIT builds, tracebacks, NCCL,
CUDA errors) as its process's lines, then systemd's own lines of a failed run and a scheduled
restart; the unit keeps failing the same way for a while (an operator trying fixes), then the
failure changes, and now and then a run comes up healthy, which resolves the incident. Two units
crash-loop at once, so their lines interleave. A manifest records each run's first line, unit
and the class it should be diagnosed as (from `fixtures/captured/expected.tsv`).

    python bench/crashloop.py --size 50M -o bench/data/crashloop-50M.txt --manifest truth.tsv
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

ROOT = Path(__file__).resolve().parent.parent
CAPTURED = ROOT / "fixtures" / "captured"
HOSTNAME = "gpu-node-07"
START = "2026-05-25T06:00:00"
UNITS = (("sglang-k26.service", "SGLang Kimi-K2.6 (TP4, autoregressive)", "python3"),
         ("vllm.service", "vLLM Qwen3-32B (TP2)", "vllm"))
SAME_FAILURE_RUNS = (20, 200)  # how many runs in a row fail the same way
HEALTHY_EVERY = 300  # about one run in this many comes up (and resolves the incident)


@dataclass(frozen=True, slots=True)
class Run:
    line: int
    unit: str
    expected: str  # a class id, or "healthy"


def captures() -> tuple[list[tuple[str, list[str]]], list[str]]:
    """(class, lines) of every captured failure, and the lines of the healthy capture."""
    failures = []
    healthy: list[str] = []
    for row in (CAPTURED / "expected.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        name, expected = row.split("\t")[:2]
        lines = (CAPTURED / name).read_text(encoding="utf-8", errors="replace").splitlines()
        if expected == "healthy":
            healthy = lines
        else:
            failures.append((expected, lines))
    return failures, healthy


class Looper:
    """One unit in a crash loop: a generator of (time, lines, expected class of a run start)."""

    def __init__(self, rng: random.Random, unit: str, description: str, ident: str, start: float,
                 failures: list[tuple[str, list[str]]], healthy: list[str]) -> None:
        self.rng, self.unit, self.description, self.ident = rng, unit, description, ident
        self.t = start
        self.failures, self.healthy = failures, healthy
        self.pid = rng.randint(2000, 9000)
        self.restarts = 0

    def sd(self, text: str) -> tuple[str, int, str]:
        return ("systemd", 1, text)

    def life(self) -> Iterator[tuple[float, list[tuple[str, int | None, str]], str | None]]:
        rng = self.rng
        while True:
            expected, lines = self.failures[rng.randrange(len(self.failures))]
            for _ in range(rng.randint(*SAME_FAILURE_RUNS)):
                self.pid += rng.randint(7, 400)
                ok = rng.random() < 1 / HEALTHY_EVERY
                yield self.t, [self.sd(f"Started {self.unit} - {self.description}.")], "healthy" if ok else expected
                self.t += rng.uniform(0.5, 2.0)
                body = self.healthy if ok else [*self.healthy[: rng.randint(0, 6)], *lines]
                for start in range(0, len(body), 8):  # a process prints in bursts
                    yield self.t, [(self.ident, self.pid, line) for line in body[start : start + 8]], None
                    self.t += rng.uniform(0.01, 0.4)
                if ok:
                    self.t += rng.uniform(600, 3600)  # serving quietly, then a stop and a new failure
                    yield self.t, [self.sd(f"Stopping {self.unit} - {self.description}..."),
                                   self.sd(f"{self.unit}: Deactivated successfully."),
                                   self.sd(f"Stopped {self.unit} - {self.description}.")], None
                    self.t += rng.uniform(1, 5)
                    break
                self.restarts += 1
                yield self.t, [
                    self.sd(f"{self.unit}: Main process exited, code=exited, status=1/FAILURE"),
                    self.sd(f"{self.unit}: Failed with result 'exit-code'."),
                    self.sd(f"{self.unit}: Consumed {rng.uniform(5, 90):.3f}s CPU time."),
                ], None
                self.t += rng.uniform(5, 15)  # RestartSec
                yield self.t, [self.sd(f"{self.unit}: Scheduled restart job, restart counter is at {self.restarts}."),
                               self.sd(f"Stopped {self.unit} - {self.description}.")], None


def generate(out: BinaryIO, size: int, seed: int = 1) -> tuple[int, list[Run]]:
    """Write about `size` bytes of short-iso journal; returns (lines, runs)."""
    failures, healthy = captures()
    start = float(timegm(time.strptime(START, "%Y-%m-%dT%H:%M:%S")))
    loopers = [Looper(random.Random(seed * 31 + index), unit, description, ident, start + index * 7,
                      failures, healthy) for index, (unit, description, ident) in enumerate(UNITS)]
    lives = [looper.life() for looper in loopers]
    heap = []
    for index, life in enumerate(lives):
        first = next(life)
        heap.append((first[0], index, first))
    heapq.heapify(heap)
    written = lines = 0
    runs: list[Run] = []
    pending: list[bytes] = []
    while heap and written < size:
        t, index, (_, entries, expected) = heapq.heappop(heap)
        if expected is not None:
            runs.append(Run(lines + 1, loopers[index].unit, expected))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(t))
        data = "".join(f"{stamp} {HOSTNAME} {ident}[{pid}]: {message}\n" for ident, pid, message in entries).encode()
        pending.append(data)
        if len(pending) >= 4096:
            out.write(b"".join(pending))
            pending = []
        written += len(data)
        lines += len(entries)
        following = next(lives[index])
        heapq.heappush(heap, (following[0], index, following))
    out.write(b"".join(pending))
    return lines, runs


def write_manifest(path: Path, runs: list[Run]) -> None:
    rows = ["line\tunit\tclass"] + [f"{run.line}\t{run.unit}\t{run.expected}" for run in runs]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    from bench.generate import parse_size

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, required=True, help="bytes to write (K, M, G: powers of 10)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--manifest", type=Path, help="write each run's first line, unit and expected class here")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    with open(args.output, "wb") as out:
        lines, runs = generate(out, args.size, args.seed)
    if args.manifest:
        write_manifest(args.manifest, runs)
    print(f"crashloop: {lines} lines, {len(runs)} runs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
