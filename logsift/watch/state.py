"""The state directory (`--state DIR`): what a restart needs to go on exactly where it stopped.

    DIR/state.json            the checkpoint: journal cursor, where to read again from, the
                              open incidents, the next outbox number, what each sink has taken
    DIR/outbox/000000000042.json   one state change not yet taken by every sink
    DIR/lock                  held while a watch runs, so that two never share a directory

Every file is written whole or not at all: to a temporary file, fsync'd, renamed over the old one,
and the directory fsync'd, so that `kill -9` or a power cut at any point leaves either the old
file or the new one. A checkpoint is written only after the outbox files of every change it covers,
so the cursor never runs ahead of what the outbox holds: a restart either finds a change in the
outbox or reads again the lines that make it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any, Iterable

from logsift.exceptions import InputError, UsageError

VERSION = 1


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` by `data`, durably: tmp + fsync + rename + fsync of the directory."""
    _write_files([(path, data)])
    _sync_directory(path.parent)


def _write_files(files: Iterable[tuple[Path, bytes]]) -> None:
    for path, data in files:
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view):]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)


def _sync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class StateDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.outbox = path / "outbox"
        try:
            self.outbox.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as error:
            raise UsageError(f"--state {path}: cannot create it: {error.strerror or error}") from None
        self._lock = os.open(path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock)
            raise UsageError(f"--state {path}: another logsift watch is using this directory") from None
        for stale in path.glob(".*.tmp"):
            stale.unlink(missing_ok=True)  # a write cut short by a crash
        for stale in self.outbox.glob(".*.tmp"):
            stale.unlink(missing_ok=True)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._lock)

    # -- the checkpoint ---------------------------------------------------------------------

    def load(self) -> dict[str, Any] | None:
        path = self.path / "state.json"
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise InputError(f"unreadable state ({error}); move the directory away to start afresh", str(path)) from None
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise InputError(f"not a state file of this logsift (version {data.get('version') if isinstance(data, dict) else '?'})",
                             str(path))
        return data

    def save(self, checkpoint: dict[str, Any]) -> None:
        body = json.dumps({"version": VERSION, **checkpoint}, ensure_ascii=False, sort_keys=True).encode("utf-8")
        write_atomically(self.path / "state.json", body)

    # -- the outbox ---------------------------------------------------------------------------

    def add(self, entries: Iterable[tuple[int, dict[str, Any]]]) -> None:
        files = [(self._entry(number), json.dumps(change, ensure_ascii=False, sort_keys=True).encode("utf-8"))
                 for number, change in entries]
        if files:
            _write_files(files)
            _sync_directory(self.outbox)

    def entries(self) -> list[tuple[int, dict[str, Any]]]:
        found: list[tuple[int, dict[str, Any]]] = []
        for path in sorted(self.outbox.glob("*.json")):
            try:
                found.append((int(path.stem), json.loads(path.read_bytes())))
            except (ValueError, OSError) as error:
                raise InputError(f"unreadable outbox entry ({error})", str(path)) from None
        return found

    def remove(self, numbers: Iterable[int]) -> None:
        removed = False
        for number in numbers:
            with contextlib.suppress(FileNotFoundError):
                self._entry(number).unlink()
                removed = True
        if removed:
            _sync_directory(self.outbox)

    def _entry(self, number: int) -> Path:
        return self.outbox / f"{number:012d}.json"
