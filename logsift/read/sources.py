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

from typing import BinaryIO, Iterable, Iterator

from logsift import read as readers
from logsift.exceptions import InputError, UsageError
from logsift.read.selection import Selection
from logsift.records import ReadProblems, Record

BACKENDS = ("auto", "python", "journalctl")


def journal_records(selection: Selection, problems: ReadProblems, backend: str = "auto") -> Iterator[Record]:
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
            return native.read_journal(selection, problems)
    from logsift.read.journalctl import read_journalctl

    return read_journalctl(selection, problems)


def file_records(paths: Iterable[str], fmt: str, problems: ReadProblems, backend: str = "auto") -> Iterator[Record]:
    """Records of FILE arguments ("-" is stdin), each in its own (detected) format."""
    for path in paths:
        stream: BinaryIO = readers.open_input(path)
        try:
            if path != "-" and fmt == "auto" and _is_journal_file(stream):
                stream.close()
                yield from journal_records(Selection(files=(path,)), problems, backend)
                continue
            yield from readers.read(stream, path, fmt, problems)
        finally:
            if path != "-":
                stream.close()


def records(paths: Iterable[str], fmt: str, selection: Selection, problems: ReadProblems,
            backend: str = "auto") -> Iterator[Record]:
    """Every record the command line names; bad ones counted in `problems`. Raises InputError
    at the end when nothing at all could be read but something was skipped (pure garbage)."""
    paths = tuple(paths)
    if selection.wanted:
        if paths:
            raise UsageError("FILE arguments cannot be combined with journal options (--file, --directory, "
                             "-u, -b, --since, --until, --after-cursor); filter with journalctl first: "
                             "journalctl -u UNIT -b | logsift")
        source = journal_records(selection, problems, backend)
    else:
        source = file_records(paths or ("-",), fmt, problems, backend)
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
