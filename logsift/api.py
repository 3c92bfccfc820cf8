"""The public Python API: `logsift.diagnose(source) -> Report`. The CLI uses it too.

    import logsift
    report = logsift.diagnose("journal.txt")                 # a text, json or export file
    report = logsift.diagnose("/srv/journals", unit="sglang-k26", since="-2h")  # journal files
    report = logsift.diagnose(None, unit="sglang-k26")       # this machine's journal
    for incident in report.incidents:
        print(incident.unit, incident.root_cause.rule_id if incident.root_cause else None)
    report.to_dict()                                         # the JSON contract (version 1)

The library never prints or exits: problems with the input raise `logsift.InputError`,
bad options `logsift.UsageError`, broken bundled rules `logsift.RuleError` (all
`logsift.LogsiftError`); what was skipped or not found is in `report.summary.warnings` and
`report.summary.notes`.
"""

from __future__ import annotations

import io
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, BinaryIO, Callable, cast

from logsift import read as readers
from logsift.exceptions import UsageError
from logsift.pipeline import Fallback, Pipeline
from logsift.read import selection as selecting
from logsift.read import sources
from logsift.read.export import FIELD_CAP, MAX_FIELDS, entry_record
from logsift.read.selection import JOURNAL_DEPTH, Selection, journal_files, mangle_unit
from logsift.read.sources import Progress
from logsift.read.text import Skipping
from logsift.records import ReadProblems, Record
from logsift.report.document import Origin, Report
from logsift.rules import RuleSet, load_rules
from logsift.sanitize import scrub

PRIORITIES = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")
MODEL_CHOICES = ("auto", "on", "off")

# What `source` may be: a path, several paths, a binary or text file object, lines, or journal
# entries as dicts (what systemd.journal.Reader yields, or json.loads of `journalctl -o json`).
Source = str | os.PathLike[str] | Sequence[os.PathLike[str]] | BinaryIO | IO[str] | Iterable[str] | \
    Iterable[bytes] | Iterable[Mapping[str, Any]] | None


@dataclass(frozen=True)
class _Filters:
    """Selections applied to records before diagnosis, as journalctl applies them."""

    identifiers: tuple[str, ...] = ()
    priority: tuple[int, int] | None = None
    since: datetime | None = None
    until: datetime | None = None

    def keep(self, record: Record) -> bool:
        if self.identifiers and record.identifier not in self.identifiers:
            return False
        if self.priority is not None and record.priority is not None:
            low, high = self.priority
            if not low <= record.priority <= high:
                return False
        stamp = record.timestamp
        if stamp is not None:
            if self.since is not None and stamp < self.since:
                return False
            if self.until is not None and stamp > self.until:
                return False
        return True

    @property
    def active(self) -> bool:
        return bool(self.identifiers or self.priority or self.since or self.until)


def diagnose(
    source: Source = None,
    *,
    unit: str | Sequence[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    patterns: Sequence[str | os.PathLike[str]] = (),
    model: str | bool = "auto",
    input_format: str = "auto",
    boot: str | None = None,
    after_cursor: str | None = None,
    identifier: str | Sequence[str] = (),
    priority: str | int | None = None,
    lines: int | None = None,
    journal_reader: str = "auto",
    model_threshold: float | None = None,
    strict_patterns: bool = False,
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
    rules: RuleSet | None = None,
) -> Report:
    """Diagnose the failed runs in `source`.

    `source`: a path (a text, json or export log; a native `.journal` file; a directory of
    journal files, at any depth), several `pathlib.Path`s, `"-"` for stdin, a file object, an
    iterable of lines (str or bytes), an iterable of journal entries (dicts), or None for this
    machine's journal. `unit`, `since`, `until`, `boot`, `after_cursor`: as journalctl's `-u`,
    `-S`, `-U`, `-b`, `--after-cursor`; on a journal they select entries, on other input `unit`
    selects the incidents reported and `since`/`until` the records read. `identifier` (`-t`),
    `priority` (`-p`, a level or `FROM..TO`) and `lines` (`-n`, the last N entries) are applied
    to records before diagnosis. `patterns`: site rule directories (a broken rule there is
    skipped and named in `report.summary`, unless `strict_patterns`). `model`: "auto" (ask
    the learned fallback when it is available), "on" (an error when it is not), "off".
    """
    units = (unit,) if isinstance(unit, str) else tuple(unit or ())
    filters = _filters(identifier, priority, since, until)
    if rules is None:
        rules = load_rules(extra=[Path(path) for path in patterns], strict=strict_patterns)
    if input_format != "auto" and input_format not in readers.REGISTRY:
        raise UsageError(f"unknown input format {input_format!r}; known: {', '.join(sorted(readers.REGISTRY))}")
    if lines is not None and lines < 0:
        raise UsageError(f"-n {lines}: give a number of entries, 0 or more")
    fallback = _fallback(rules, model, model_threshold, notify)
    problems = ReadProblems()
    notes: list[str] = []
    opened = _open(source, units, since, until, boot, after_cursor, input_format, journal_reader,
                   problems, notes, progress)
    pipeline = Pipeline(rules, fallback=fallback, skip=lines is None)

    def records() -> Iterator[Record]:
        stream: Iterable[Record] = opened.records(pipeline.skipping)
        if filters.active:
            stream = (record for record in stream if filters.keep(record))
        if lines is not None:
            stream = deque(stream, maxlen=lines)  # the last N entries, like journalctl -n
        yield from stream

    analysis = pipeline.analyze(records())
    if filters.priority is not None and analysis.counts.entries and not analysis.counts.prioritized:
        notes.append("-p has no effect here: this input carries no priorities (only json, export and native "
                     "journals do)")
    notes.extend(problems.guesses)  # how a format was chosen when the first lines did not say
    if analysis.counts.entries == 0 and analysis.counts.lines == 0:
        notes.append(opened.nothing())
    if fallback is not None and getattr(fallback, "unavailable", None):
        notes.append(f"failures no rule names were not shown to the model: {fallback.unavailable}")  # type: ignore[attr-defined]
    warnings = problems.warnings()
    if analysis.regex_budget is not None:
        warnings.extend(analysis.regex_budget.warnings())
    # On a journal, -u selected the entries (the unit's, and the kernel's); the kernel's lines that
    # took no run of the unit down are the host's business, not this report's.
    report = Report.from_analysis(analysis, opened.origin, opened.names, warnings, notes, units)
    return report


def _filters(identifier: str | Sequence[str], priority: str | int | None, since: str | None,
             until: str | None) -> _Filters:
    identifiers = (identifier,) if isinstance(identifier, str) else tuple(identifier)
    since_at = _time(since, "--since")
    until_at = _time(until, "--until")
    return _Filters(identifiers, parse_priority(priority) if priority is not None else None, since_at, until_at)


def _time(text: str | None, option: str) -> datetime | None:
    if not text:
        return None
    usec = selecting.parse_time(text, option)
    return selecting.from_usec(usec)


def parse_priority(value: str | int) -> tuple[int, int]:
    """journalctl's -p: a level ("err" or "3": it and everything more important) or FROM..TO."""
    text = str(value).strip().lower()

    def level(part: str) -> int:
        if part.isdigit() and int(part) < len(PRIORITIES):
            return int(part)
        if part in PRIORITIES:
            return PRIORITIES.index(part)
        raise UsageError(f"-p {value!r}: give a priority 0-7 or a name ({', '.join(PRIORITIES)}), or FROM..TO")

    if ".." in text:
        low, _, high = text.partition("..")
        first, last = level(low or "emerg"), level(high or "debug")
        return (min(first, last), max(first, last))
    return (0, level(text))


def _fallback(rules: RuleSet, model: str | bool, threshold: float | None,
              notify: Callable[[str], None] | None) -> Fallback | None:
    choice = {True: "on", False: "off"}.get(model, model) if isinstance(model, bool) else str(model).lower()
    if choice not in MODEL_CHOICES:
        raise UsageError(f"model={model!r}: give one of {', '.join(MODEL_CHOICES)}")
    if choice == "off":
        return None
    # Cheap to build: the model is loaded only when an event needs it.
    from logsift.learn.classifier import ModelFallback

    return ModelFallback(rules, threshold=threshold, required=choice == "on", notify=notify or (lambda _: None))


# -- sources ------------------------------------------------------------------------------


@dataclass
class _Opened:
    """A source, resolved: how to read its records once the pipeline exists."""

    records: Callable[[Skipping | None], Iterable[Record]]
    origin: Origin
    names: tuple[str, ...]
    nothing: Callable[[], str]


def _open(source: Source, units: tuple[str, ...], since: str | None, until: str | None, boot: str | None,
          after_cursor: str | None, input_format: str, backend: str, problems: ReadProblems,
          notes: list[str], progress: Progress | None) -> _Opened:
    journal = dict(units=units, since=since, until=until, boot=boot, after_cursor=after_cursor)
    if source is None:
        chosen = selecting.select(**journal)  # type: ignore[arg-type]
        return _journal(chosen, backend, problems, notes, Origin("journal", units=chosen.units))
    if isinstance(source, (str, os.PathLike)):
        return _paths([os.fspath(source)], journal, input_format, backend, problems, notes, progress)
    if isinstance(source, Sequence) and source and all(isinstance(item, os.PathLike) for item in source):
        return _paths([os.fspath(item) for item in source], journal, input_format, backend, problems, notes,
                      progress)
    if boot is not None or after_cursor:
        raise UsageError("boot and after_cursor select journal entries: give a journal file or directory")
    if hasattr(source, "read"):
        stream = _binary(cast(IO[Any], source))
        return _Opened(lambda skipping: readers.read(stream, "-", input_format, problems, skipping),
                       Origin("stdin"), ("-",), lambda: "read nothing: the input was empty")
    return _iterable(cast(Iterable[Any], source), input_format, problems)


def _paths(paths: list[str], journal: dict[str, Any], input_format: str, backend: str, problems: ReadProblems,
           notes: list[str], progress: Progress | None) -> _Opened:
    directories = [path for path in paths if path != "-" and os.path.isdir(path)]
    if directories:
        if len(paths) > 1:
            raise UsageError(f"{directories[0]}: is a directory; give one directory of journal files, or files")
        chosen = selecting.select(directory=directories[0], **journal)
        return _journal(chosen, backend, problems, notes, Origin("journal", directory=directories[0],
                                                               units=chosen.units))
    journals = [path for path in paths if path != "-" and _is_journal(path)]
    if journals and len(journals) == len(paths):
        chosen = selecting.select(files=journals, **journal)
        return _journal(chosen, backend, problems, notes, Origin("journal", files=chosen.files, units=chosen.units))
    if journal["boot"] is not None or journal["after_cursor"]:
        raise UsageError("-b and --after-cursor select journal entries; FILE arguments that are not journal files "
                         "cannot be filtered by them: filter with journalctl first (journalctl -b | logsift)")
    kind = "stdin" if paths == ["-"] else "file"

    def read(skipping: Skipping | None) -> Iterable[Record]:
        return sources.file_records(paths, input_format, problems, backend, skipping, progress)

    def nothing() -> str:
        return "read nothing: the input was empty" if kind == "stdin" else f"read nothing: {', '.join(paths)} empty"

    return _Opened(_guarded(read, problems), Origin(kind, files=tuple(p for p in paths if p != "-")),
                   tuple(paths), nothing)


def _journal(chosen: Selection, backend: str, problems: ReadProblems, notes: list[str], origin: Origin) -> _Opened:
    if chosen.directory and not journal_files(chosen.directory):
        message = f"read nothing: no journal files in {chosen.directory} (looked {JOURNAL_DEPTH} folders deep)"
        return _Opened(lambda skipping: (), origin, (chosen.directory,), lambda: message)

    def nothing() -> str:
        wanted = []
        if chosen.units:
            wanted.append("-u " + ", ".join(mangle_unit(unit) for unit in chosen.units))
        if chosen.since_usec is not None:
            wanted.append(f"since {selecting.from_usec(chosen.since_usec).isoformat()}")
        if chosen.until_usec is not None:
            wanted.append(f"until {selecting.from_usec(chosen.until_usec).isoformat()}")
        if chosen.boot is not None:
            wanted.append(f"boot {chosen.boot}")
        if chosen.after_cursor:
            wanted.append("after the cursor")
        where = chosen.source if chosen.files or chosen.directory else "this machine's journal"
        return f"read nothing: no entries in {where}" + (f" matched {'; '.join(wanted)}" if wanted else "")

    return _Opened(_guarded(lambda skipping: sources.journal_records(chosen, problems, backend, skipping), problems), origin,
                   (chosen.source,), nothing)


def _guarded(read: Callable[[Skipping | None], Iterable[Record]],
             problems: ReadProblems) -> Callable[[Skipping | None], Iterable[Record]]:
    """An InputError when nothing at all could be read but something was skipped (garbage)."""

    def records(skipping: Skipping | None) -> Iterator[Record]:
        count = 0
        for record in read(skipping):
            count += 1
            yield record
        if not count and problems.bad.count:
            from logsift.exceptions import InputError

            raise InputError(f"nothing could be read: {problems.warnings()[0]}")

    return records


def _is_journal(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(readers.JOURNAL_MAGIC)) == readers.JOURNAL_MAGIC
    except OSError:
        return False  # reading it as a file says what is wrong


def _binary(stream: IO[Any]) -> BinaryIO:
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        return cast(BinaryIO, buffer)
    if isinstance(stream, io.TextIOBase):
        return cast(BinaryIO, _Encoded(iter(stream)))
    probe = stream.read(0)
    if isinstance(probe, str):
        return cast(BinaryIO, _Encoded(iter(lambda: stream.read(1 << 16), "")))
    return cast(BinaryIO, stream)


class _Encoded:
    """Text chunks read as UTF-8 bytes."""

    def __init__(self, chunks: Iterator[str]) -> None:
        self.chunks = chunks
        self.pending = b""

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self.pending) < size:
            chunk = next(self.chunks, None)
            if chunk is None:
                break
            self.pending += chunk.encode("utf-8", "surrogateescape")
        if size < 0:
            data, self.pending = self.pending, b""
        else:
            data, self.pending = self.pending[:size], self.pending[size:]
        return data


def _iterable(items: Iterable[Any], input_format: str, problems: ReadProblems) -> _Opened:
    iterator = iter(items)
    first = next(iterator, None)
    if first is None:
        return _Opened(lambda skipping: (), Origin("lines"), ("lines",), lambda: "read nothing: no lines given")
    rest = _chain(first, iterator)
    if isinstance(first, Mapping):
        return _Opened(lambda skipping: _entries(rest, problems), Origin("entries"), ("entries",),
                       lambda: "read nothing: no entries given")
    if isinstance(first, (str, bytes)):
        stream = _Lines(rest)
        return _Opened(lambda skipping: readers.read(cast(BinaryIO, stream), "lines", input_format, problems,
                                                     skipping),
                       Origin("lines"), ("lines",), lambda: "read nothing: no lines given")
    raise UsageError(f"cannot diagnose a {type(first).__name__}: give a path, a file, lines or journal entries")


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


class _Lines:
    """Lines (str or bytes, with or without their newline) read as one byte stream."""

    def __init__(self, lines: Iterator[str | bytes]) -> None:
        self.lines = lines
        self.pending = b""

    def read(self, size: int = -1) -> bytes:
        parts = [self.pending]
        have = len(self.pending)
        while size < 0 or have < size:
            line = next(self.lines, None)
            if line is None:
                break
            data = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
            if not data.endswith(b"\n"):
                data += b"\n"
            parts.append(data)
            have += len(data)
        joined = b"".join(parts)
        if size < 0:
            self.pending = b""
            return joined
        self.pending = joined[size:]
        return joined[:size]


def _entries(entries: Iterable[Mapping[str, Any]], problems: ReadProblems) -> Iterator[Record]:
    """Journal entries as dicts: systemd.journal.Reader's (converted values) or parsed JSON."""
    for number, entry in enumerate(entries, 1):
        fields: dict[str, str] = {}
        message = ""
        for name, value in entry.items():
            if len(fields) >= MAX_FIELDS:
                break
            text = _field_text(value)
            if text is None:
                continue
            if name == "MESSAGE":
                message = text
            else:
                fields[name] = text[:FIELD_CAP]
        if "MESSAGE" not in entry:
            problems.skip(f"entry {number}", "entry has no MESSAGE field")
            continue
        yield entry_record(fields, message, number, "entries", message.count("\n") + 1,
                           numbered="__CURSOR" in fields)


def _field_text(value: Any) -> str | None:
    while isinstance(value, (list, tuple)) and value and not all(isinstance(item, int) for item in value):
        value = value[0]  # a field given more than once: the first value, as journalctl shows it
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, datetime):
        stamp = value if value.tzinfo else value.astimezone()  # systemd.journal gives local naive times
        return str(round(stamp.timestamp() * 1e6))
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(item, int) for item in value):  # journalctl -o json: bytes as numbers
            return bytes(item & 0xFF for item in value).decode("utf-8", "replace")
        return None
    if hasattr(value, "hex") and type(value).__name__ == "UUID":
        return str(value.hex)
    if hasattr(value, "total_seconds"):  # a timedelta (monotonic timestamp)
        return str(round(value.total_seconds() * 1e6))
    return str(value)
