"""Where records come from: the command line's sources as one iterator of Records.

- FILE arguments and stdin: the format is detected from the first bytes (readers.detect); a
  FILE that is a native journal file is read as the journal.
- The journal: `--file`, `--directory`, or the live journal of this machine, selected with
  `-u`, `--since`, `--until`, `-b` and `--after-cursor` as journalctl selects. Read through
  systemd-python when it is installed (read/native.py), else through `journalctl -o export`
  (read/journalctl.py).

What had to be skipped or cut is counted in a ReadProblems for the caller to report; an input
in which nothing at all could be read is an InputError.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO, Iterable, Iterator, Protocol, cast

from logsift import read as readers
from logsift.exceptions import InputError, UsageError
from logsift.read.selection import Selection
from logsift.read.text import Skipping
from logsift.records import ReadProblems, Record

BACKENDS = ("auto", "python", "journalctl")


def journal_records(selection: Selection, problems: ReadProblems, backend: str = "auto",
                    skipping: Skipping | None = None) -> Iterator[Record]:
    """Records of the journal: systemd-python when installed (or asked for), else journalctl."""
    if backend not in BACKENDS:
        raise UsageError(f"unknown journal reader {backend!r}; known: {', '.join(BACKENDS)}")
    if backend != "journalctl":
        try:
            from logsift.read import native
        except ImportError:
            if backend == "python":
                raise InputError("systemd-python is not installed: pip install 'logsift[journal]' "
                                 "(it compiles: apt-get install libsystemd-dev pkg-config gcc)") from None
        else:
            return native.read_journal(selection, problems, skipping)
    from logsift.read.journalctl import read_journalctl

    return read_journalctl(selection, problems, skipping=skipping)


class Progress(Protocol):
    """Told how far the reading of byte streams has come (a progress bar, say)."""

    def start(self, name: str, total: int | None) -> None: ...

    def advance(self, size: int) -> None: ...

    def finish(self) -> None: ...


class _Counted:
    """A byte stream that tells `progress` how much of it has been read."""

    def __init__(self, stream: BinaryIO, progress: Progress) -> None:
        self.stream = stream
        self.progress = progress

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.progress.advance(len(data))
        return data


def _size(stream: BinaryIO) -> int | None:
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def file_records(paths: Iterable[str], fmt: str, problems: ReadProblems, backend: str = "auto",
                 skipping: Skipping | None = None, progress: Progress | None = None) -> Iterator[Record]:
    """Records of FILE arguments ("-" is stdin), each in its own (detected) format.

    Like grep, one input that cannot be read (missing, binary, a read error half-way) does not
    cost the others: it is named in `problems.files` and the next one is read. With a single
    input, or when no input could be read at all, it is an InputError."""
    paths = tuple(paths)
    failures: list[InputError] = []
    for path in paths:
        try:
            yield from _file_records(path, fmt, problems, backend, skipping, progress)
        except InputError as error:
            if len(paths) == 1:
                raise
            failures.append(error)
            problems.lose_file(error.where or path, error.message)
    if failures and len(failures) == len(paths):
        raise InputError(f"none of the {len(paths)} inputs could be read; the first: {failures[0]}")


def _file_records(path: str, fmt: str, problems: ReadProblems, backend: str, skipping: Skipping | None,
                  progress: Progress | None) -> Iterator[Record]:
    stream: BinaryIO = readers.open_input(path)
    try:
        if path != "-" and fmt == "auto" and _is_journal_file(stream):
            stream.close()
            yield from journal_records(Selection(files=(path,)), problems, backend, skipping)
            return
        counted = stream
        if progress is not None:
            progress.start(path, _size(stream))
            counted = cast(BinaryIO, _Counted(stream, progress))
        try:
            yield from readers.read(counted, path, fmt, problems, skipping)
        except OSError as error:  # EIO half-way (a failing disk, /proc/self/mem): keep what was read
            raise InputError(f"read error: {readers.describe_os_error(error)}", path) from None
    finally:
        if progress is not None:
            progress.finish()
        if path != "-":
            stream.close()


def records(paths: Iterable[str], fmt: str, selection: Selection, problems: ReadProblems,
            backend: str = "auto", skipping: Skipping | None = None,
            progress: Progress | None = None) -> Iterator[Record]:
    """Every record the command line names; bad ones counted in `problems`. Raises InputError
    at the end when nothing at all could be read but something was skipped (pure garbage)."""
    paths = tuple(paths)
    if selection.wanted:
        if paths:
            raise UsageError("FILE arguments cannot be combined with journal options (--file, --directory, "
                             "-u, -b, --since, --until, --after-cursor); filter with journalctl first: "
                             "journalctl -u UNIT -b | logsift")
        source = journal_records(selection, problems, backend, skipping)
    else:
        source = file_records(paths or ("-",), fmt, problems, backend, skipping, progress)
    count = 0
    for record in source:
        count += 1
        yield record
    if not count and problems.bad.count:
        raise InputError(f"nothing could be read: {problems.warnings()[0]}")


def _is_journal_file(stream: BinaryIO) -> bool:
    try:
        if not stream.seekable():
            return False
        head = stream.read(len(readers.JOURNAL_MAGIC))
        stream.seek(0)
    except OSError:
        return False
    return head == readers.JOURNAL_MAGIC
