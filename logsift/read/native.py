"""Native journal files and the live journal, through systemd-python (`pip install
'logsift[journal]'`, which compiles against libsystemd: `apt-get install libsystemd-dev
pkg-config`). This module is imported only when a journal is read, so logsift runs without it;
logsift.read.sources falls back to `journalctl -o export` (logsift.read.journalctl).

Filters follow journalctl's semantics so that both paths select the same entries:
`-u UNIT` also takes PID 1's lines about the unit (`_PID=1` + `UNIT=`), coredumps of it and
lines logged about it (`OBJECT_SYSTEMD_UNIT=`); `-b` with no value is the latest boot in the
files; `--until` stops at the first later entry. Records are numbered as the lines of
`journalctl ... -o short` for the same selection (a multi-line MESSAGE takes several, a boot
separator one), so evidence line numbers can be checked there.
"""

from __future__ import annotations

import fnmatch
from typing import Any, Iterator

from systemd import _reader  # the low-level reader: no per-field conversion, 2-5x faster

from logsift.exceptions import InputError
from logsift.read.export import FIELD_CAP, MAX_FIELDS, MESSAGE_CAP, entry_record
from logsift.read.lines import TRUNCATED
from logsift.read.selection import JOURNAL_DEPTH, NO_JOURNAL, Selection, journal_files, mangle_unit
from logsift.records import ReadProblems, Record

LOCAL_ONLY = 1  # SD_JOURNAL_LOCAL_ONLY, what journalctl opens by default
_COREDUMP = "fc2e22bc6ee647b6b90729ab34a250b1"
_VERIFY = " (a damaged or cut journal file? check it: journalctl --file PATH --verify)"


def open_journal(selection: Selection) -> Any:
    try:
        if selection.directory:
            files = journal_files(selection.directory)
            if not files:
                raise InputError(f"no journal files in {selection.directory} (looked {JOURNAL_DEPTH} folders deep)")
            return _reader._Reader(0, None, list(files))
        if selection.files:
            return _reader._Reader(0, None, list(selection.files))
        return _reader._Reader(LOCAL_ONLY)
    except OSError as error:
        raise InputError(f"cannot open the journal: {error.strerror or error}{_VERIFY}", selection.source) from None
    except ValueError:
        raise InputError("cannot open the journal: not a journal file or directory, or no permission",
                         selection.source) from None


def read_journal(selection: Selection, problems: ReadProblems | None = None) -> Iterator[Record]:
    """Records of the selected entries, oldest first (files of several hosts interleaved by time)."""
    problems = problems if problems is not None else ReadProblems()
    journal = open_journal(selection)
    try:
        if not selection.files and not selection.directory and not (journal.has_persistent_files() or journal.has_runtime_files()):
            raise InputError(NO_JOURNAL)
        journal.data_threshold = MESSAGE_CAP + 1  # longer values come back cut at this size
        if _apply(journal, selection):
            yield from _entries(journal, selection, problems)
    finally:
        journal.close()


def _apply(journal: Any, selection: Selection) -> bool:
    """Set matches and the start position; False when nothing can match (a glob matched no unit)."""
    boot = _boot_id(journal, selection) if selection.boot is not None else None
    units = _units(journal, selection.units)
    if selection.units and not units:
        return False
    for unit in units:
        journal.add_match(f"_SYSTEMD_UNIT={unit}")
        journal.add_disjunction()
        for group in ((f"MESSAGE_ID={_COREDUMP}", "_UID=0", f"COREDUMP_UNIT={unit}"),
                      ("_PID=1", f"UNIT={unit}"), ("_UID=0", f"OBJECT_SYSTEMD_UNIT={unit}")):
            for match in group:  # different fields in one group: all must hold
                journal.add_match(match)
            journal.add_disjunction()
    if units:
        # journalctl -u leaves out the kernel, whose Xid or OOM-killer line may be what killed
        # the unit; diagnosis gives a kernel line only to a run that failed right after it.
        journal.add_match("_TRANSPORT=kernel")
        journal.add_disjunction()
    if boot is not None:
        journal.add_conjunction()
        journal.add_match(f"_BOOT_ID={boot}")
    if selection.after_cursor:
        try:
            journal.seek_cursor(selection.after_cursor)
        except (OSError, ValueError):
            raise InputError(f"invalid cursor {selection.after_cursor!r}", selection.source) from None
    elif selection.since_usec is not None:
        journal.seek_realtime(selection.since_usec)
    return True


def _units(journal: Any, names: tuple[str, ...]) -> list[str]:
    units: list[str] = []
    for name in names:
        unit = mangle_unit(name)
        if not any(char in unit for char in "*?["):
            units.append(unit)
            continue
        known: set[str] = set()
        for field in ("_SYSTEMD_UNIT", "COREDUMP_UNIT", "UNIT", "OBJECT_SYSTEMD_UNIT"):
            known.update(value.decode("utf-8", "replace") for value in journal.query_unique(field))
        units.extend(sorted(value for value in known if fnmatch.fnmatchcase(value, unit)))
    return units


def _boot_id(journal: Any, selection: Selection) -> str:
    """The boot that `-b VALUE` names: an ID, or an offset into the boots ordered by time."""
    value = (selection.boot or "0").strip()
    boots = sorted(_boots(journal))
    if len(value) == 32 and all(char in "0123456789abcdef" for char in value.lower()):
        if value.lower() not in {boot for _, boot in boots}:
            raise InputError(f"no boot {value} in the journal (list them: journalctl --list-boots)", selection.source)
        return value.lower()
    try:
        offset = int(value)
    except ValueError:
        raise InputError(f"-b {value!r}: give a boot ID or an offset such as 0 or -1", selection.source) from None
    index = len(boots) - 1 + offset if offset <= 0 else offset - 1
    if not 0 <= index < len(boots):
        raise InputError(f"no boot {offset} in the journal: it holds {len(boots)} boot(s)", selection.source)
    return boots[index][1]


def _boots(journal: Any) -> Iterator[tuple[int, str]]:
    for raw in journal.query_unique("_BOOT_ID"):
        boot = raw.decode("ascii", "replace")
        journal.flush_matches()
        journal.add_match(f"_BOOT_ID={boot}")
        journal.seek_head()
        if journal._next():
            yield journal._get_realtime(), boot
    journal.flush_matches()
    journal.seek_head()


def _entries(journal: Any, selection: Selection, problems: ReadProblems) -> Iterator[Record]:
    source = selection.source
    since, until = selection.since_usec, selection.until_usec
    line = 1
    boot: bytes | None = None
    more = journal._next()
    if more and selection.after_cursor and journal.test_cursor(selection.after_cursor):
        more = journal._next()  # the cursor's own entry was read last time; when it is gone, keep this one
    while more:
        realtime = journal._get_realtime()
        if until is not None and realtime > until:
            break
        if since is None or realtime >= since:
            raw = journal._get_all()
            this_boot = raw.get("_BOOT_ID")
            if boot is not None and this_boot != boot:
                line += 1  # journalctl prints "-- Boot ... --" here
            boot = this_boot
            record = _record(journal, raw, realtime, source, line, problems)
            if record is not None:
                yield record
                line += record.lines
        more = journal._next()


def _record(journal: Any, raw: dict[str, Any], realtime: int, source: str, line: int,
            problems: ReadProblems) -> Record | None:
    message = raw.pop("MESSAGE", None)
    if message is None:
        problems.skip(f"{source}:{line}", "entry has no MESSAGE field")
        return None
    fields = _fields(raw)
    fields["__CURSOR"] = journal._get_cursor()
    fields["__REALTIME_TIMESTAMP"] = str(realtime)
    text = _message(message, problems, f"{source}:{line}")
    return entry_record(fields, text, line, source, text.count("\n") + 1, numbered=True)


def _message(value: bytes | list[bytes], problems: ReadProblems, where: str) -> str:
    data = value[0] if isinstance(value, list) else value
    if len(data) > MESSAGE_CAP:
        problems.note("truncated", where)
        return data[:MESSAGE_CAP].decode("utf-8", "replace") + TRUNCATED.format("some")
    return data.decode("utf-8", "replace")


def _fields(raw: dict[str, Any]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for name, value in raw.items():
        if len(fields) >= MAX_FIELDS:
            break
        data = value[0] if isinstance(value, list) else value
        fields[name] = data[:FIELD_CAP].decode("utf-8", "replace")
    return fields
