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
from bisect import bisect_left, bisect_right
from itertools import accumulate, islice, repeat
from operator import add
from typing import Any, Iterator

from systemd import _reader  # the low-level reader: no per-field conversion, 2-5x faster

from logsift.exceptions import InputError
from logsift.read.export import FIELD_CAP, MAX_FIELDS, MESSAGE_CAP, entry_record, journal_time
from logsift.read.lines import TRUNCATED
from logsift.read.selection import JOURNAL_DEPTH, NO_JOURNAL, Selection, journal_files, mangle_unit
from logsift.read.text import Skipping
from logsift.records import ReadProblems, Record

LOCAL_ONLY = 1  # SD_JOURNAL_LOCAL_ONLY, what journalctl opens by default
_COREDUMP = "fc2e22bc6ee647b6b90729ab34a250b1"
_VERIFY = " (a damaged or cut journal file? check it: journalctl --file PATH --verify)"
_TRACEBACK = b"Traceback (most recent call last)"


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


def read_journal(selection: Selection, problems: ReadProblems | None = None,
                 skipping: Skipping | None = None) -> Iterator[Record]:
    """Records of the selected entries, oldest first (files of several hosts interleaved by time).
    With `skipping`, only the entries that may matter become records (see _skim)."""
    problems = problems if problems is not None else ReadProblems()
    journal = open_journal(selection)
    try:
        if not selection.files and not selection.directory and not (journal.has_persistent_files() or journal.has_runtime_files()):
            raise InputError(NO_JOURNAL)
        journal.data_threshold = MESSAGE_CAP + 1  # longer values come back cut at this size
        if _apply(journal, selection):
            if skipping is not None:
                yield from _skim(journal, selection, problems, skipping)
            else:
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


SKIM_BATCH = 1024  # entries read ahead, scanned at once, then revisited where they matter
MARK_EVERY = 32  # entries between the cursors kept while reading ahead: where a visit seeks to
PID1_KEPT = 100_000  # PID 1 messages that the skim keeps; past that, every entry's _PID is read
UNREAD = b"?"  # an entry's _PID not read (yet): not a value _PID can have


class _Kernel:
    """The first kernel entry of the selection, until the skim has read it (`cursor` None)."""

    __slots__ = ("message", "cursor")

    def __init__(self, message: bytes, cursor: str) -> None:
        self.message: bytes = message
        self.cursor: str | None = cursor


class _Batch:
    """Entries read ahead: their messages and what is known of them, and the cursors to come
    back to them (`marks`: (index, cursor) ascending; every entry from a mark to the next is
    the one `_next` steps to). `after`: the cursor of the entry that follows the batch, where
    the next batch starts (None: the selection ends with this batch)."""

    __slots__ = ("messages", "pids", "lines", "careful", "marks", "gaps", "after", "start_line")

    def __init__(self, start_line: int, with_lines: bool) -> None:
        self.messages: list[bytes] = []
        self.pids: list[bytes | None] | None = None  # each entry's _PID, when read ahead
        self.lines: list[int] | None = [] if with_lines else None  # each entry's line, unless counted
        self.careful: set[int] = set()  # entries to read in full whatever the scan says
        self.marks: list[tuple[int, str]] = []
        self.gaps = False  # whether entries left out (before --since) lie between two of the batch's
        self.after: str | None = None
        self.start_line = start_line


def _skim(journal: Any, selection: Selection, problems: ReadProblems, skipping: Skipping) -> Iterator[Record]:
    """The entries that may matter, as records: those whose MESSAGE is a candidate of the
    prefilter, PID 1's (runs), and those of a process with an open event. Entries are read
    ahead a batch at a time with the binding's low-level calls, MESSAGE only (no dict of every
    field, no time: each costs a call per entry), with a cursor every MARK_EVERY entries; the
    batch's messages are scanned in one call; then the journal seeks back to the entries that
    matter (the nearest cursor before each, then a few steps) and makes records of those
    alone. `_PID` costs more than MESSAGE (it is one of the last fields of an entry), so it is
    read only while a process has an open event; PID 1's entries are known beforehand from the
    journal's own index (`_pid1_messages`: an entry with one of their messages has its `_PID`
    read). Every entry still counts in the line numbers, the time window and, when nothing
    filters the journal, the hosts."""
    source = selection.source
    since, until = selection.since_usec, selection.until_usec
    several_boots = len(journal.query_unique("_BOOT_ID")) > 1
    get, advance, realtime_of, cursor_of = journal._get, journal._next, journal._get_realtime, journal._get_cursor
    pid1 = _pid1_messages(selection) if not (selection.units or selection.boot is not None) else None
    kernel = _first_kernel(selection)  # that entry is read: the summary says whether there were any
    line = 1
    first: int | None = None
    boot: bytes | None = None
    more = advance()
    if more and selection.after_cursor and journal.test_cursor(selection.after_cursor):
        more = advance()
    done = not more
    simple = since is None and until is None and not several_boots
    last: int | None = None  # the time of the last entry read
    if more:
        first = realtime_of()
    while not done:
        # each entry's _PID is read ahead only while a process has an open event (or when PID
        # 1's entries are too many to know beforehand), else looked up in _visit where the
        # entry may be PID 1's or an open one's
        with_pids = pid1 is None or bool(skipping.wanted)
        batch = _Batch(line, not simple)
        if simple and not with_pids:
            done = _read_ahead(journal, batch)
            if done:
                last = realtime_of()  # the read-ahead ended on the selection's last entry
        else:
            batch.pids = [] if with_pids else None
            mark = True  # the next entry kept needs a cursor (the first, or one after a gap)
            while True:
                if not simple:
                    if since is not None or until is not None:
                        realtime = realtime_of()
                        if until is not None and realtime > until:
                            done = True
                            break
                        if since is not None and realtime < since:
                            mark = True
                            batch.gaps = bool(batch.messages)
                            if not advance():
                                done = True
                                break
                            continue
                    if several_boots:
                        this_boot = _field(get, "_BOOT_ID")
                        if boot is not None and this_boot != boot:
                            line += 1  # journalctl prints "-- Boot ... --" here
                        boot = this_boot
                index = len(batch.messages)
                if mark or index % MARK_EVERY == 0:
                    batch.marks.append((index, cursor_of()))
                    mark = False
                try:
                    message = get("MESSAGE")
                    if len(message) > MESSAGE_CAP:
                        raise KeyError
                except KeyError:
                    batch.careful.add(index)
                    message = b""
                if batch.pids is not None:
                    batch.pids.append(_pid(get))
                batch.messages.append(message)
                if batch.lines is not None:
                    batch.lines.append(line)
                    line += message.count(b"\n") + 1
                if since is not None or until is not None:
                    last = realtime  # an entry past --until, if any, is not the last one read
                full = len(batch.messages) >= SKIM_BATCH
                if full:
                    last = realtime_of()
                if not advance():
                    last = realtime_of()  # a failed step stays on the last entry
                    done = True
                    break
                if full:
                    batch.after = cursor_of()
                    break
        if batch.messages:
            joined = b"\n".join(batch.messages)
            newlines = joined.count(b"\n")  # the separators, and more where a message spans lines
            if batch.lines is None:
                line = batch.start_line + newlines + 1
            yield from _visit(journal, batch, joined, newlines, pid1, kernel, source, problems, skipping)
            if kernel is not None and kernel.cursor is None:
                kernel = None  # it was read
    hosts = () if selection.wanted_entries else [value.decode("utf-8", "replace") for value in journal.query_unique("_HOSTNAME")]
    skipping.done(line - 1, journal_time(str(first)) if first is not None else None,
                  journal_time(str(last)) if last is not None else None, hosts, ())


def _read_ahead(journal: Any, batch: _Batch) -> bool:
    """_skim's read-ahead where nothing but MESSAGE is needed (no time window, one boot, no
    open event): a batch of messages from the current entry on, the journal left on the entry
    after them (`batch.after`). Returns whether the selection ended (the journal stays on its
    last entry)."""
    get, advance, cursor_of = journal._get, journal._next, journal._get_cursor
    messages, careful, marks = batch.messages, batch.careful, batch.marks
    append = messages.append
    for block in range(0, SKIM_BATCH, MARK_EVERY):
        marks.append((block, cursor_of()))
        for _ in range(MARK_EVERY):
            try:
                append(get("MESSAGE"))
            except KeyError:
                careful.add(len(messages))
                append(b"")
            if not advance():
                _cut_long(messages, careful)
                return True  # a failed step stays on the last entry
    _cut_long(messages, careful)
    batch.after = cursor_of()
    return False


def _cut_long(messages: list[bytes], careful: set[int]) -> None:
    """Messages longer than the cap (cut at the data threshold) are read in full, as careful."""
    if messages and max(map(len, messages)) > MESSAGE_CAP:
        for index, message in enumerate(messages):
            if len(message) > MESSAGE_CAP:
                careful.add(index)
                messages[index] = b""


def _pid1_messages(selection: Selection) -> frozenset[bytes] | None:
    """The messages of the entries that PID 1 logged (or systemd without a _PID), from a second
    reader of the same files with the journal's match on them (its index, no scan); None when
    there are too many to keep (then _skim reads every entry's _PID)."""
    messages: set[bytes] = set()
    for match in ("_PID=1", "SYSLOG_IDENTIFIER=systemd"):
        journal = open_journal(selection)
        try:
            journal.data_threshold = MESSAGE_CAP + 1
            journal.add_match(match)
            get = journal._get
            while journal._next():
                try:
                    messages.add(get("MESSAGE"))
                except KeyError:
                    continue  # no MESSAGE: the skim reads such an entry in full anyway
                if len(messages) > PID1_KEPT:
                    return None
        finally:
            journal.close()
    return frozenset(messages)


def _first_kernel(selection: Selection) -> _Kernel | None:
    """The message and cursor of the first kernel entry of the selection (None: there is none)."""
    journal = open_journal(selection)
    try:
        if not _apply(journal, selection):
            return None
        journal.data_threshold = MESSAGE_CAP + 1
        journal.add_conjunction()
        journal.add_match("_TRANSPORT=kernel")
        if not journal._next():
            return None
        message = _field(journal._get, "MESSAGE")
        return _Kernel(message if message is not None and len(message) <= MESSAGE_CAP else b"", journal._get_cursor())
    finally:
        journal.close()


def _pid(get: Any) -> bytes | None:
    try:
        pid: bytes = get("_PID")
    except KeyError:
        # systemd without a _PID: its lines about units count as PID 1's
        return b"1" if _field(get, "SYSLOG_IDENTIFIER") == b"systemd" else None
    return pid


def _indexes(messages: list[bytes], among: frozenset[bytes]) -> set[int]:
    """The indexes of the messages that are in `among`."""
    return {index for index, message in enumerate(messages) if message in among}


def _visit(journal: Any, batch: _Batch, joined: bytes, newlines: int, pid1: frozenset[bytes] | None,
           kernel: _Kernel | None, source: str, problems: ReadProblems, skipping: Skipping) -> Iterator[Record]:
    """Records of the batch's entries that matter; the journal is left on the entry after the
    batch (`batch.after`). While no process has an open event, it goes from one entry that
    matters to the next (those the scan found, PID 1's, the careful ones, the entries with a
    message PID 1 or the first kernel entry logged, to be confirmed); while one has, it looks
    at every entry."""
    messages, pids, careful = batch.messages, batch.pids, batch.careful
    ids: dict[int, list[int]] = {}
    plain = skipping.plain_only  # never a journal entry's (Skipping.plain_only)
    candidates = [item for item in skipping.candidates(joined) if not (plain and plain.issuperset(item[1]))]
    starts: list[int] | None = None  # where each message starts in `joined`, when one spans lines
    if newlines != len(messages) - 1 or candidates:
        starts = list(accumulate(map(add, map(len, messages), repeat(1)), initial=0))  # (C iterators: no bytecode per entry)
        for start, entry_ids in candidates:
            ids.setdefault(bisect_right(starts, start) - 1, []).extend(entry_ids)
        if newlines == len(messages) - 1:
            starts = None  # one line per entry: entry N is the batch's line N
    # entries to look at (their _PID, or their cursor) before they are read in full
    maybe = _indexes(messages, pid1) if pid1 is not None and pids is None else set()
    kernel_cursor = kernel.cursor if kernel is not None else None
    if kernel is not None and kernel_cursor is not None:
        maybe.update(_indexes(messages, frozenset((kernel.message,))))
    ones = {index for index, pid in enumerate(pids) if pid == b"1"} if pids is not None else set()
    # The entry before a traceback's header: a logger's line there says at what level the
    # traceback was logged (python logging's exc_info), as the text reader reads it (group.py).
    heads = {index - 1 for index in ids if index and index - 1 not in ids and _TRACEBACK in messages[index]}
    chosen = sorted({*ids, *careful, *maybe, *ones, *heads})
    last = len(messages) - 1
    at: int | None = None  # the entry the journal is on, when it is one of the batch's
    wanted = skipping.wanted
    get = journal._get
    counted_at, counted = 0, batch.start_line  # the line number of entry `counted_at` (multi-line batches)
    index = 0
    while index <= last:
        if not wanted:
            following = bisect_left(chosen, index)
            if following == len(chosen):
                break
            index = chosen[following]
        pid = pids[index] if pids is not None else UNREAD
        sure = index in ids or index in careful or pid == b"1" or index in heads
        if not sure and index not in maybe and not (wanted and (pid is UNREAD or _open(pid, wanted))):
            index += 1
            continue
        if not _go(journal, batch, at, index):
            break
        at = index
        if not sure:
            if kernel_cursor is not None and index in maybe and journal.test_cursor(kernel_cursor):
                pass  # the first kernel entry: read in full below
            else:
                if pid is UNREAD:
                    pid = _pid(get)
                if not (pid == b"1" or (wanted and _open(pid, wanted))):
                    index += 1
                    continue
        if batch.lines is not None:
            number = batch.lines[index]
        elif starts is None:
            number = batch.start_line + index
        else:
            counted += joined.count(b"\n", starts[counted_at], starts[index])
            counted_at, number = index, counted
        record = _record(journal, journal._get_all(), journal._get_realtime(), source, number, problems)
        if record is not None:
            if kernel is not None and kernel_cursor is not None and record.cursor == kernel_cursor:
                kernel.cursor = kernel_cursor = None  # it was read
            skipping.found(record, ids.get(index, ()))
            yield record
        index += 1
    if batch.after is not None and at is not None:  # (not moved: still on it)
        if last - at < MARK_EVERY and not batch.gaps:
            journal._next(last + 1 - at)
        else:
            journal.seek_cursor(batch.after)
            journal._next()


def _go(journal: Any, batch: _Batch, at: int | None, index: int) -> bool:
    """Put the journal on the batch's entry `index`: steps forward from where it is when that
    is near, else a seek to the nearest cursor kept before it and steps from there."""
    if at is not None and 0 <= index - at <= MARK_EVERY and not batch.gaps:
        return at == index or bool(journal._next(index - at))
    mark_index, cursor = batch.marks[bisect_right(batch.marks, (index, "\uffff")) - 1]
    if at is not None and mark_index <= at <= index:
        return at == index or bool(journal._next(index - at))
    journal.seek_cursor(cursor)
    if not journal._next():
        return False
    return index == mark_index or bool(journal._next(index - mark_index))


def _open(pid: bytes | None, wanted: Any) -> bool:
    number = int(pid) if pid is not None and pid.isdigit() else None
    return any(stream[2] == number for stream in wanted)


def _field(get: Any, name: str) -> bytes | None:
    try:
        value = get(name)
    except KeyError:
        return None
    data: bytes = value[0] if isinstance(value, list) else value
    return data


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
    items = raw.items() if len(raw) <= MAX_FIELDS else islice(raw.items(), MAX_FIELDS)
    return {name: (value[0] if value.__class__ is list else value)[:FIELD_CAP].decode("utf-8", "replace")
            for name, value in items}


# -- follow mode --------------------------------------------------------------------------

WAIT_USEC = 250_000  # how long one wait for the journal to grow lasts (stop and rotation checks)
_ROTATION_CHECK = 1.0  # seconds between checks that a --file was replaced (rotated)


def follow_journal(selection: Selection, problems: ReadProblems | None, start: str, cursor: str | None = None,
                   stop: Any = None) -> Iterator[Record | None]:
    """Follow mode: records as the journal grows, and None each time it is caught up.

    `start`: "head" (every entry), "tail" (new entries only), "since" (`selection.since_usec`),
    "cursor" (from `cursor`, inclusive: a restart reading again) or "after" (after `cursor`).
    The live journal survives rotation and vacuuming by itself (sd-journal watches its
    directories); `--file` and `--directory` name files, so when those change (a file replaced by
    a new one under its name, a new file in the directory, one deleted) the journal is reopened
    after the cursor of the last entry read. `stop`: a threading.Event.
    """
    import time

    from logsift.read.live import journal_set, replaced

    problems = problems if problems is not None else ReadProblems()
    journal, current = _open_following(selection, start, cursor)
    files = journal_set(selection.files, selection.directory)
    last_cursor = cursor if start in ("cursor", "after") else None
    checked = time.monotonic()
    line = 1
    source = selection.source
    try:
        while stop is None or not stop.is_set():
            if current or journal._next():
                current = False
                record = _record(journal, journal._get_all(), journal._get_realtime(), source, line, problems)
                if record is not None:
                    last_cursor = record.cursor
                    yield record
                    line += record.lines
                continue
            yield None
            journal.wait(WAIT_USEC)
            if (selection.files or selection.directory) and time.monotonic() - checked >= _ROTATION_CHECK:
                checked = time.monotonic()
                now = journal_set(selection.files, selection.directory)
                if replaced(files, now):
                    journal.close()
                    journal, current = _open_following(selection, "after" if last_cursor else "head", last_cursor)
                    files = now
    finally:
        journal.close()


def _open_following(selection: Selection, start: str, cursor: str | None) -> tuple[Any, bool]:
    """The journal, positioned for `start`; True when it stands on an entry still to be read."""
    journal = open_journal(selection)
    if not selection.files and not selection.directory and not (journal.has_persistent_files() or journal.has_runtime_files()):
        journal.close()
        raise InputError(NO_JOURNAL)
    journal.data_threshold = MESSAGE_CAP + 1
    plain = Selection(selection.files, selection.directory, selection.units, boot=selection.boot)
    if not _apply(journal, plain):
        raise InputError("no unit matches the -u given", selection.source)
    if start in ("cursor", "after") and cursor:
        try:
            journal.seek_cursor(cursor)
        except (OSError, ValueError):
            raise InputError(f"invalid cursor {cursor!r}", selection.source) from None
        # seek_cursor stands next to where the entry is, or was if it is gone: step onto it, and
        # read it unless it is the one read last time.
        if journal._next():
            return journal, not (start == "after" and journal.test_cursor(cursor))
        return journal, False
    if start == "since" and selection.since_usec is not None:
        journal.seek_realtime(selection.since_usec)
    elif start == "tail":
        journal.seek_tail()
        journal._previous()
    else:
        journal.seek_head()
    return journal, False
