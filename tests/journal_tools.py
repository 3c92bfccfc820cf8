"""Real journal files for tests, without journald: export data -> systemd-journal-remote.

    build_journal(export_bytes, tmp_path / "x.journal")   # a real .journal file
    render(journal, "json", "-u", "sglang-k26.service")   # what journalctl prints for it

The seed scenario's export capture (fixtures/seed-incident/journal.export) was made by
`python -m tests.journal_tools seed`: each line of fixtures/seed-incident/journal.txt (the
short output of `journalctl -u sglang-k26.service`) becomes one entry with the fields journald
gives such a line (stdout of the service's processes; PID 1's lines with UNIT=, INVOCATION_ID=
and MESSAGE_ID=), journal-remote stores them in a real journal file, and the capture is the
real `journalctl -o export --all` of that file.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parent.parent
JOURNAL_REMOTE = Path("/lib/systemd/systemd-journal-remote")
SEED = ROOT / "fixtures" / "seed-incident"
SEED_UNIT = "sglang-k26.service"
SEED_YEAR = 2026


def have_journal_remote() -> bool:
    return JOURNAL_REMOTE.exists() and shutil.which("journalctl") is not None


def have_systemd_python() -> bool:
    try:
        import systemd.journal  # noqa: F401
    except ImportError:
        return False
    return True


def export_entry(fields: Iterable[tuple[str, str | bytes]]) -> bytes:
    """One entry in journal export format; values with control bytes are length-prefixed."""
    out = bytearray()
    for name, value in fields:
        data = value.encode() if isinstance(value, str) else value
        if any(byte < 32 and byte != 9 for byte in data):
            out += name.encode() + b"\n" + len(data).to_bytes(8, "little") + data + b"\n"
        else:
            out += name.encode() + b"=" + data + b"\n"
    return bytes(out + b"\n")


def build_journal(export: bytes, path: Path) -> Path:
    """Write `export` into a real journal file at `path` (its name must end in .journal)."""
    result = subprocess.run([str(JOURNAL_REMOTE), f"--output={path}", "-"], input=export,
                            capture_output=True, timeout=120)
    if result.returncode != 0 or not path.exists():
        raise RuntimeError(f"systemd-journal-remote failed: {result.stderr.decode(errors='replace')}")
    return path


def render(journal: Path, fmt: str, *args: str, complete: bool = True) -> bytes:
    """`journalctl --file JOURNAL -o FMT --all ARGS` in UTC (without --all when not `complete`)."""
    command = ["journalctl", f"--file={journal}", "-o", fmt, *(["--all"] if complete else []), "--no-pager", *args]
    result = subprocess.run(command, capture_output=True, timeout=120, env={**os.environ, "TZ": "UTC"})
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.decode(errors='replace')}")
    return result.stdout


# -- the seed scenario as journal entries ----------------------------------------------------

_SHORT = re.compile(r"^(?P<mon>\w{3}) (?P<day>[ \d]\d) (?P<hms>\d\d:\d\d:\d\d) (?P<host>\S+) "
                    r"(?P<ident>[^\s\[]+)\[(?P<pid>\d+)\]: (?P<msg>.*)$")
_MONTHS = {name: number for number, name in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}
# MESSAGE_IDs systemd gives these lines (sd-messages.h), with their priorities.
_SYSTEMD_LINES: tuple[tuple[re.Pattern[str], str | None, int], ...] = (
    (re.compile(r"^Started "), "39f53479d3a045ac8e11786248231fbf", 6),
    (re.compile(r": Main process exited, code=(\w+), status=(\d+)"), "98e322203f7a4ed290d09fe03c09fe15", 5),
    (re.compile(r": Failed with result '([^']+)'"), "d9b373ed55a64feb8242e02dbe79a49c", 4),
    (re.compile(r": Consumed "), "ae8f7b866b0347b9af31fe1c80b127c0", 6),
    (re.compile(r": Killing process "), None, 5),
)
_BOOT_ID = "5f0c2f4e8a3b4d0c9e51a7d2c4b6e8f1"
_MACHINE_ID = "b8c2d9e4f1a6473c8d5e2f9a0b1c3d4e"
_BOOTED = datetime(2026, 5, 25, 19, 2, 11, tzinfo=UTC)


def _hex_id(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:32]


def short_to_entries(text: str, unit: str = SEED_UNIT, year: int = SEED_YEAR, salt: str = "") -> list[list[tuple[str, str]]]:
    """The journal entries behind `journalctl -u UNIT` short output (one line = one entry).
    `salt` gives another machine's boot, machine and invocation ids (the seed's when empty)."""
    entries: list[list[tuple[str, str]]] = []
    boot_id = _hex_id("boot", salt) if salt else _BOOT_ID
    machine_id = _hex_id("machine", salt) if salt else _MACHINE_ID
    invocation = _hex_id(unit, 0, salt) if salt else _hex_id(unit, 0)
    runs = 0
    last_usec = 0
    for line in text.splitlines():
        match = _SHORT.match(line)
        if match is None:
            raise ValueError(f"not a short-format line: {line!r}")
        month, day = _MONTHS[match["mon"]], int(match["day"])
        hour, minute, second = (int(part) for part in match["hms"].split(":"))
        stamp = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
        usec = int(stamp.timestamp()) * 1_000_000
        usec = max(usec, last_usec + 1000)  # one millisecond apart within a second: time order kept
        last_usec = usec
        message, pid, host = match["msg"], match["pid"], match["host"]
        monotonic = str(usec - int(_BOOTED.timestamp()) * 1_000_000)
        common = [("__REALTIME_TIMESTAMP", str(usec)), ("__MONOTONIC_TIMESTAMP", monotonic), ("_BOOT_ID", boot_id)]
        if pid == "1":
            if message.startswith("Started " + unit):
                runs += 1
                invocation = _hex_id(unit, runs, salt) if salt else _hex_id(unit, runs)
            known = [(message_id, priority) for pattern, message_id, priority in _SYSTEMD_LINES if pattern.search(message)]
            message_id, priority = known[0] if known else (None, 6)
            fields = [*common, ("PRIORITY", str(priority)), ("SYSLOG_FACILITY", "3"), ("SYSLOG_IDENTIFIER", "systemd"),
                      ("_PID", "1"), ("_UID", "0"), ("_GID", "0"), ("_COMM", "systemd"),
                      ("_EXE", "/usr/lib/systemd/systemd"), ("_CMDLINE", "/sbin/init"),
                      ("_SYSTEMD_CGROUP", "/init.scope"), ("_SYSTEMD_UNIT", "init.scope"),
                      ("_SYSTEMD_SLICE", "-.slice"), ("_TRANSPORT", "journal")]
            if message_id:
                fields.append(("MESSAGE_ID", message_id))
            if unit in message:
                fields += [("UNIT", unit), ("INVOCATION_ID", invocation)]
        else:
            fields = [*common, ("PRIORITY", "6"), ("SYSLOG_FACILITY", "3"), ("SYSLOG_IDENTIFIER", match["ident"]),
                      ("_PID", pid), ("_UID", "0"), ("_GID", "0"), ("_COMM", match["ident"]),
                      ("_EXE", "/usr/bin/python3.12"), ("_SYSTEMD_CGROUP", f"/system.slice/{unit}"),
                      ("_SYSTEMD_UNIT", unit), ("_SYSTEMD_SLICE", "system.slice"),
                      ("_SYSTEMD_INVOCATION_ID", invocation), ("_STREAM_ID", _hex_id("stream", pid)),
                      ("_TRANSPORT", "stdout")]
        fields += [("_HOSTNAME", host), ("_MACHINE_ID", machine_id), ("MESSAGE", message)]
        entries.append(fields)
    return entries


def entries_export(entries: Iterable[Iterable[tuple[str, str | bytes]]]) -> bytes:
    return b"".join(export_entry(fields) for fields in entries)


def make_seed_export(text: str) -> bytes:
    """journal.txt -> export -> a real journal file -> the real `journalctl -o export --all`."""
    with tempfile.TemporaryDirectory() as directory:
        journal = build_journal(entries_export(short_to_entries(text)), Path(directory) / "seed.journal")
        return render(journal, "export")


def main(argv: list[str]) -> int:
    if argv[1:] != ["seed"]:
        print("usage: python -m tests.journal_tools seed", file=sys.stderr)
        return 2
    export = make_seed_export((SEED / "journal.txt").read_text())
    (SEED / "journal.export").write_bytes(export)
    print(f"wrote {SEED / 'journal.export'} ({len(export)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
