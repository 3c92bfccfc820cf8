#!/usr/bin/env python3
"""Throughput and peak memory of each input reader, next to journalctl rendering the same file.

For each size (of the short-iso text the journal is made from):
1. bench/generate.py writes a realistic short-iso journal (reused when present);
2. its lines become journal export entries (the fields journald gives such lines), and
   systemd-journal-remote stores them in a real .journal file;
3. `journalctl --file J -o FORMAT --all > /dev/null` is timed for each format: journalctl's
   own rendering speed;
4. the rendering of each format is cut to SIZE bytes (at an entry boundary) and
   `logsift --format json --no-model FILE` reads it (format auto-detected), and so does a process
   that only runs the reader (records built and dropped); the native file is read with
   `logsift --file J` through systemd-python and through the journalctl fallback.
Each logsift run is a whole process; peak RSS comes from wait4(2). Everything goes under
bench/data/ (git-ignored).

    python bench/readers.py --sizes 100M            # about a minute
    python bench/readers.py --sizes 100M,1G --markdown
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Iterator

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
LOGSIFT = ROOT / ".venv" / "bin" / "logsift"
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"
# Rules only: the learned fallback loads scikit-learn (100+ MiB) when an unclaimed failure shows
# up, which has nothing to do with reading.
LOGSIFT_OPTIONS = ("--format", "json", "--no-model")
FORMATS = ("short", "short-iso", "short-precise", "cat", "json", "json-seq", "json-pretty", "export", "verbose")
# Where a rendering may be cut without cutting an entry.
BOUNDARY = {"export": b"\n\n", "json-pretty": b"\n}\n"}
_LINE = re.compile(rb"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?([+-]\d\d:\d\d) (\S+) ([^\s\[]+)(?:\[(\d+)\])?: (.*)$")
_UNIT = re.compile(rb"^(?:Started |Starting |Stopping |Stopped )?([\w@.-]+\.(?:service|scope))\b")
BOOT = b"5f0c2f4e8a3b4d0c9e51a7d2c4b6e8f1"
MACHINE = b"b8c2d9e4f1a6473c8d5e2f9a0b1c3d4e"


def parse_size(text: str) -> int:
    units = {"K": 10**3, "M": 10**6, "G": 10**9}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def source_text(size: str) -> Path:
    path = DATA / f"readers-{size}-short-iso.txt"
    if not path.exists():
        subprocess.run([sys.executable, str(ROOT / "bench" / "generate.py"), "--size", size, "--format", "short-iso",
                        "--failures", "6", "-o", str(path)], check=True)
    return path


def export_entries(text: BinaryIO) -> Iterator[bytes]:
    """Short-iso lines as export entries with the fields journald stores for such lines."""
    sequence = 0
    last = 0
    for raw in text:
        match = _LINE.match(raw.rstrip(b"\n"))
        if match is None:
            continue
        stamp, zone, host, ident, pid, message = match.groups()
        usec = int(datetime.fromisoformat((stamp + zone).decode()).timestamp()) * 1_000_000
        sequence = sequence + 1 if usec <= last else 0
        last = max(usec, last + 1)
        usec = last
        fields = [(b"__REALTIME_TIMESTAMP", str(usec).encode()), (b"_BOOT_ID", BOOT), (b"PRIORITY", b"6"),
                  (b"SYSLOG_FACILITY", b"3"), (b"SYSLOG_IDENTIFIER", ident), (b"_UID", b"0"), (b"_GID", b"0"),
                  (b"_COMM", ident[:15]), (b"_MACHINE_ID", MACHINE), (b"_HOSTNAME", host)]
        if pid == b"1":
            fields += [(b"_PID", b"1"), (b"_TRANSPORT", b"journal"), (b"_SYSTEMD_UNIT", b"init.scope"),
                       (b"_SYSTEMD_CGROUP", b"/init.scope"), (b"_SYSTEMD_SLICE", b"-.slice"),
                       (b"_EXE", b"/usr/lib/systemd/systemd"), (b"_CMDLINE", b"/sbin/init")]
            unit = _UNIT.match(message)
            if unit:
                fields.append((b"UNIT", unit.group(1)))
        elif pid:
            fields += [(b"_PID", pid), (b"_TRANSPORT", b"stdout"), (b"_STREAM_ID", pid.rjust(32, b"0")),
                       (b"_EXE", b"/usr/bin/" + ident), (b"_CMDLINE", ident)]
        else:
            fields += [(b"_TRANSPORT", b"kernel" if ident == b"kernel" else b"syslog")]
        fields.append((b"MESSAGE", message))
        yield b"".join(name + b"=" + value + b"\n" for name, value in fields) + b"\n"


def write_journal(text: Path, output: Path) -> None:
    """Journal files at `output` (journal-remote rotates at about 80 MB) made by
    systemd-journal-remote from the short-format journal text at `text`."""
    with text.open("rb") as source, subprocess.Popen(
        [JOURNAL_REMOTE, f"--output={output}", "-"], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as child:
        assert child.stdin is not None
        batch: list[bytes] = []
        for entry in export_entries(source):
            batch.append(entry)
            if len(batch) >= 4096:
                child.stdin.write(b"".join(batch))
                batch = []
        child.stdin.write(b"".join(batch))
        child.stdin.close()
        if child.wait() != 0:
            raise SystemExit("bench: systemd-journal-remote failed")


def build_journal(size: str) -> Path:
    """The journal made from the SIZE text; journal-remote rotates its output at about 80 MB, so
    this is the first of its files: `journal_files` names them all (readers-SIZE*.journal)."""
    journal = DATA / f"readers-{size}.journal"
    done = DATA / f"readers-{size}.journal.done"
    if done.exists():
        return journal
    for stale in journal_files(journal):
        stale.unlink()
    write_journal(source_text(size), journal)
    done.touch()
    return journal


def journal_files(journal: Path) -> list[Path]:
    return sorted(journal.parent.glob(journal.stem + "*.journal"))


def timed(command: list[str], runs: int = 1) -> tuple[float, int, int]:
    """(median seconds, peak RSS in KiB, exit status) of `runs` whole-process runs."""
    results = []
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env={**os.environ, "TZ": "UTC"})
        _, status, usage = os.wait4(child.pid, 0)
        results.append((time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status)))
    return statistics.median(r[0] for r in results), max(r[1] for r in results), results[-1][2]


def entries(journal: Path) -> int:
    """Entries in the journal (the generated messages are one line each)."""
    with subprocess.Popen(["journalctl", *_file_options(journal), "-o", "cat", "--all", "--no-pager"],
                          stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        return sum(chunk.count(b"\n") for chunk in iter(lambda: child.stdout.read(1 << 20), b""))  # type: ignore[union-attr]


def rendering(journal: Path, fmt: str, size: str) -> tuple[Path, int]:
    """The rendering of `fmt` cut to SIZE bytes at an entry boundary, and how many entries it holds."""
    path = DATA / f"readers-{size}.{fmt}"
    limit = parse_size(size)
    mark = BOUNDARY.get(fmt, b"\n")
    if not path.exists():
        partial = path.with_suffix(path.suffix + ".partial")
        with subprocess.Popen(["journalctl", *_file_options(journal), "-o", fmt, "--all", "--no-pager"],
                              stdout=subprocess.PIPE, env={**os.environ, "TZ": "UTC"}) as child, partial.open("wb") as out:
            assert child.stdout is not None
            written = 0
            for chunk in iter(lambda: child.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
                if written + len(chunk) >= limit:
                    cut = chunk.find(mark, max(limit - written - len(mark), 0))
                    if cut >= 0:
                        out.write(chunk[: cut + len(mark)])
                        break
                out.write(chunk)
                written += len(chunk)
            child.kill()
        partial.rename(path)
    return path, _count_entries(path, fmt)


# A child process that only reads: records are built and dropped, nothing else runs.
_READ_ONLY = """
import sys
from logsift import read as readers
from logsift.read import selection, sources
from logsift.records import ReadProblems
problems = ReadProblems()
if sys.argv[1] == "file":
    records = readers.read(open(sys.argv[2], "rb"), sys.argv[2], "auto", problems)
else:
    records = sources.journal_records(selection.select(files=sys.argv[2:]), problems, sys.argv[1])
for _ in records:
    pass
"""


def read_only(target: list[str], runs: int) -> tuple[float, int, int]:
    return timed([sys.executable, "-c", _READ_ONLY, *target], runs)


def _file_options(journal: Path) -> list[str]:
    return [f"--file={path}" for path in journal_files(journal)]


def _count_entries(path: Path, fmt: str) -> int:
    data_entries = 0
    with path.open("rb") as data:
        for chunk in iter(lambda: data.read(1 << 24), b""):
            if fmt == "export":
                data_entries += chunk.count(b"\n__CURSOR=") + (chunk.startswith(b"__CURSOR="))
            elif fmt == "json-pretty":
                data_entries += chunk.count(b"\n}\n")
            elif fmt == "verbose":
                data_entries += chunk.count(b"\n    MESSAGE=") + chunk.count(b"\n    MESSAGE\n")
            else:
                data_entries += chunk.count(b"\n")
    return data_entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100M", help="comma-separated sizes (K, M, G: powers of 10)")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement on the first size (median)")
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    formats = args.formats.split(",")
    rows: list[tuple[str, ...]] = []
    journalctl_rows: list[tuple[str, ...]] = []
    for size in args.sizes.split(","):
        runs = args.runs if size == args.sizes.split(",")[0] else 1
        journal = build_journal(size)
        total = entries(journal)
        for fmt in formats:
            if size == args.sizes.split(",")[0]:
                seconds, _, _ = timed(["journalctl", *_file_options(journal), "-o", fmt, "--all", "--no-pager"], runs)
                journalctl_rows.append((fmt, f"{total / seconds / 1000:.0f}k"))
            path, count = rendering(journal, fmt, size)
            seconds, peak, status = timed([str(LOGSIFT), *LOGSIFT_OPTIONS, str(path)], runs)
            alone, alone_peak, _ = read_only(["file", str(path)], runs)
            megabytes = path.stat().st_size / 1e6
            rows.append((size, fmt, f"{megabytes:.0f}", f"{count}", f"{seconds:.1f}", f"{count / seconds / 1000:.0f}k",
                         f"{megabytes / seconds:.1f}", f"{peak / 1024:.0f}", str(status),
                         f"{count / alone / 1000:.0f}k", f"{alone_peak / 1024:.0f}"))
            print(*rows[-1], sep="\t", flush=True)
        for backend in ("python", "journalctl"):
            seconds, peak, status = timed([str(LOGSIFT), *LOGSIFT_OPTIONS, *_file_options(journal),
                                           "--journal-reader", backend], runs)
            alone, alone_peak, _ = read_only([backend, *map(str, journal_files(journal))], runs)
            megabytes = sum(path.stat().st_size for path in journal_files(journal)) / 1e6
            rows.append((size, f"native ({backend})", f"{megabytes:.0f}", f"{total}", f"{seconds:.1f}",
                         f"{total / seconds / 1000:.0f}k", f"{megabytes / seconds:.1f}", f"{peak / 1024:.0f}", str(status),
                         f"{total / alone / 1000:.0f}k", f"{alone_peak / 1024:.0f}"))
            print(*rows[-1], sep="\t", flush=True)
    if args.markdown:
        print("\n| input | reader | MB | entries | logsift s | entries/s | MB/s | peak RSS MiB | exit "
              "| reader alone: entries/s | reader alone: peak RSS MiB |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        print("\n| format | journalctl renders (entries/s) |\n| --- | ---: |")
        for row in journalctl_rows:
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
