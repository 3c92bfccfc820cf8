"""journalctl's text formats (short, short-iso, short-precise, short-full, short-unix,
short-monotonic, with-unit), `cat`, and plain application logs, line by line.

Each line is tried against the journal prefix of the format seen last, then the others, so a
paste where journal lines and plain lines alternate still reads. A line with no prefix that is
indented right after a journal entry is a continuation line of that entry's multi-line MESSAGE.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from typing import Collection, Iterable, Iterator, Protocol, Sequence, overload

from logsift.lazy import compile_lazily
from logsift.read.relay import Unwrapped, unwrap
from logsift.records import Record, SinceBoot
from logsift.sanitize import strip_ansi

_MONTHS = {m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}
# A logger's level word where the host would stand is a logger's line after a time (Rust's tracing:
# "2024-04-06T04:23:47.390913Z ERROR mistralrs_server: ..."), not a host.
_NOT_LEVEL = r"(?!(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL) )"
_TAIL = r" " + _NOT_LEVEL + r"(?P<host>\S*[^\s:]) (?P<ident>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: ?(?P<msg>.*)$"
# A paste may have lost the host ("Mar 27 17:40:36 kernel: NVRM: Xid ..."): a host never ends in ":".
_TAIL_HOSTLESS = r" " + _NOT_LEVEL + r"(?:(?P<host>\S*[^\s:]) )?(?P<ident>[^\s\[:]+)(?:\[(?P<pid>\d+)\])?: (?P<msg>.*)$"

# Order matters only for speed: the format that matched last is tried first.
PREFIXES: dict[str, re.Pattern[str]] = {
    "short-iso": compile_lazily(
        r"^(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)" + _TAIL
    ),
    "short": compile_lazily(
        r"^(?P<mon>[A-Z][a-z]{2}) (?P<day>[ \d]\d) (?P<hms>\d\d:\d\d:\d\d)(?P<frac>\.\d+)?" + _TAIL_HOSTLESS
    ),
    "short-full": compile_lazily(
        r"^[A-Z][a-z]{2} (?P<full>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (?P<tz>[A-Za-z+\-\d]+)"
        + _TAIL
    ),
    "short-unix": compile_lazily(r"^(?P<unix>\d{9,11}\.\d{1,9})" + _TAIL),
    "short-monotonic": compile_lazily(r"^\[\s*(?P<mono>\d+\.\d+)\]" + _TAIL),
}
_MARKER = compile_lazily(r"^-- (?:Boot (?P<boot>[0-9a-f]{32})|No entries|Reboot|Logs begin at |Journal begins at )")
_TRACEBACK = "Traceback (most recent call last)"
_TRACEBACK_BYTES = _TRACEBACK.encode("ascii")
_PID = compile_lazily(r"\bpid=(\d+)\b")
_UNIT_SUFFIX = (".service", ".scope", ".socket", ".timer", ".mount", ".slice", ".target")
# `-o cat` drops the prefix, but systemd's own lines about a unit still say who wrote them.
_SYSTEMD_WORDING = compile_lazily(
    r"^(?:(?:Starting|Started|Stopping|Stopped|Failed to start) [\w@:.\\-]+\.(?:service|scope|socket|mount|timer)\b"
    r"|[\w@:.\\-]+\.(?:service|scope|socket|mount|timer): )"
)


BATCH = 2048
ZONE_CACHE = 4096  # minutes whose local offset is remembered
TEXTS_KEPT = 65536  # distinct texts the reader shares among its records (see _same)


class Skipping(Protocol):
    """What a consumer of records gives a text reader so that it can leave lines unparsed.

    - `candidates(block)`: the starts of the lines of a block of raw bytes that may matter (the
      prefilter), each with the ids of what may match there;
    - `wanted`: the streams with an open event, live: the reader must parse every line of
      those, since each may continue or end the event (lines of other streams cannot);
    - `found(record, ids)`: the record parsed from candidate lines with these ids, told before
      it is yielded, so that the consumer confirms the hits without scanning it again;
    - `done(lines, first, last, hosts, units)`: at the end, the lines read, the times of the
      first and last of them, and the hosts and units they name, so that what was read is
      known although most lines were never parsed;
    - `plain_only`: the ids of what matters only on a plain text line (an excerpt's error-level
      line), never on a journal entry: a candidate for those alone is left unparsed where the
      line is a journal entry (and by the native and export readers, whose entries all are).

    The pipeline gives one (`Pipeline.skipping`); see TextReader.read_blocks.
    """

    @property
    def wanted(self) -> Collection[tuple[object, ...]]: ...

    @property
    def plain_only(self) -> frozenset[int]: ...

    def candidates(self, block: bytes) -> list[tuple[int, list[int]]]: ...

    def found(self, record: Record, ids: Sequence[int]) -> None: ...

    def done(self, lines: int, first: datetime | None, last: datetime | None, hosts: Collection[str],
             units: Collection[str]) -> None: ...


def _batches(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class TextReader:
    """Turns lines into Records; one instance per input, because it keeps a little state."""

    def __init__(self, source: str = "-", year: int | None = None) -> None:
        self.source = source
        now = datetime.now().astimezone()
        self.year = year or now.year
        self.month = now.month if year is None else 12
        self.order = list(PREFIXES.items())
        self.boot: str | None = None
        self.lines = 0  # input lines read so far, skipped ones included
        self._stamps: dict[str, datetime | None] = {}
        self._texts: dict[str, str] = {}  # see _same
        self.seen_hosts: set[str] = set()  # what read_blocks saw named, parsed or not
        self.seen_units: set[str] = set()
        # stream -> the text its lines print before the message, while read_blocks runs
        self.needles: dict[tuple[object, ...], set[bytes]] | None = None
        self.zones: dict[tuple[int, ...], tuple[timedelta, tzinfo | None]] = {}  # see _local

    def read(self, lines: Iterable[str], first_line: int = 1) -> Iterator[Record]:
        return self.read_batches(_batches(lines, BATCH), first_line)

    def read_batches(self, batches: Iterable[list[str]], first_line: int = 1) -> Iterator[Record]:
        """Records from lines, every line parsed. An empty batch says that the input went quiet
        (follow mode): the entry held back for its continuation lines is yielded."""
        pending: Record | None = None
        continuation: list[str] = []
        number = first_line - 1
        for batch in batches:
            if not batch:
                # Follow mode: the input went quiet. An entry held back for continuation lines
                # that may never come is let go (a continuation after this reads as its own line).
                if pending is not None:
                    yield self._finish(pending, continuation)
                    pending, continuation = None, []
                continue
            for raw in batch:
                number += 1
                line = strip_ansi(raw) if "\x1b" in raw else raw
                if pending is not None and line[:1] in (" ", "\t") and not self._prefix(line):
                    continuation.append(line)
                    continue
                if pending is not None:
                    yield self._finish(pending, continuation)
                    pending, continuation = None, []
                if line.startswith("-- "):
                    marker = _MARKER.match(line)
                    if marker:
                        if marker.group("boot"):
                            self.boot = marker.group("boot")
                        continue
                match = self._prefix(line)
                if match is not None:
                    pending = self._journal(match, number)
                else:
                    yield self._plain(line, number)
        if pending is not None:
            yield self._finish(pending, continuation)
        self.lines = number

    def read_blocks(self, blocks: Iterable[bytes], skipping: Skipping, first_line: int = 1) -> Iterator[Record]:
        """The records that matter, from blocks of whole entries (lines.entry_blocks): the
        entries on candidate lines and every entry of a wanted stream, the same records that
        `read_batches` gives for those lines. Other lines are only counted.

        Each record is yielded before the next line is looked at, so `wanted` is current. A
        wanted stream's lines are found by what its journal prefix prints (`needles`: " host
        ident[pid]:"); while a stream that has no such prefix (a plain log) is wanted, every
        line is parsed.
        """
        number = first_line - 1  # the last line of the previous block
        first: datetime | None = None
        last_block = b""
        for block in blocks:
            if not last_block:
                first = self._time_of_lines(block[:4096].split(b"\n")[:8])
            last_block = block
            if self.needles is None:
                self.needles = {}
            part = _Block(self, block, number + 1, skipping)
            yield from part.records()
            self._names(block)
            number = part.last_line()  # the newlines before its last record are counted already
        self.lines = number
        last = self._time_of_lines(last_block[-4096:].split(b"\n")[-8:][::-1]) if last_block else None
        skipping.done(number - first_line + 1, first, last, self.seen_hosts, self.seen_units)

    def _names(self, block: bytes) -> None:
        """The hosts (and, with -o with-unit, the units) that the block names: those of its first
        and last journal lines (the parsed ones add theirs as records). Exact for the usual
        journal, where a host or unit logs more than once a block; finding every one would mean
        reading every line's prefix."""
        for lines in (block[:4096].split(b"\n", 8)[:8], block[-4096:].rsplit(b"\n", 8)[-8:][::-1]):
            for raw in lines:
                found = self._prefix(raw.decode("utf-8", "replace"))
                if found is not None:
                    ident, unit, _pid = self._names_of(found)
                    if found.group("host") is not None:
                        self.seen_hosts.add(found.group("host"))
                    if unit is not None:
                        self.seen_units.add(unit)
                    break

    def _time_of_lines(self, lines: list[bytes]) -> datetime | None:
        for raw in lines:
            stamp = self._time_of(raw.decode("utf-8", "replace"))
            if stamp is not None:
                return stamp
        return None

    def _time_of(self, line: str | None) -> datetime | None:
        match = self._prefix(line) if line is not None else None
        return self._timestamp(match) if match is not None else None

    def _prefix(self, line: str) -> re.Match[str] | None:
        for index, (_name, pattern) in enumerate(self.order):
            match = pattern.match(line)
            if match is not None:
                if index:
                    self.order.insert(0, self.order.pop(index))
                return match
        return None

    def _finish(self, record: Record, continuation: list[str]) -> Record:
        if not continuation:
            return record
        width = len(continuation[0]) - len(continuation[0].lstrip(" "))
        body = [line[width:] if line[:width].isspace() else line.lstrip() for line in continuation]
        return replace(record, message="\n".join([record.message, *body]), lines=1 + len(continuation))

    def _entry(self, line: str, number: int) -> Record:
        match = self._prefix(line)
        return self._journal(match, number) if match is not None else self._plain(line, number)

    def _journal(self, match: re.Match[str], number: int) -> Record:
        record = self._journal_record(match, number)
        if self.needles is not None:
            # What every line of this stream prints before its message: " host ident[pid]:".
            end = match.end("pid") + 1 if match.group("pid") else match.end("ident")
            begin = match.start("host") if match.group("host") is not None else match.start("ident")
            needle = match.string[begin - 1 : end + 1].encode("utf-8")
            known = self.needles.setdefault(record.stream, set())
            if len(known) < 4:
                known.add(needle)
        return record

    @staticmethod
    def _names_of(match: re.Match[str]) -> tuple[str, str | None, int | None]:
        """(identifier, unit, pid) as a journal line names them."""
        ident = match.group("ident")
        pid = _pid_of(match.group("pid")) if match.group("pid") else None
        unit = None
        if ident.endswith(_UNIT_SUFFIX):  # with-unit: the unit stands where the identifier would
            # PID 1's own unit is init.scope; the unit its line is about is named in the message.
            unit = None if ident == "init.scope" else ident
            ident = "systemd" if ident == "init.scope" else ident.rsplit(".", 1)[0]
        return ident, unit, pid

    def _stream_of(self, match: re.Match[str]) -> tuple[str | None, str | None, int | None, str | None]:
        """Record.stream of the line, without making the record."""
        ident, unit, pid = self._names_of(match)
        return (match.group("host"), unit or ident, pid, self._said(match, ident, pid).stream)

    @staticmethod
    def _said(match: re.Match[str], ident: str, pid: int | None) -> Unwrapped:
        # PID 1 writes its own lines: no relay or logger prefix to look for (a tenth of its cost).
        return Unwrapped(match.group("msg")) if pid == 1 and ident == "systemd" else unwrap(match.group("msg"))

    def _journal_record(self, match: re.Match[str], number: int) -> Record:
        ident, unit, pid = self._names_of(match)
        said = self._said(match, ident, pid)
        # A crash loop prints the same lines restart after restart, and every failed run keeps
        # its events: the same text is kept once (a bounded table of the texts seen lately).
        same = self._same
        return Record(
            line=number,
            message=same(said.message),
            timestamp=self._timestamp(match),
            host=same(match.group("host")),
            unit=same(unit),
            identifier=same(ident),
            pid=pid,
            boot=self.boot,
            source=self.source,
            relay=same(said.stream),
            level=said.level,
            origin=same(said.origin),
            logger=said.logger,
        )

    @overload
    def _same(self, text: str) -> str: ...

    @overload
    def _same(self, text: str | None) -> str | None: ...

    def _same(self, text: str | None) -> str | None:
        """The string already kept that equals `text` (one object for every copy)."""
        if text is None:
            return None
        texts = self._texts
        kept = texts.get(text)
        if kept is None:
            if len(texts) >= TEXTS_KEPT:
                texts.clear()
            kept = texts[text] = text
        return kept

    def _plain(self, line: str, number: int) -> Record:
        said = unwrap(line)
        ident: str | None = None
        pid: int | None = None
        if said.stream is not None:
            # The relayed process stands for the identifier and pid a journal line would have.
            ident = said.stream.split(" ", 1)[0].rstrip(",")
            found = _PID.search(said.stream)
            pid = int(found.group(1)) if found else None
        elif _SYSTEMD_WORDING.match(line):
            ident = "systemd"
        return Record(line=number, message=said.message, identifier=ident, pid=pid, boot=self.boot,
                      source=self.source, relay=said.stream, level=said.level, origin=said.origin,
                      logger=said.logger)

    def _local(self, naive: datetime) -> datetime:
        """`naive.astimezone()`: local time with that date's own offset (DST). What it gives is
        kept per minute (zones change offset on a minute boundary), as the zone lookup costs more
        than the rest of reading a line; a time in a DST gap is moved as astimezone moves it."""
        key = (naive.year, naive.month, naive.day, naive.hour, naive.minute)
        known = self.zones.get(key)
        if known is None:
            local = naive.astimezone()
            known = self.zones[key] = (local.replace(tzinfo=None) - naive, local.tzinfo)
            if len(self.zones) > ZONE_CACHE:
                self.zones.clear()
        shift, zone = known
        return (naive + shift if shift else naive).replace(tzinfo=zone)

    def _timestamp(self, match: re.Match[str]) -> datetime | None:
        # Lines come many to a second: the time of the same text (all before the host) is parsed once.
        text = match.string[: match.start("ident")]
        if text in self._stamps:
            return self._stamps[text]
        if len(self._stamps) >= 4096:
            self._stamps.clear()
        stamp = self._stamps[text] = self._parse_time(match)
        return stamp

    def _parse_time(self, match: re.Match[str]) -> datetime | None:
        groups = match.groupdict()
        try:
            if groups.get("iso"):
                text = groups["iso"].replace(",", ".")
                if text.endswith("Z"):
                    text = text[:-1] + "+00:00"
                stamp = datetime.fromisoformat(text)
                return stamp if stamp.tzinfo else self._local(stamp)  # local time, with its DST
            if groups.get("mon"):
                month = _MONTHS.get(groups["mon"])
                if month is None:
                    return None
                year = self.year if month <= self.month else self.year - 1
                hour, minute, second = (int(part) for part in groups["hms"].split(":"))
                micro = int((groups.get("frac") or ".0")[1:].ljust(6, "0")[:6])
                # Local time as journalctl printed it: astimezone() gives that date's own offset (DST).
                return self._local(datetime(year, month, int(groups["day"]), hour, minute, second, micro))
            if groups.get("full"):
                stamp = datetime.fromisoformat(groups["full"])
                tz = groups.get("tz") or ""
                return stamp.replace(tzinfo=UTC) if tz in ("UTC", "GMT") else self._local(stamp)
            if groups.get("unix"):
                return datetime.fromtimestamp(float(groups["unix"]), tz=UTC)
            if groups.get("mono"):
                # Seconds since boot: only differences mean anything, which is all runs need.
                return SinceBoot.fromtimestamp(float(groups["mono"]), tz=UTC)
        except (ValueError, OverflowError, OSError):
            return None
        return None


_INDENT = (b" ", b"\t")
NEEDLES_KEPT = 4096  # streams whose prefix is remembered; past that, only wanted ones are kept


class _Block:
    """One block of read_blocks. The unit is the entry (a line and the indented lines after
    it): an entry is parsed when one of its lines is a candidate, or when its stream is wanted."""

    def __init__(self, reader: TextReader, block: bytes, first: int, skipping: Skipping) -> None:
        self.reader = reader
        self.block = block
        self.skipping = skipping
        self.at = 0  # lines before this offset are done with
        self.searched = 0  # wanted streams' prefixes were looked for up to here
        self.counted_at = 0  # line number bookkeeping: the line at this offset is number `counted`
        self.counted = first
        candidates: list[tuple[int, list[int] | None]] = list(skipping.candidates(block))
        dashes = _dash_lines(block)
        if dashes:
            candidates = sorted([*candidates, *((start, None) for start in dashes)], key=lambda item: item[0])
        self.candidates = candidates
        self.index = 0
        self.next_hit: dict[bytes, int] = {}  # needle -> its next offset (len(block): none)

    def records(self) -> Iterator[Record]:
        candidates, size = self.candidates, len(self.block)
        wanted = self.skipping.wanted
        while True:
            target = candidates[self.index][0] if self.index < len(candidates) else size
            if wanted:
                start, every = self._wanted_line(target)
                if start >= 0:
                    record = self._entry(start, [], "every" if every else "needle")
                    if record is not None:
                        yield record
                    continue
            if self.index >= len(candidates):
                break
            start, ids = candidates[self.index]
            self.index += 1
            if start < self.at or (ids and self._journal_only(start, ids)):
                continue
            before = self._before_traceback(start)
            if before is not None:
                yield before
            record = self._entry(start, ids, "candidate")
            if record is not None:
                yield record
        self._forget_needles()

    def _journal_only(self, start: int, ids: list[int]) -> bool:
        """A candidate only for what matters on plain lines (Skipping.plain_only), on a line that
        is a journal entry: parsing it would give nothing."""
        plain = self.skipping.plain_only
        if not plain or not plain.issuperset(ids):
            return False
        raw = self.block[start:_line_end(self.block, start)].decode("utf-8", "replace")
        line = strip_ansi(raw) if "\x1b" in raw else raw
        return self.reader._prefix(line) is not None

    def _before_traceback(self, start: int) -> Record | None:
        """The entry right before a traceback's first line, when it was left unparsed: the
        logger's line there says at which level the traceback was logged (python's exc_info),
        which grouping reads from the stream's previous record."""
        block = self.block
        if start == 0 or block[start : start + 1] in _INDENT or block.find(_TRACEBACK_BYTES, start, _line_end(block, start)) < 0:
            return None
        previous = block.rfind(b"\n", 0, start - 1) + 1
        head = _head_of(block, previous) if block[previous : previous + 1] in _INDENT else previous
        if head < self.at:
            return None
        return self._entry(head, [], "every")

    def last_line(self) -> int:
        """The number of the block's last line."""
        return self.counted + newlines(self.block[self.counted_at :])

    def _number(self, offset: int) -> int:
        """The line number of the line that starts at `offset` (offsets asked for only grow)."""
        self.counted += newlines(self.block[self.counted_at : offset])
        self.counted_at = offset
        return self.counted

    def _wanted_line(self, target: int) -> tuple[int, bool]:
        """The start of the first line before `target` that a wanted stream may print (-1 when
        none), and whether that is simply the next line (a wanted stream has no known prefix)."""
        needles = self.reader.needles or {}
        block = self.block
        at = max(self.at, self.searched)
        if at >= target:
            return -1, False
        best = target
        for stream in list(self.skipping.wanted):
            known = needles.get(stream)
            if not known:
                return self.at, True  # a plain log (or a stream read elsewhere): every line may be its
            for needle in known:
                hit = self.next_hit.get(needle, -1)
                if hit < at:
                    hit = block.find(needle, at)
                    hit = hit if hit >= 0 else len(block)
                    self.next_hit[needle] = hit
                if hit < best:
                    best = hit
        if best >= target:
            self.searched = target
            return -1, False
        return block.rfind(b"\n", 0, best) + 1, False

    def _entry(self, start: int, ids: list[int] | None, via: str) -> Record | None:
        """The record of the entry that the line at `start` belongs to, when it is needed;
        `via`: why the line is looked at ("candidate", "needle": a wanted stream's prefix
        occurs in it, "every": a wanted stream has no known prefix)."""
        block, reader = self.block, self.reader
        end = _line_end(block, start)
        if block[start : start + 1] in _INDENT:
            head = _head_of(block, start)
            head_line = "" if block[head : head + 1] in _INDENT else block[head : _line_end(block, head)].decode("utf-8", "replace")
            match = reader._prefix(head_line) if head_line else None
            if match is not None and head >= self.at:
                if via == "needle":
                    self.searched = end + 1  # in the message text: the entry's own first line decides
                    return None
                return self._journal_entry(head, match, ids)
            if match is not None:
                self.at = end + 1
                return None
            return self._plain_entry(start, end, block[start:end].decode("utf-8", "replace"), ids)
        line = block[start:end].decode("utf-8", "replace")
        if line.startswith("-- "):
            marker = _MARKER.match(line)
            if marker is not None:
                if marker.group("boot"):
                    reader.boot = marker.group("boot")
                self.at = end + 1
                return None
            if ids is None and via == "candidate":
                return None  # a dashed line that is not a marker, and no candidate either
        match = reader._prefix(line)
        if match is None:
            if via == "needle":
                self.searched = end + 1
                return None
            return self._plain_entry(start, end, line, ids)
        return self._journal_entry(start, match, ids, via == "needle")

    def _journal_entry(self, head: int, match: re.Match[str], ids: list[int] | None,
                       unless_unwanted: bool = False) -> Record | None:
        block, reader = self.block, self.reader
        number = self._number(head)
        stop = _line_end(block, head)
        continuation: list[str] = []
        while block[stop + 1 : stop + 2] in _INDENT:
            following = _line_end(block, stop + 1)
            continuation.append(block[stop + 1 : following].decode("utf-8", "replace"))
            stop = following
        record = reader._finish(reader._journal(match, number), continuation)
        return self._found(record, stop, ids, unless_unwanted)

    def _plain_entry(self, start: int, end: int, line: str, ids: list[int] | None) -> Record | None:
        return self._found(self.reader._plain(line, self._number(start)), end, ids)

    def _found(self, record: Record, end: int, ids: list[int] | None, unless_unwanted: bool = False) -> Record | None:
        """Done with the lines up to `end`: the record gets the candidates' ids among them.
        `unless_unwanted`: it was looked at because a wanted stream's prefix occurs in it; None
        when it is of no wanted stream after all, and no candidate either."""
        self.at = end + 1
        found = list(ids or ())
        candidates = self.candidates
        while self.index < len(candidates) and candidates[self.index][0] <= end:
            found.extend(candidates[self.index][1] or ())
            self.index += 1
        if unless_unwanted and not found and record.stream not in self.skipping.wanted:
            return None
        self.skipping.found(record, found)
        return record

    def _forget_needles(self) -> None:
        needles = self.reader.needles
        if needles is not None and len(needles) > NEEDLES_KEPT:
            wanted = set(self.skipping.wanted)
            for stream in [stream for stream in needles if stream not in wanted]:
                del needles[stream]


@lru_cache(maxsize=TEXTS_KEPT)
def _pid_of(text: str) -> int:
    """int(text), one object per PID: a crash loop's records repeat a few PIDs thousands of times."""
    return int(text)


def newlines(data: bytes) -> int:
    """How many LF bytes `data` holds: dropping them is several times faster than bytes.count."""
    return len(data) - len(data.replace(b"\n", b""))


def _line_end(block: bytes, start: int) -> int:
    end = block.find(b"\n", start)
    return len(block) if end < 0 else end


def _head_of(block: bytes, start: int) -> int:
    """The start of the first line above `start` that is not indented (0 when none is)."""
    head = start
    while head > 0:
        head = block.rfind(b"\n", 0, head - 1) + 1
        if block[head : head + 1] not in _INDENT:
            return head
    return head


def _dash_lines(block: bytes) -> list[int]:
    """Starts of the lines that begin with "-- " (journalctl's boot markers, among others)."""
    found = [0] if block.startswith(b"-- ") else []
    position = block.find(b"\n-- ")
    while position >= 0:
        found.append(position + 1)
        position = block.find(b"\n-- ", position + 1)
    return found
