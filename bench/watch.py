#!/usr/bin/env python3
"""Benchmarks of `logsift watch`: alert latency, and memory over hours of journal.

latency: a real journal that systemd-journal-remote writes while `logsift watch --file` follows it
  and posts to a loopback webhook receiver. N incidents, one after the other (a run that starts,
  logs a CUDA OOM traceback and exits; then a healthy run that resolves it). Latency is from
  writing the entry that makes the run fail (systemd's "Main process exited") to the receiver
  getting the `opened` change. The yardstick, in the same run on the same file: `journalctl
  --file F -f`, the floor of any follower, printing that same entry.

soak: hours of a GPU host's journal (bench/generate.py, its lines re-stamped to exactly R lines a
  second of journal time, failures injected) piped as fast as it is taken into `logsift watch -
  --state DIR --metrics-listen ...`, RSS of the watch sampled every 100k lines (or a twelfth of the
  input, and at its end), each time once the watch says (logsift_lines_read_total) that it has read
  what was written. The yardstick: `cat` of the same lines through the same pipe (how fast the
  input can be given at all).

    python bench/watch.py latency --incidents 100
    python bench/watch.py soak --hours 3 --rate 1000
    python bench/watch.py latency soak --update       # write the tables into BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from bench import generate  # noqa: E402
from tests.journal_tools import JOURNAL_REMOTE, export_entry, short_to_entries  # noqa: E402

MARKERS = {part: (f"<!-- watch-{part}:begin -->", f"<!-- watch-{part}:end -->") for part in ("latency", "soak")}
LOGSIFT = [sys.executable, "-m", "logsift"]
_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.17 GiB. GPU 0 has a total capacity of "
        "79.19 GiB of which 312.44 MiB is free.")


# -- latency ---------------------------------------------------------------------------------------


class _Receiver:
    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}  # alert key -> monotonic time of arrival
        self.bodies: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                receiver.arrived.setdefault(body["key"], time.monotonic())
                receiver.bodies.append(body)
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _incident_lines(number: int, start: datetime) -> tuple[list[str], list[str], list[str]]:
    """Lines of incident `number`: before the failing entry, the failing entry, and the rest
    (the end of the failed run and a healthy run that resolves it)."""
    unit = f"infer-{number:03d}.service"
    pid = 20000 + number * 10
    host = "gpu-node-07"

    def at(seconds: float) -> str:
        return (start + timedelta(seconds=seconds)).strftime("%b %d %H:%M:%S")

    before = [
        f"{at(0)} {host} systemd[1]: Started {unit} - Inference {number}.",
        f"{at(1)} {host} python3[{pid}]: INFO 05-25 10:00:01 [gpu_model_runner.py:1595] Loading model weights took 61.03 GiB",
        f"{at(2)} {host} python3[{pid}]: Traceback (most recent call last):",
        f'{at(2)} {host} python3[{pid}]:   File "/opt/vllm/lib/python3.12/site-packages/vllm/v1/worker/gpu_worker.py", '
        "line 226, in determine_available_memory",
        f"{at(2)} {host} python3[{pid}]:     self.model_runner.profile_run()",
        f"{at(2)} {host} python3[{pid}]: {_OOM}",
    ]
    failing = [f"{at(3)} {host} systemd[1]: {unit}: Main process exited, code=exited, status=1/FAILURE"]
    after = [
        f"{at(3)} {host} systemd[1]: {unit}: Failed with result 'exit-code'.",
        f"{at(13)} {host} systemd[1]: {unit}: Scheduled restart job, restart counter is at 1.",
        f"{at(14)} {host} systemd[1]: Started {unit} - Inference {number}.",
        f"{at(20)} {host} python3[{pid + 1}]: INFO:     Application startup complete.",
    ]
    return before, failing, after


def latency(incidents: int, work: Path, pause: float) -> dict[str, Any]:
    if not JOURNAL_REMOTE.exists():
        raise SystemExit("bench: needs systemd-journal-remote (apt-get install systemd-journal-remote)")
    journal = work / "latency.journal"
    writer = subprocess.Popen([str(JOURNAL_REMOTE), f"--output={journal}", "-"], stdin=subprocess.PIPE,
                              stderr=open(work / "journal-remote.log", "wb"))  # noqa: SIM115
    assert writer.stdin is not None
    start = datetime(2026, 5, 25, 20, 0, tzinfo=UTC)  # after the boot that short_to_entries gives
    warm = short_to_entries(f"{start:%b %d %H:%M:%S} gpu-node-07 systemd[1]: Reached target multi-user.target - Multi-User System.")
    writer.stdin.write(b"".join(export_entry(entry) for entry in warm))
    writer.stdin.flush()
    while not journal.exists():
        time.sleep(0.01)
    receiver = _Receiver()
    watch = subprocess.Popen([*LOGSIFT, "watch", "--no-model", "--file", str(journal), "--state", str(work / "state"),
                              "--sink", f"webhook={receiver.url}"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env={**os.environ, "TZ": "UTC"})
    follower = subprocess.Popen(["journalctl", f"--file={journal}", "-f", "--merge", "-o", "cat", "--lines=0"],
                                stdout=subprocess.PIPE)
    assert follower.stdout is not None and watch.stderr is not None
    _wait_line(watch.stderr, "note: watching", 30)
    journalctl_seen: dict[str, float] = {}
    threading.Thread(target=_read_follower, args=(follower.stdout, journalctl_seen), daemon=True).start()
    time.sleep(0.5)
    written: dict[str, float] = {}
    for number in range(incidents):
        before, failing, after = _incident_lines(number, start + timedelta(minutes=number))
        unit = f"infer-{number:03d}.service"
        entries = short_to_entries("\n".join(before + failing + after), unit=unit)
        cut = len(before)
        for index, part in enumerate((entries[:cut], entries[cut:cut + 1], entries[cut + 1:])):
            writer.stdin.write(b"".join(export_entry(entry) for entry in part))
            writer.stdin.flush()
            if index == 1:
                written[unit] = time.monotonic()
            time.sleep(pause)
    deadline = time.monotonic() + 30
    while sum(1 for body in receiver.bodies if body["change"] == "resolved") < incidents and time.monotonic() < deadline:
        time.sleep(0.05)
    watch.terminate()
    watch.wait(timeout=30)
    follower.terminate()
    writer.stdin.close()
    writer.wait(timeout=30)
    opened = {body["unit"]: receiver.arrived[body["key"]] for body in receiver.bodies if body["change"] == "opened"}
    ours = [opened[unit] - written[unit] for unit in written if unit in opened]
    floor = [journalctl_seen[unit] - written[unit] for unit in written if unit in journalctl_seen]
    return {"incidents": incidents, "alerted": len(ours), "logsift": ours, "journalctl": floor}


def _read_follower(stream: BinaryIO, seen: dict[str, float]) -> None:
    pattern = re.compile(rb"^(infer-\d+\.service): Main process exited")
    for line in iter(stream.readline, b""):
        match = pattern.match(line)
        if match:
            seen.setdefault(match.group(1).decode(), time.monotonic())


def _wait_line(stream: Any, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    buffer = b""
    while text.encode() not in buffer:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise SystemExit(f"bench: the watch did not start: {buffer.decode(errors='replace')}")
        chunk = os.read(stream.fileno(), 4096)
        if not chunk:
            raise SystemExit(f"bench: the watch exited: {buffer.decode(errors='replace')}")
        buffer += chunk


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def latency_table(result: dict[str, Any], command: str) -> str:
    rows = ["| follower | p50 ms | p90 ms | p99 ms | max ms | incidents |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, label in (("logsift", "`logsift watch --file F --sink webhook=...`: entry written -> `opened` at the "
                                    "receiver"),
                        ("journalctl", "`journalctl --file F -f -o cat`: entry written -> printed (yardstick)")):
        values = [value * 1000 for value in result[name]]
        rows.append(f"| {label} | {_percentile(values, 0.5):.1f} | {_percentile(values, 0.9):.1f} | "
                    f"{_percentile(values, 0.99):.1f} | {max(values, default=float('nan')):.1f} | {len(values)} |")
    ours, floor = result["logsift"], result["journalctl"]
    ratio = statistics.median(ours) / statistics.median(floor) if ours and floor and statistics.median(floor) else float("nan")
    return "\n".join([f"Command: `{command}`", "", *rows, "",
                      f"{result['alerted']} of {result['incidents']} incidents alerted; logsift's median latency is "
                      f"{ratio:.1f}x journalctl's, the floor of any follower of the same file."])


# -- soak ---------------------------------------------------------------------------------------------


_STAMP = re.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)")


class _Restamped(io.RawIOBase):
    """bench/generate.py's journal with each entry re-stamped to `rate` lines a second."""

    def __init__(self, out: BinaryIO, rate: float, start: datetime) -> None:
        self.out = out
        self.rate = rate
        self.start = start
        self.lines = 0
        self.carry = b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        data = bytes(data)
        block = self.carry + data
        end = block.rfind(b"\n")
        if end < 0:
            self.carry = block
            return len(data)
        self.carry = block[end + 1:]
        out = []
        for line in block[:end + 1].splitlines(keepends=True):
            match = _STAMP.match(line)
            if match:
                stamp = self.start + timedelta(seconds=self.lines / self.rate)
                line = stamp.strftime("%Y-%m-%dT%H:%M:%S.%f").encode() + b"+00:00" + line[match.end():]
            self.lines += 1
            out.append(line)
        self.out.write(b"".join(out))
        return len(data)


def _rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _lines_read(port: int) -> float | None:
    """What the watch says it has read (`logsift_lines_read_total` on its metrics endpoint)."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode("utf-8")
    except OSError:
        return None
    match = re.search(r"^logsift_lines_read_total ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else None


STALL = 5.0  # seconds without progress that end a wait: on a loaded machine the watch can be
# starved for more than a second between two reads


def _caught_up(port: int, sent: int, timeout: float = 60.0) -> int:
    """Wait until the watch has read the `sent` lines written so far (or its count stops moving
    for STALL seconds: a line held back as a possible continuation, or lines that joined one
    entry); what it read."""
    deadline = time.monotonic() + timeout
    last, still = -1.0, time.monotonic()
    while time.monotonic() < deadline:
        read = _lines_read(port)
        if read is not None and read >= sent:
            return int(read)
        if read != last:
            last, still = read if read is not None else -1.0, time.monotonic()
        elif time.monotonic() - still > STALL:
            break
        time.sleep(0.01)
    return int(max(last, 0))


def soak(hours: float, rate: float, work: Path, seed: int, samples_wanted: int = 12) -> dict[str, Any]:
    lines = int(hours * 3600 * rate)
    path = work / f"soak-{hours}h.txt"
    began = time.perf_counter()
    with open(path, "wb") as raw:
        restamped = _Restamped(raw, rate, datetime(2026, 5, 25, 6, 0, tzinfo=UTC))
        summary = generate.generate(restamped, fmt="short-iso", lines=lines,  # type: ignore[arg-type]
                                    failures=max(1, int(hours * 20)), seed=seed)
    generated = time.perf_counter() - began
    size = path.stat().st_size
    total = restamped.lines
    # The yardstick: the same lines through a pipe into a process that only reads them.
    began = time.perf_counter()
    subprocess.run(f"cat {path} | cat > /dev/null", shell=True, check=True)
    cat_seconds = time.perf_counter() - began
    state = work / "soak-state"
    shutil.rmtree(state, ignore_errors=True)
    port = _free_port()
    watch = subprocess.Popen([*LOGSIFT, "watch", "--no-model", "-", "--state", str(state), "--sink", "stdout",
                              "--metrics-listen", f"127.0.0.1:{port}"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "TZ": "UTC"})
    assert watch.stdin is not None and watch.stdout is not None and watch.stderr is not None
    _wait_line(watch.stderr, "note: watching", 60)
    changes: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: changes.extend(json.loads(line) for line in watch.stdout), daemon=True)  # type: ignore[union-attr]
    reader.start()
    # RSS is sampled once the watch has read what was written (the pipe holds up to 1 MiB, five
    # thousand lines: sampling on writing alone would credit a small input's RSS to lines not
    # read yet), every 100k lines or a `samples_wanted`th of the input when that is less, and at
    # the end; each sample says how many lines the watch had read.
    samples: list[tuple[int, float, int | None]] = []
    step = max(1, min(100_000, -(-total // samples_wanted)))
    began = time.perf_counter()

    def sample(sent: int) -> None:
        watch.stdin.flush()  # type: ignore[union-attr]
        read = _caught_up(port, sent)
        samples.append((read, time.perf_counter() - began, _rss_kib(watch.pid)))

    sent = 0
    with open(path, "rb") as source:
        for sent, line in enumerate(source, 1):
            watch.stdin.write(line)
            if sent % step == 0:
                sample(sent)
    if not samples or samples[-1][0] < sent:
        sample(sent)
    watch.stdin.close()
    peak_before_exit = max((kib or 0) for _, _, kib in samples) if samples else None
    watch.wait(timeout=600)
    seconds = time.perf_counter() - began
    reader.join(timeout=30)
    return {"hours": hours, "rate": rate, "lines": total, "bytes": size, "generated_s": generated,
            "injected": len(summary.injected), "samples": samples, "seconds": seconds, "cat_seconds": cat_seconds,
            "changes": changes, "peak_kib": peak_before_exit}


def soak_table(result: dict[str, Any], command: str) -> str:
    samples = result["samples"]
    seconds_per_line = 1 / result["rate"]
    span = result["lines"] * seconds_per_line
    unit, divisor = ("hours", 3600.0) if span >= 3600 else ("minutes", 60.0) if span >= 60 else ("seconds", 1.0)
    rows = ["| journal read ({} at {:,.0f} lines/s) | lines read | RSS MiB |".format(unit, result["rate"]),
            "| ---: | ---: | ---: |"]
    shown = samples if len(samples) <= 12 else [samples[index * (len(samples) - 1) // 11] for index in range(12)]
    for lines, _, kib in shown:
        rows.append(f"| {lines * seconds_per_line / divisor:.2f} | {lines:,} | {kib / 1024 if kib else float('nan'):.1f} |")
    rss = [kib for _, _, kib in samples if kib]
    half = rss[len(rss) // 2:] if rss else []
    opened = sum(1 for change in result["changes"] if change["change"] == "opened")
    resolved = sum(1 for change in result["changes"] if change["change"] == "resolved")
    speed = result["lines"] / result["seconds"] if result["seconds"] > 0 else float("nan")
    cat = result["cat_seconds"]
    return "\n".join([
        f"Command: `{command}`", "", *rows, "",
        f"{result['lines']:,} lines ({result['bytes'] / 1e6:,.1f} MB, {span / divisor:g} {unit} of journal at "
        f"{result['rate']:,.0f} lines/s) in {result['seconds']:.1f} s: "
        f"{speed:,.0f} lines/s, {speed / result['rate']:,.0f}x real time; `cat | cat` moves the same lines in "
        f"{cat:.2f} s (logsift takes {result['seconds'] / cat if cat else float('nan'):,.0f}x as long). RSS over the "
        f"second half of the samples: {min(half) / 1024:.1f} to {max(half) / 1024:.1f} MiB (first sample "
        f"{rss[0] / 1024:.1f} MiB). {result['injected']} failed runs injected: {opened} incidents opened, "
        f"{resolved} resolved.",
    ]) if rss else "no samples"


# -- report ---------------------------------------------------------------------------------------------


def machine() -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    return (f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} vCPUs, Python "
            f"{platform.python_version()}, {platform.platform(terse=True)}, commit {commit or 'unknown'}.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="+", choices=["latency", "soak"])
    parser.add_argument("--incidents", type=int, default=100)
    parser.add_argument("--pause", type=float, default=0.1, help="seconds between writes (latency)")
    parser.add_argument("--hours", type=float, default=3.0)
    parser.add_argument("--rate", type=float, default=1000.0, help="journal lines a second of journal time (soak)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--update", action="store_true", help="write the tables into BENCHMARKS.md (between the "
                        "<!-- watch-latency:begin --> and <!-- watch-soak:begin --> markers)")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args(argv)
    raw: dict[str, Any] = {}
    sections: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="logsift-bench-") as directory:
        work = Path(directory)
        if "latency" in args.what:
            print(f"bench: latency over {args.incidents} incidents ...", file=sys.stderr)
            result = latency(args.incidents, work, args.pause)
            raw["latency"] = result
            sections["latency"] = "\n".join([machine(), "", latency_table(
                result, f"python bench/watch.py latency --incidents {args.incidents} --pause {args.pause:g}")])
        if "soak" in args.what:
            print(f"bench: soak over {args.hours} hours of journal ...", file=sys.stderr)
            result = soak(args.hours, args.rate, work, args.seed)
            raw["soak"] = {key: value for key, value in result.items() if key != "changes"}
            sections["soak"] = "\n".join([machine(), "", soak_table(
                result, f"python bench/watch.py soak --hours {args.hours:g} --rate {args.rate:g}")])
    for part, text in sections.items():
        print(f"### {part}\n\n{text}\n")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1, default=str))
    if args.update:
        path = ROOT / "BENCHMARKS.md"
        current = path.read_text(encoding="utf-8")
        from bench.run import replace_section

        for part, text in sections.items():
            current = replace_section(current, text + "\n", *MARKERS[part])
        path.write_text(current, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
