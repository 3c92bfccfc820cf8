"""The journal without systemd-python: run `journalctl -o export --all` with the same filters
and read its output with the export reader.

Export is binary-safe and complete (`--all`: nothing nulled or shown as blob data), and
journalctl applies its own semantics to -u, -b, --since and --after-cursor, which the native
reader mirrors. Records are renumbered as the lines of `journalctl ... -o short` for the same
selection, as the native reader numbers them, so both paths point at the same line.
"""

from __future__ import annotations

import contextlib
import fcntl
import heapq
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, cast

from logsift.exceptions import InputError
from logsift.read.export import ExportReader, sequence_number
from logsift.read.selection import JOURNAL_DEPTH, NO_JOURNAL, Selection, journal_files
from logsift.read.text import Skipping
from logsift.records import ReadProblems, Record

PIPE_SIZE = 1 << 20  # a bigger pipe lets journalctl run ahead of the reader (PERFORMANCE.md)
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def command(selection: Selection, journalctl: str = "journalctl") -> list[str]:
    argv = [journalctl, "--output=export", "--all", "--no-pager"]
    argv.extend(f"--file={path}" for path in selection.files)
    if selection.directory:
        # journalctl -D looks only one level of machine-id folders deep; name every file instead
        argv.extend(f"--file={path}" for path in journal_files(selection.directory))
    argv.extend(f"--unit={unit}" for unit in selection.units)
    if selection.since_usec is not None:
        argv.append(f"--since=@{selection.since_usec / 1e6:.6f}")
    if selection.until_usec is not None:
        argv.append(f"--until=@{selection.until_usec / 1e6:.6f}")
    if selection.boot is not None:
        argv.append(f"--boot={selection.boot or '0'}")
    if selection.after_cursor:
        argv.append(f"--after-cursor={selection.after_cursor}")
    return argv


def _local_journal_files() -> bool:
    """Whether this machine has a journal for journalctl to read (what it opens by default)."""
    for root in (Path("/var/log/journal"), Path("/run/log/journal")):
        for pattern in ("*.journal", "*/*.journal", "*.journal~", "*/*.journal~"):
            if next(root.glob(pattern), None) is not None:
                return True
    return False


def find_journalctl() -> str | None:
    return shutil.which("journalctl") or next(
        (path for path in ("/usr/bin/journalctl", "/bin/journalctl") if os.access(path, os.X_OK)), None
    )


def read_journalctl(selection: Selection, problems: ReadProblems | None = None,
                    journalctl: str | None = None, skipping: Skipping | None = None) -> Iterator[Record]:
    """Records of the selected entries, read from a journalctl child process; with `skipping`
    (and one child), only of the entries that may matter (logsift.read.export_skim)."""
    problems = problems if problems is not None else ReadProblems()
    program = journalctl or find_journalctl()
    if program is None:
        raise InputError("cannot read the journal: neither systemd-python nor journalctl is installed; "
                         "install one: pip install 'logsift[journal]' (needs apt-get install libsystemd-dev "
                         "pkg-config gcc), or apt-get install systemd")
    source = selection.source
    if not selection.files and not selection.directory and not _local_journal_files():
        raise InputError(NO_JOURNAL)  # journalctl -o export would print nothing and exit 0
    if selection.directory and not journal_files(selection.directory):
        raise InputError(f"no journal files in {selection.directory} (looked {JOURNAL_DEPTH} folders deep)")
    if skipping is not None and not selection.units:
        yield from _skim(command(selection, program), selection, problems, skipping)
        return
    streams = [_child(command(selection, program), selection, source, problems)]
    if selection.units:
        # journalctl -u leaves out the kernel, whose Xid or OOM-killer line may be what killed the
        # unit: read the kernel's entries of the same window too (a second child: journalctl
        # cannot OR a match with -u).
        kernel = [*command(replace(selection, units=()), program), "_TRANSPORT=kernel"]
        streams.append(_child(kernel, selection, source, problems))
    line = 1
    boot: str | None = None
    ordered = streams[0] if len(streams) == 1 else heapq.merge(*streams, key=_realtime)
    for record in ordered:
        if boot is not None and record.boot != boot:
            line += 1  # journalctl -o short prints "-- Boot ... --" here
        boot = record.boot
        yield replace(record, line=line, entry=sequence_number(record.fields or {}))
        line += record.lines


class _Numbering:
    """Lines as `journalctl -o short` shows the entries: as many as the MESSAGE has, and a
    boot separator where _BOOT_ID changes."""

    def __init__(self) -> None:
        self.line = 1
        self.boot: str | None = None

    def entry(self, boot: str | None, lines: int = 1) -> int:
        """The number of the entry's first line; the counter moves past it."""
        if self.boot is not None and boot != self.boot:
            self.line += 1
        self.boot = boot
        number = self.line
        self.line += lines
        return number

    def skipped(self, boot: bytes | None) -> None:
        # the fast path leaves only entries whose MESSAGE has no line break: one line each
        self.entry(boot.decode("ascii", "replace") if boot is not None else None)

    def read(self) -> int:
        return self.line - 1


def _skim(argv: list[str], selection: Selection, problems: ReadProblems, skipping: Skipping) -> Iterator[Record]:
    """read_journalctl's loop over one child whose reader leaves entries unparsed: those are
    numbered all the same."""
    from logsift.read.export_skim import SkimmingExportReader

    numbering = _Numbering()

    def numbered(record: Record) -> Record:
        line = numbering.entry(record.boot, record.lines)
        return replace(record, line=line, entry=sequence_number(record.fields or {}))

    reader = SkimmingExportReader(selection.source, problems, skipping, numbering.skipped, numbered)
    reader.count_lines = numbering.read
    yield from _child(argv, selection, selection.source, problems, reader)


def _realtime(record: Record) -> int:
    text = (record.fields or {}).get("__REALTIME_TIMESTAMP", "")
    return int(text) if text.isdigit() else 0


def _child(argv: list[str], selection: Selection, source: str, problems: ReadProblems,
           reader: ExportReader | None = None) -> Iterator[Record]:
    """The records a journalctl child prints in export format; its failure as an InputError."""
    with tempfile.TemporaryFile() as errors:
        # stderr to a file, not a pipe: a chatty journalctl must not block while we read stdout.
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors,
                                 stdin=subprocess.DEVNULL, env={**os.environ, "SYSTEMD_COLORS": "0"})
        assert child.stdout is not None
        try:
            with contextlib.suppress(OSError):  # a smaller pipe only costs speed
                fcntl.fcntl(child.stdout.fileno(), F_SETPIPE_SZ, PIPE_SIZE)
            yield from (reader or ExportReader(source, problems)).read(cast(BinaryIO, child.stdout))
            status = child.wait()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()
        if status != 0:
            errors.seek(0)
            message = " ".join(errors.read(4096).decode("utf-8", "replace").split()) or f"exit status {status}"
            hint = " (a damaged or cut journal file? check it: journalctl --file PATH --verify)" if selection.files else ""
            raise InputError(f"journalctl failed: {message}{hint}", source)


# -- follow mode --------------------------------------------------------------------------

_ROTATION_CHECK = 1.0  # seconds between checks that a --file was replaced (rotated)
_RESYNC = 5.0  # seconds of silence after which a child following files is started again (see _Rotation)


def follow_command(selection: Selection, start: str, cursor: str | None, journalctl: str = "journalctl") -> list[str]:
    """`journalctl --follow -o export` for a start: head, tail, since, cursor (inclusive), after."""
    argv = command(Selection(selection.files, selection.directory, selection.units, boot=selection.boot), journalctl)
    argv.append("--follow")
    if (selection.files or selection.directory) and selection.boot is None:
        # --follow alone implies the latest boot in the files (systemd 252: a file of other
        # boots, or an empty one, gives "No such boot ID"); --merge reads them all.
        argv.append("--merge")
    # --follow alone shows only the last 10 entries before following, whatever the start.
    if start == "cursor" and cursor:
        argv += [f"--cursor={cursor}", "--lines=all"]
    elif start == "after" and cursor:
        argv += [f"--after-cursor={cursor}", "--lines=all"]
    elif start == "since" and selection.since_usec is not None:
        argv += [f"--since=@{selection.since_usec / 1e6:.6f}", "--lines=all"]
    elif start == "tail":
        argv.append("--lines=0")
    else:
        argv.append("--lines=all")
    return argv


def follow_journalctl(selection: Selection, problems: ReadProblems | None, start: str, cursor: str | None = None,
                      stop: Any = None, on_idle: Callable[[], None] = lambda: None) -> Iterator[Record]:
    """Follow mode without systemd-python: records from a `journalctl --follow -o export` child,
    `start` and `cursor` as for `native.follow_journal`; `on_idle` is called each time the child
    has nothing more for now. journalctl does not notice that a `--file` it follows was replaced
    by a new file (rotated): then the child is restarted after the last entry read."""
    from logsift.read.live import LiveStream

    problems = problems if problems is not None else ReadProblems()
    program = find_journalctl()
    if program is None:
        raise InputError("cannot follow the journal: neither systemd-python nor journalctl is installed")
    source = selection.source
    if not selection.files and not selection.directory and not _local_journal_files():
        raise InputError(NO_JOURNAL)  # journalctl --follow would wait for ever
    line = 1
    last = cursor
    while stop is None or not stop.is_set():
        watcher = _Rotation(selection, stop)
        with tempfile.TemporaryFile() as errors:
            child = subprocess.Popen(follow_command(selection, start, last, program), stdout=subprocess.PIPE,
                                     stderr=errors, stdin=subprocess.DEVNULL, env={**os.environ, "SYSTEMD_COLORS": "0"})
            assert child.stdout is not None
            try:
                stream = LiveStream(child.stdout.fileno(), watcher.idle(on_idle), watcher.check)
                for record in ExportReader(source, problems).read(cast(BinaryIO, stream)):
                    last = record.cursor or last
                    yield replace(record, line=line, entry=sequence_number(record.fields or {}))
                    line += record.lines
            finally:
                if child.poll() is None:
                    child.kill()
                status = child.wait()
                child.stdout.close()
            if watcher.rotated:
                start = "after" if last else start
                continue
            # Stopped, or killed by the stop signal along with us (systemd signals the whole cgroup).
            if stop is not None and (stop.is_set() or (status < 0 and stop.wait(1.0))):
                return
            errors.seek(0)
            message = " ".join(errors.read(4096).decode("utf-8", "replace").split()) or f"exit status {status}"
            raise InputError(f"journalctl --follow ended: {message}", source)


class _Rotation:
    """Tells a live stream to end (so that the child is started again after the last entry read)
    when the followed --file or --directory files changed (rotated, vacuumed), and after
    `_RESYNC` seconds of silence: `journalctl --follow` learns of new entries in a file from
    inotify, and one written while it was starting is seen only at the next write, which in a
    journal nobody writes to any more never comes. Never for the live journal (journald writes on)."""

    def __init__(self, selection: Selection, stop: Any) -> None:
        from logsift.read.live import journal_set

        self.selection = selection
        self.stop = stop
        self.files = journal_set(selection.files, selection.directory)
        self.checked = self.quiet_since = time.monotonic()
        self.rotated = False

    def idle(self, on_idle: Callable[[], None]) -> Callable[[], None]:
        def told() -> None:
            self.quiet_since = time.monotonic()
            on_idle()

        return told

    def check(self) -> bool:
        from logsift.read.live import journal_set, replaced

        if self.stop is not None and self.stop.is_set():
            return False
        selection = self.selection
        if not (selection.files or selection.directory):
            return True
        now = time.monotonic()
        if now - self.checked >= _ROTATION_CHECK:
            self.checked = now
            if replaced(self.files, journal_set(selection.files, selection.directory)):
                self.rotated = True
                return False
        if now - self.quiet_since >= _RESYNC:
            self.rotated = True
            return False
        return True
