"""Which rules match which lines, decided for a whole block of input at once.

A healthy line must cost next to nothing, and a regex per rule per line costs 30x grep. So one
multi-pattern engine scans raw bytes, a megabyte at a time, and says which lines *may* matter
(`candidates`); only those are decoded, parsed and confirmed by the rules' own regexes in
Python (`confirm`). What a record is then given (its hits) is exact, whatever the engine: the
owners (rules, see logsift.match) one of whose regexes matches one of the record's lines, and
the markers (literals that grouping needs) that occur in it. Engines, chosen automatically:

- `hyperscan` (the `fast` extra, x86-64): the rule regexes themselves, translated to byte-level
  expressions that match a superset (logsift.rules.translate), in one database; healthy lines
  that only share a word with a rule ("error" in a request log) are not candidates at all.
  The compiled database is kept in the user cache, keyed by the rule library's digest.
- `ahocorasick` (ahocorasick-rs, wheels for Arm and musl too): the literals each regex
  requires, in one automaton over the lowercased block; a line with a literal is a candidate
  for the regexes that require it, and stays one only when their byte expressions (the ones
  hyperscan scans for) match it: one google-re2 `Set` search of the line where google-re2 is
  installed, else the `regex` module. So the lines parsed are those of the hyperscan engine.
- `find`: the same literals with `bytes.find`, one pass each, when neither is installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

from logsift.cache import make_cache
from logsift.rules.pattern import Pattern
from logsift.rules.translate import Untranslatable, translate

EMPTY: frozenset[int] = frozenset()
ENGINES = ("auto", "hyperscan", "ahocorasick", "find")
REGEX_TIMEOUT = 0.25  # seconds per line: a pathological regex must not stall the stream
DATABASE_FORMAT = 1  # bump when the translation or the database layout changes
# Line starts with the ids of the entries that may match on that line.
Candidates = list[tuple[int, list[int]]]
# Matches an engine may report for a block before it is scanned again line by line: hyperscan
# reports every end of every match, so a hostile line (`a` x 5000 against a site rule's `(a+)+`)
# would cost a Python call per byte. A line past LINE_HITS is a candidate for every entry one of
# whose literals it contains (confirm decides, exactly, as for any candidate).
HITS_PER_LINE = 16
HITS_SLACK = 4096
LINE_HITS = 64


class Budget(Protocol):
    """The run's regex budget (logsift.match.RegexBudget): confirming counts in it too."""

    def allows(self, key: tuple[str, int]) -> bool: ...

    def timed_out(self, key: tuple[str, int], where: str, line: int, seconds: float) -> None: ...


@dataclass(frozen=True, slots=True)
class Entry:
    """One thing the engine looks for: a rule regex (confirmed by that regex) or a marker
    literal (confirmed by occurring, case-insensitively)."""

    owner: int
    pattern: Pattern | None
    literals: tuple[str, ...]  # lowercase; any match contains one of them
    # The regex's name in the run's regex budget, and where it is written (None: not budgeted).
    key: tuple[str, int] | None = None
    where: str = ""


class Prefilter:
    """The part every engine shares: confirming candidates, and scanning messages."""

    engine = "base"

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = tuple(entries)
        self.timeouts = 0
        # With a budget, a regex that times out is counted there and suspended like the matcher's
        # own searches, so a catastrophic site rule costs a few timeouts per run, not one a line.
        self.budget: Budget | None = None
        self._by_literal: dict[bytes, list[int]] | None = None

    def candidates(self, block: bytes) -> Candidates:
        """Starts of the lines of `block` (LF-separated) that may matter, ascending, each with
        the ids of the entries that may match there."""
        raise NotImplementedError

    def confirm(self, message: str, ids: Iterable[int], line: int = 0) -> frozenset[int]:
        """The owners of those entries that really match `message` (one line at a time);
        `line`: the input line it starts on, for the budget's report."""
        owners: set[int] = set()
        lowered: str | None = None
        lines: list[str] | None = None
        budget = self.budget
        for index in ids:
            entry = self.entries[index]
            if entry.owner in owners:
                continue
            if lowered is None:
                lowered = message.lower()
            if not any(literal in lowered for literal in entry.literals):
                continue
            if entry.pattern is None:
                owners.add(entry.owner)
                continue
            key = entry.key if budget is not None else None
            if key is not None and not budget.allows(key):  # type: ignore[union-attr]
                continue  # suspended for the run: the matcher skips it too
            if lines is None:
                lines = message.split("\n") if "\n" in message else [message]
            search = entry.pattern.compiled.search
            for offset, text in enumerate(lines):
                if offset and key is not None and not budget.allows(key):  # type: ignore[union-attr]
                    break  # suspended on an earlier line of this message
                started = time.perf_counter()
                try:
                    found = search(text, timeout=REGEX_TIMEOUT) is not None
                except TimeoutError:
                    self.timeouts += 1
                    if key is None:
                        found = True  # the matcher will try it again, and count it
                    else:
                        # Counted once, here: the line is missed, as the budget's warning says.
                        budget.timed_out(key, entry.where, line + offset, time.perf_counter() - started)  # type: ignore[union-attr]
                        continue
                if found:
                    owners.add(entry.owner)
                    break
        return frozenset(owners) if owners else EMPTY

    def by_literals(self, line: bytes) -> list[int]:
        """The entries one of whose literals occurs in `line` (a superset of those that match)."""
        if self._by_literal is None:
            self._by_literal = {}
            for index, entry in enumerate(self.entries):
                for literal in entry.literals:
                    self._by_literal.setdefault(literal.encode("utf-8"), []).append(index)
        lowered = line.lower()
        return sorted({index for literal, indexes in self._by_literal.items() if literal in lowered for index in indexes})

    def scan(self, messages: Sequence[str], lines: Sequence[int] | None = None) -> list[frozenset[int]]:
        """For each message, the owners that really match it; `lines`: the input line each
        starts on (for the regex budget's report)."""
        result = [EMPTY] * len(messages)
        if not messages:
            return result
        text = "\n".join(messages)
        ascii_only = text.isascii()
        data = text.encode("ascii") if ascii_only else text.encode("utf-8", "surrogatepass")
        found = self.candidates(data)
        if not found:
            return result
        sizes = map(len, messages) if ascii_only else (len(m.encode("utf-8", "surrogatepass")) for m in messages)
        starts: list[int] = []
        offset = 0
        for size in sizes:
            starts.append(offset)
            offset += size + 1
        by_message: dict[int, set[int]] = {}
        for start, ids in found:
            by_message.setdefault(bisect_right(starts, start) - 1, set()).update(ids)
        for index, message_ids in by_message.items():
            result[index] = self.confirm(messages[index], sorted(message_ids), lines[index] if lines is not None else 0)
        return result

    def hits(self, message: str) -> frozenset[int]:
        return self.scan([message])[0]


def _lines_of(block: bytes, ends: Iterable[tuple[int, int]]) -> Candidates:
    """(end offset, id) pairs, in ascending order of end, grouped by the line they end on."""
    result: Candidates = []
    line_end = -1
    rfind, find = block.rfind, block.find
    for end, index in ends:
        if end > line_end:
            start = rfind(b"\n", 0, end) + 1
            if result and result[-1][0] == start:
                result[-1][1].append(index)
                continue
            line_end = find(b"\n", end)
            if line_end < 0:
                line_end = len(block)
            result.append((start, [index]))
        else:
            result[-1][1].append(index)
    return result


# -- hyperscan ------------------------------------------------------------------------------


class HyperscanPrefilter(Prefilter):
    engine = "hyperscan"

    def __init__(self, entries: Sequence[Entry], cache: Path | None = None) -> None:
        import hyperscan

        super().__init__(entries)
        self._hyperscan = hyperscan
        path = cache / f"scan-{self._digest()}.hsdb" if cache is not None else None
        database = self._load(path) if path is not None else None
        if database is None:
            expressions, flags = self.expressions()
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            database.compile(expressions=expressions, ids=list(range(len(expressions))),
                             elements=len(expressions), flags=flags)
            if path is not None:
                self._store(path, database)
        self.database: Any = database
        self.scratch = hyperscan.Scratch(database)

    def expressions(self, widened: list[tuple[Entry, str]] | None = None) -> tuple[list[bytes], list[int]]:
        """The database's expressions and flags, one per entry; `widened` collects the entries
        matched more loosely than their regex (and why)."""
        expressions: list[bytes] = []
        flags: list[int] = []
        for entry in self.entries:
            if entry.pattern is not None:
                try:
                    translation = translate(entry.pattern.source)
                except Untranslatable as error:
                    if widened is not None:
                        widened.append((entry, f"its literals stand in for it ({error})"))
                else:
                    if widened is not None and not translation.exact:
                        widened.append((entry, "anchors, lookarounds or backreferences are left to Python"))
                    expressions.append(translation.expression)
                    flags.append(0)
                    continue
            # A marker, or a regex with no translation: any of its literals, in any case.
            expressions.append(b"|".join(_hex(literal) for literal in entry.literals))
            flags.append(self._hyperscan.HS_FLAG_CASELESS)
        return expressions, flags

    def _digest(self) -> str:
        return _digest(self.entries, getattr(self._hyperscan, "__version__", ""))

    def _load(self, path: Path) -> Any:
        try:
            return self._hyperscan.loadb(path.read_bytes(), self._hyperscan.HS_MODE_BLOCK)
        except (OSError, self._hyperscan.error):  # missing, or from another CPU or version
            return None

    def _store(self, path: Path, database: Any) -> None:
        try:
            make_cache(path.parent)  # only the user cache is made with its parents
            import tempfile  # (and shutil with it) only when a cache is written

            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".scan-")
            with os.fdopen(handle, "wb") as out:
                out.write(self._hyperscan.dumpb(database))
            os.replace(temporary, path)
            _prune(path.parent)
        except OSError:
            pass  # an unwritable cache costs the compile next time, nothing else

    def candidates(self, block: bytes) -> Candidates:
        found: list[tuple[int, int]] = []
        append = found.append
        limit = HITS_SLACK
        counted = False

        def on_match(index: int, start: int, end: int, flags: int, context: object) -> bool:
            nonlocal limit, counted
            append((end, index))
            if len(found) <= limit:
                return False
            if not counted:  # only a block with many matches has its lines counted
                counted = True
                limit = HITS_PER_LINE * (block.count(b"\n") + 1) + HITS_SLACK
            return len(found) > limit  # True stops the scan

        try:
            self.database.scan(block, match_event_handler=on_match, scratch=self.scratch)
        except self._hyperscan.ScanTerminated:
            return self._line_by_line(block)
        if not found:
            return []
        found.sort()
        return _lines_of(block, found)

    def _line_by_line(self, block: bytes) -> Candidates:
        """`candidates` for a block with thousands of matches a line: each line scanned on its
        own, and a line that still reports more than LINE_HITS matches is a candidate for every
        entry whose literal it contains."""
        result: Candidates = []
        ids: set[int] = set()
        hits = 0

        def on_match(index: int, start: int, end: int, flags: int, context: object) -> bool:
            nonlocal hits
            ids.add(index)
            hits += 1
            return hits > LINE_HITS

        start = 0
        for line in block.split(b"\n"):
            if not line:
                start += 1
                continue
            ids.clear()
            hits = 0
            try:
                self.database.scan(line, match_event_handler=on_match, scratch=self.scratch)
            except self._hyperscan.ScanTerminated:
                ids.update(self.by_literals(line))
            if ids:
                result.append((start, sorted(ids)))
            start += len(line) + 1
        return result


KEEP_DATABASES = 20  # rule libraries since edited, site rules: the cache stays bounded


def _digest(entries: Sequence[Entry], version: str) -> str:
    """Names what is made from the entries without making it: what the entries are, and the
    code and library version that turn them into a database (or expressions)."""
    hasher = hashlib.sha256(f"{DATABASE_FORMAT}:{version}:".encode())
    hasher.update(Path(translate.__code__.co_filename).read_bytes())
    for entry in entries:
        source = entry.pattern.source if entry.pattern is not None else ""
        hasher.update(f"{entry.owner}\0{source}\0{chr(1).join(entry.literals)}\n".encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()[:24]


def _prune(directory: Path, pattern: str = "scan-*.hsdb") -> None:
    found = sorted(directory.glob(pattern), key=lambda path: path.stat().st_mtime, reverse=True)
    for stale in found[KEEP_DATABASES:]:
        stale.unlink(missing_ok=True)


def _hex(literal: str) -> bytes:
    return "".join(f"\\x{byte:02x}" for byte in literal.encode("utf-8")).encode("ascii")


# -- literals: Aho-Corasick, or bytes.find ---------------------------------------------------


class _LiteralPrefilter(Prefilter):
    """A line is a candidate for an entry when it holds one of the entry's literals and the
    entry's byte expression (the one hyperscan would scan for, logsift.rules.translate) matches
    the raw line: healthy lines that only share a word with a rule ("error" in a request log)
    are dropped here, before anything is decoded or parsed, so the candidates are those of the
    hyperscan engine. The expressions are searched with one google-re2 `Set` (linear time, a
    few microseconds a line), else each with the `regex` module (with a timeout); either is
    made when a block first has a literal hit, so start-up translates and compiles nothing."""

    def __init__(self, entries: Sequence[Entry], cache: Path | None = None) -> None:
        super().__init__(entries)
        owners: dict[bytes, list[int]] = {}
        for index, entry in enumerate(self.entries):
            for literal in entry.literals:
                owners.setdefault(literal.encode("utf-8"), []).append(index)
        self.literals = sorted(owners)
        self.owners = [owners[literal] for literal in self.literals]
        self._cache = cache
        self._narrow: Callable[[bytes, list[int]], list[int]] | None = None

    def _ends(self, lowered: bytes) -> list[tuple[int, int]]:
        raise NotImplementedError

    def candidates(self, block: bytes) -> Candidates:
        ends = self._ends(block.lower())  # bytes.lower folds ASCII only, like hyperscan's caseless
        if not ends:
            return []
        ends.sort()
        owners, find = self.owners, block.find
        narrow = self._narrow or self._narrower()
        result: Candidates = []
        for start, literals in _lines_of(block, ends):
            end = find(b"\n", start)
            kept = narrow(block[start:end] if end >= 0 else block[start:],
                          sorted({entry for literal in literals for entry in owners[literal]}))
            if kept:
                result.append((start, kept))
        return result

    def _expressions(self) -> dict[int, bytes]:
        """Entry id -> its byte expression, for the entries that have one (not markers, not
        regexes without a translation: their literals stand in for them, as in hyperscan).
        Kept in the user cache like hyperscan's database: translating costs a few hundred ms."""
        path = self._cache / f"expressions-{_digest(self.entries, 'text')}.json" if self._cache is not None else None
        if path is not None:
            try:
                stored = json.loads(path.read_text(encoding="ascii"))
                return {int(index): bytes.fromhex(expression) for index, expression in stored.items()}
            except (OSError, ValueError, TypeError, AttributeError):
                pass  # missing or damaged: translate again
        found: dict[int, bytes] = {}
        for index, entry in enumerate(self.entries):
            if entry.pattern is not None:
                try:
                    found[index] = translate(entry.pattern.source).expression
                except Untranslatable:
                    continue
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                import tempfile  # (and shutil with it) only when a cache is written

                handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".expressions-")
                with os.fdopen(handle, "w", encoding="ascii") as out:
                    json.dump({str(index): expression.hex() for index, expression in found.items()}, out)
                os.replace(temporary, path)
                _prune(path.parent, "expressions-*.json")
            except OSError:
                pass  # an unwritable cache costs the translation next time, nothing else
        return found

    def _narrower(self) -> Callable[[bytes, list[int]], list[int]]:
        expressions = self._expressions()
        try:
            narrow = self._re2_narrower(expressions)
        except ImportError:
            narrow = self._regex_narrower(expressions)
        self._narrow = narrow
        return narrow

    def _re2_narrower(self, expressions: dict[int, bytes]) -> Callable[[bytes, list[int]], list[int]]:
        import re2

        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1  # bytes, as hyperscan scans them
        options.never_capture = True
        options.max_mem = 64 << 20  # room for the DFA of every expression at once
        matcher = re2.Set.SearchSet(options)
        ids: list[int] = []
        for index, expression in expressions.items():
            try:
                matcher.Add(expression)
            except re2.error:
                continue  # RE2 cannot say it: the literals stand in for it
            ids.append(index)
        matcher.Compile()
        searched = frozenset(ids)
        match = matcher.Match

        def narrow(line: bytes, candidates: list[int]) -> list[int]:
            matched = match(line)
            hit = {ids[number] for number in matched} if matched else set()
            return [index for index in candidates if index in hit or index not in searched]

        return narrow

    def _regex_narrower(self, expressions: dict[int, bytes]) -> Callable[[bytes, list[int]], list[int]]:
        import regex

        searches: dict[int, Callable[..., Any]] = {}
        for index, expression in expressions.items():
            try:
                searches[index] = regex.compile(expression).search
            except regex.error:
                continue

        def narrow(line: bytes, candidates: list[int]) -> list[int]:
            kept: list[int] = []
            for index in candidates:
                search = searches.get(index)
                if search is not None:
                    try:
                        if search(line, timeout=REGEX_TIMEOUT) is None:
                            continue
                    except TimeoutError:
                        self.timeouts += 1  # kept: the rule's own regex decides, with its timeout
                kept.append(index)
            return kept

        return narrow


class AhoCorasickPrefilter(_LiteralPrefilter):
    engine = "ahocorasick"

    def __init__(self, entries: Sequence[Entry], cache: Path | None = None) -> None:
        import ahocorasick_rs

        super().__init__(entries, cache)
        # The DFA costs some memory (a few MB for the bundled library's literals) and scans
        # about twice as fast as the default NFA.
        self.automaton = ahocorasick_rs.BytesAhoCorasick(self.literals,
                                                        implementation=ahocorasick_rs.Implementation.DFA)

    def _ends(self, lowered: bytes) -> list[tuple[int, int]]:
        return [(end, literal) for literal, _start, end in
                self.automaton.find_matches_as_indexes(lowered, overlapping=True)]


class FindPrefilter(_LiteralPrefilter):
    engine = "find"

    def _ends(self, lowered: bytes) -> list[tuple[int, int]]:
        ends: list[tuple[int, int]] = []
        find = lowered.find
        for number, literal in enumerate(self.literals):
            position = find(literal)
            while position >= 0:
                end = position + len(literal)
                ends.append((end, number))
                # One hit per literal per line is enough: go on from the next line.
                next_line = find(b"\n", end)
                if next_line < 0:
                    break
                position = find(literal, next_line + 1)
        return ends


def _available(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def build_prefilter(entries: Sequence[Entry], engine: str = "auto", cache: Path | None = None) -> Prefilter:
    """The fastest engine installed (or the one asked for). `cache`: where hyperscan keeps its
    compiled database (None: compile it every time)."""
    if engine not in ENGINES:
        raise ValueError(f"unknown prefilter engine {engine!r}; known: {', '.join(ENGINES)}")
    makers: dict[str, tuple[str, Callable[[], Prefilter]]] = {
        "hyperscan": ("hyperscan", lambda: HyperscanPrefilter(entries, cache)),
        "ahocorasick": ("ahocorasick_rs", lambda: AhoCorasickPrefilter(entries, cache)),
        "find": ("", lambda: FindPrefilter(entries, cache)),
    }
    order = ["hyperscan", "ahocorasick", "find"] if engine == "auto" else [engine]
    for name in order:
        module, make = makers[name]
        if not module or _available(module):
            return make()
    extra = "fast" if engine == "hyperscan" else "portable"
    raise RuntimeError(f"the {engine} prefilter needs its package: pip install 'logsift[{extra}]'")
