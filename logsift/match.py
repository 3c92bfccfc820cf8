"""Rules against events: the prefilter picks candidate lines, then the rule regexes run.

A rule gives at most one finding per event: its earliest matching line (the first error is
the closest to the cause), except that the traceback catch-all quotes the exception that ended a
chain past "During handling of the above exception". `[[context]]` regexes give facts (values seen elsewhere in the run)
that diagnosis uses to fill in the root cause's explanation; the `[[fact]]` entries of facts.toml
give `RunFact`s, values that describe the run whatever its cause (CUDA_HOME, versions, arguments).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from logsift.cache import cache_dir
from logsift.group import GroupedEvent
from logsift.lazy import compile_lazily
from logsift.read.relay import SOURCE_EXTENSIONS
from logsift.records import Event, Finding, Record, RunFact
from logsift.rules import Pattern, Rule, RuleSet
from logsift.rules.facts import clean
from logsift.rules.pattern import LazyRegex
from logsift.rules.prefilter import REGEX_TIMEOUT as REGEX_TIMEOUT
from logsift.rules.prefilter import Entry, Prefilter, build_prefilter
from logsift.sanitize import redact

RUN_BUDGET = 3.0  # seconds of timed-out searches a whole run may spend
SUSPEND_AFTER = 3  # timeouts after which a regex is skipped for the rest of the run
# Lines that grouping must see even when no rule matches them: the start of a traceback, an NCCL
# warning, and systemd's own lines (in text output: "systemd[1]:", or "init.scope[1]:" with -o
# with-unit, or the unit name with -o cat). A marker in a message is a hit of owner MARKER.
MARKER = -1
MARKERS = ("traceback (most recent call last)", "nccl warn", "systemd[1]:", "init.scope[1]:",
           # `-o cat` drops the prefix: systemd's lines still name the unit.
           ".service: ", ".service - ",
           # A traceback's frame line: a paste that starts below the header is still a traceback.
           "\", line ")
# A rule's literal occurs in the line but none of its regexes matches: a near miss, which makes
# the line an event only for the learned fallback (`Matcher(near=True)`), whose job is to name
# failures that no rule's regex matches. Without it, near misses are left unparsed.
NEAR = -2
# A line its logger marked fatal (glog/absl `F` lines, logrus and slog `level=fatal`):
# such loggers end the process after the line, so the run failed even when no rule knows the
# text. The shapes below make the raw line a candidate; the reader's parsed level decides (a
# record logged at "critical" with no rule's hit is a MARKER hit), and `Matcher.match` reports it
# as the failure rule's finding (the run failed, its cause unknown unless a rule names it).
FATAL_RULE = "serving.failed"
_FATAL_SOURCE = r"\.(?:cc|cpp|h|hpp|inc|cu|c|go):\d+"  # the logger's code location, as read/relay.py takes it
_FATAL_SHAPES = (
    r"(?:^|[\s:\]])\[?F(?:(?:\d{8}|\d{3,4}) \d\d:\d\d:\d\d(?:[.,]\d+)?)?\s+(?:\d+\s+)?[\w./-]*" + _FATAL_SOURCE + r"\]"
    r"|\blevel=(?:fatal|FATAL|Fatal|critical|CRITICAL)\b"
)
_FATAL_LITERALS = (".cc:", ".cpp:", ".h:", ".hpp:", ".inc:", ".cu:", ".c:", ".go:", "level=fatal", "level=critical")
_FATAL_ORIGIN = compile_lazily(_FATAL_SOURCE + "$")
# A pasted excerpt (plain text: no journal time, host, unit, cursor or priority) whose program logged an error and
# then nothing that says it came up: that error is the excerpt's last word, and the run failed
# with its cause unknown unless a rule names it (diagnosis/runs.py decides, on the run as a
# whole). Such a line is reported as a weaker finding of FATAL_RULE; the level comes from the
# parsed prefix (read/relay.py: vLLM, python logging, glog/absl `E`, TensorRT `[E]`, logfmt,
# pytest's `E   `) or a command-line program's own `error: ` / `fatal: `. The shapes below are
# a superset of those raw lines, so that skipping lines changes nothing: they only make a line a
# candidate (owner LEVEL_MARK, dropped before grouping); the parsed record decides.
LEVEL_MARK = -3
_SOURCE_AT = r"[\w./-]*\.(?:" + "|".join(SOURCE_EXTENSIONS) + r"):\d+"  # read/relay.py's glog origins
_ERROR_SHAPES = (
    r"\b(?:ERROR|CRITICAL|FATAL)\b"
    r"|\blevel=(?:err|error|ERR|ERROR|Err|Error|critical|CRITICAL|Critical|fatal|FATAL|Fatal)\b"
    r"|(?:^|[\s:\]\[])[EF](?:(?:\d{8}|\d{3,4}) \d\d:\d\d:\d\d\S*| \d\d-\d\d \d\d:\d\d:\d\d)?\s+(?:\d+\s+)?" + _SOURCE_AT + r"\]"
    r"|\[E\] |(?:^|\s)E {3}\S|\s[EF] \d+ \d+\] " + _SOURCE_AT + r": |\[[EF]:onnxruntime:"
    r"|\b(?:error|fatal)(?:\[[\w-]+\])?: |\] \[(?:error|critical)\] "
    r"|(?:ERRO|FATA|PANI)\["
)
# The glog shapes' literals are their source file's extension and colon (".cc:", ".py:"): the line
# number's digits before "]" would be in every journal line ("python3[1234]:"), which the literal
# engines would then check one by one.
_ERROR_LITERALS = ("error", "critical", "fatal", "erro[", "fata[", "pani[", "[e] ", "[e:onnxruntime:", "[f:onnxruntime:", "e   ",
                   *(f".{extension}:" for extension in SOURCE_EXTENSIONS))
_CLI_ERROR = compile_lazily(r"^(?:error|fatal)(?:\[[\w-]+\])?: \S")
CACHE = Path("<the user cache>")  # the default: logsift.cache.cache_dir() when the Matcher is made
_MARKER_ONLY = frozenset({MARKER})
_LEVEL_ONLY = frozenset({LEVEL_MARK})


@dataclass(frozen=True, slots=True)
class Fact:
    """A value a `[[context]]` regex found, for the rule that asked for it."""

    rule_id: str
    line: int
    text: str
    fields: dict[str, str]


@dataclass
class RegexBudget:
    """What regexes that ran over their time limit cost the run, and which were suspended.

    The per-line timeout bounds one line; this bounds the run: a regex that times out
    SUSPEND_AFTER times (a catastrophic site rule on hostile lines) is skipped for the rest of
    the run, and once RUN_BUDGET seconds have gone to timeouts any regex is skipped at its first.
    The report says so (summary `regex_budget` and a warning), so a miss is never silent."""

    limit: float = RUN_BUDGET
    spent: float = 0.0
    timeouts: int = 0
    counts: dict[tuple[str, int], int] = field(default_factory=dict)  # (rule, regex line) -> timeouts
    first: dict[tuple[str, int], int] = field(default_factory=dict)  # -> input line of the first timeout
    suspended: dict[tuple[str, int], str] = field(default_factory=dict)  # -> "path:line"
    skipped: int = 0  # searches not made because their regex was suspended

    def allows(self, key: tuple[str, int]) -> bool:
        if key in self.suspended:
            self.skipped += 1
            return False
        return True

    def timed_out(self, key: tuple[str, int], where: str, line: int, seconds: float) -> None:
        self.timeouts += 1
        self.spent += seconds
        count = self.counts[key] = self.counts.get(key, 0) + 1
        self.first.setdefault(key, line)
        if count >= SUSPEND_AFTER or self.spent >= self.limit:
            self.suspended[key] = where

    def warnings(self) -> list[str]:
        lines = []
        for key, where in self.suspended.items():
            what = key[0] if key[0].startswith("fact ") else f"rule {key[0]}"
            lines.append(f"{what}: its regex at {where} ran over {REGEX_TIMEOUT}s on {self.counts[key]} "
                         f"line(s) (first at line {self.first[key]}) and was skipped for the rest of the run; "
                         "it risks catastrophic backtracking: run logsift patterns check")
        others = self.timeouts - sum(self.counts[key] for key in self.suspended)
        if others > 0:
            lines.append(f"{others} regex search(es) ran over {REGEX_TIMEOUT}s and missed their line")
        return lines

    def as_dict(self) -> dict[str, Any]:
        return {"seconds": round(self.spent, 3), "limit": self.limit, "timeouts": self.timeouts,
                "suspended": [f"{rule} ({where})" for (rule, _), where in self.suspended.items()],
                "skipped_searches": self.skipped}


@dataclass
class Matched:
    event: GroupedEvent
    findings: list[Finding]
    facts: list[Fact]
    observed: list[RunFact] = field(default_factory=list)  # from facts.toml


class Matcher:
    def __init__(self, rules: RuleSet, engine: str = "auto", cache: Path | None = CACHE, near: bool = False) -> None:
        """`cache`: where the prefilter keeps its compiled database (None: nowhere); `near`: near
        misses (NEAR) are hits too, for the learned fallback."""
        self.rules = rules
        self.near = near
        self.fact_base = 2 * len(rules.rules)
        self.field_facts = tuple(fact for fact in rules.facts if fact.field is not None)
        self.catch_alls = tuple((number, rule) for number, rule in enumerate(rules.rules) if "catch-all" in rule.tags)
        self._engine = engine
        self._cache = cache_dir() if cache is CACHE else cache
        self._prefilter: Prefilter | None = None
        self.budget = RegexBudget()
        self._captures: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}

    @property
    def prefilter(self) -> Prefilter:
        """Built when first needed: an input with no lines loads no engine and reads no database."""
        if self._prefilter is None:
            self._prefilter = build_prefilter(entries(self.rules, self.near), self._engine, self._cache)
            self._prefilter.budget = self.budget
        return self._prefilter

    @property
    def timeouts(self) -> int:
        return self.budget.timeouts

    def scan(self, records: Sequence[Record]) -> list[frozenset[int]]:
        return self.prefilter.scan([record.message for record in records], [record.line for record in records])

    def annotate(self, records: Iterable[Record], batch: int = 2048) -> Iterator[tuple[Record, frozenset[int]]]:
        """Pair each record with its hits, scanning `batch` records at a time."""
        pending: list[Record] = []
        for record in records:
            pending.append(record)
            if len(pending) >= batch:
                yield from zip(pending, self.scan(pending), strict=True)
                pending = []
        if pending:
            yield from zip(pending, self.scan(pending), strict=True)

    def match(self, grouped: GroupedEvent) -> Matched:
        if all(hits <= _MARKER_ONLY for hits in grouped.hits):
            # No rule's or fact's literal (PID 1's "Started ..."): only journal fields can say more.
            fields = list(self._fields(grouped.event.records)) if self.field_facts else []
            return Matched(grouped, self._fatal(grouped.event), [], fields)
        findings: dict[str, Finding] = {}
        facts: list[Fact] = []
        observed: list[RunFact] = []
        event = grouped.event
        candidates = [(record, hits) for record, hits in zip(event.records, grouped.hits, strict=True) if hits]
        if event.kind == "traceback" and candidates:
            # A frame's source line echoes code (`raise OSError('CUDA_HOME ... is not set')`): the
            # exception line says the same thing and is the better evidence, so try it first.
            echoes = _source_echoes(event.records)
            candidates.sort(key=lambda item: item[0].line in echoes)
        fallbacks: set[int] = set()
        for record, hits in candidates:
            lines = record.message.split("\n")
            for owner in sorted(hits):
                if owner < 0:  # MARKER, NEAR: for grouping, not a rule
                    continue
                if owner >= self.fact_base:
                    observed.extend(self._observe(owner - self.fact_base, lines, record))
                    continue
                rule = self.rules.rules[owner // 2]
                if owner % 2 == 0:
                    if rule.id in findings:
                        continue
                    if rule.fallbacks:
                        fallbacks.add(owner // 2)
                    found = self._search(rule, rule.primary, lines, record)
                    if found is not None:
                        findings[rule.id] = self._finding(rule, found, event)
                else:
                    found = self._search(rule, rule.context, lines, record)
                    if found is not None:
                        # Facts are only shown: their line is the one a person looks up.
                        shown = found[0] if record.entry is None else record.entry
                        facts.append(Fact(rule.id, shown, found[1], found[2]))
        for number in sorted(fallbacks):
            rule = self.rules.rules[number]
            if rule.id in findings:
                continue
            for record, hits in candidates:
                if 2 * number in hits:
                    found = self._search(rule, rule.fallbacks, record.message.split("\n"), record)
                    if found is not None:
                        findings[rule.id] = self._finding(rule, found, event, weaker=True)
                        break
        if event.kind == "traceback":
            self._last_handled(findings, candidates, event)
        if self.field_facts:
            observed.extend(self._fields(event.records))
        if not findings:
            # Only near misses (the learned fallback's) or a fact's line: a fatal or an excerpt's
            # error-level line is still what it is.
            return Matched(grouped, self._fatal(event), facts, observed)
        ordered = sorted(findings.values(), key=lambda finding: (finding.line, -finding.priority))
        return Matched(grouped, self._explained_on_same_line(ordered), facts, observed)

    def _last_handled(self, findings: dict[str, Finding], candidates: list[tuple[Record, frozenset[int]]],
                      event: Event) -> None:
        """A catch-all quotes the exception that ended the chain: after "During handling of the
        above exception, another exception occurred" the earlier exception is what the handler
        was dealing with (a KeyError of a lookup, EOF on a prompt), the later one the failure.
        Across "The above exception was the direct cause" the cause stays the earlier one."""
        start = _final_segment(event.records)
        if start is None:
            return
        for number, rule in self.catch_alls:
            found_before = findings.get(rule.id)
            if found_before is None or found_before.line >= start:
                continue
            for record, hits in candidates:
                if record.line >= start and 2 * number in hits:
                    found = self._search(rule, rule.primary, record.message.split("\n"), record)
                    if found is not None:
                        findings[rule.id] = self._finding(rule, found, event)
                        break

    def _observe(self, number: int, lines: list[str], record: Record) -> Iterator[RunFact]:
        fact = self.rules.facts[number]
        key = (f"fact {fact.name}", fact.line)
        for offset, text in enumerate(lines):
            if not self.budget.allows(key):
                return
            started = time.perf_counter()
            try:
                found = list(fact.extract(text))
            except TimeoutError:
                # Counted in the run's regex budget like a rule's regex, and suspended alike.
                self.budget.timed_out(key, f"{fact.path}:{fact.line}", record.line + offset,
                                      time.perf_counter() - started)
                continue
            line = record.entry if record.entry is not None else record.line + (offset if record.lines > 1 else 0)
            for name, label, value in found:
                # Facts are shown, never needed raw: a token in a launch argument goes no further.
                yield RunFact(name, label, redact(value), line, text, fact.kind)

    def _fields(self, records: Sequence[Record]) -> Iterator[RunFact]:
        """Facts from journal fields (structured input): `_CMDLINE` and the like, of the
        service's own processes (PID 1's command line says nothing about the service)."""
        for record in records:
            if not record.fields or record.is_systemd:
                continue
            for fact in self.field_facts:
                value = record.fields.get(fact.field or "")
                if value:
                    yield RunFact(fact.name, fact.label, redact(clean(value)), record.number, record.message, fact.kind)

    def _fatal(self, event: Event) -> list[Finding]:
        """A line logged at fatal level that no rule knows: the failure rule's finding (FATAL_RULE);
        a pasted excerpt's line logged at error level: its weaker finding (see LEVEL_MARK)."""
        rule = self.rules.by_id.get(FATAL_RULE)
        if rule is None:
            return []
        fatal = next((record for record in event.records if record.level == "critical"), None)
        said = fatal or next((record for record in event.records if _logged_error(record)), None)
        if said is None:
            return []
        text = said.message.split("\n", 1)[0]
        return [self._finding(rule, (said.line, text, self._shared((("message", text[:300]),))), event,
                              weaker=fatal is None)]

    @staticmethod
    def _finding(rule: Rule, found: tuple[int, str, dict[str, str]], event: Event, weaker: bool = False) -> Finding:
        line, text, fields = found
        return Finding(
            rule_id=rule.id, severity=rule.severity, priority=rule.priority, line=line, text=text,
            event=event, fields=fields, weaker=weaker,
        )

    def _explained_on_same_line(self, findings: list[Finding]) -> list[Finding]:
        """One line read two ways (the catch-all and a wrapper rule): keep the one that explains."""
        if len(findings) < 2:
            return findings
        by_line: dict[int, set[str]] = {}
        for finding in findings:
            by_line.setdefault(finding.line, set()).add(finding.rule_id)
        kept = []
        for finding in findings:
            others = by_line[finding.line] - {finding.rule_id}
            if any(finding.rule_id in self.rules.by_id[other].explains for other in others):
                continue
            kept.append(finding)
        return kept

    def _shared(self, items: tuple[tuple[str, str], ...]) -> dict[str, str]:
        return _shared_fields(self._captures, items)

    def _search(
        self, rule: Rule, patterns: Sequence[Pattern], lines: list[str], record: Record
    ) -> tuple[int, str, dict[str, str]] | None:
        budget = self.budget
        for offset, text in enumerate(lines):
            lowered = text.lower()
            for pattern in patterns:
                if not any(literal in lowered for literal in pattern.literals):
                    continue
                key = (rule.id, pattern.line)
                if not budget.allows(key):
                    continue
                started = time.perf_counter()
                try:
                    match = pattern.compiled.search(text, timeout=REGEX_TIMEOUT)
                except TimeoutError:
                    budget.timed_out(key, f"{rule.path}:{pattern.line}", record.line + offset,
                                     time.perf_counter() - started)
                    continue
                if match is not None:
                    fields = self._shared(tuple((key, value) for key, value in match.groupdict().items() if value))
                    # A multi-line MESSAGE spans input lines in text and export, not in JSON.
                    return record.line + (offset if record.lines > 1 else 0), text, fields
        return None


SHARED_KEPT = 16384  # distinct captures whose dicts the findings share


def _shared_fields(table: dict[tuple[tuple[str, str], ...], dict[str, str]],
                   items: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """One dict (never changed once made) for every finding that captured the same values: a
    crash loop finds the same thing in thousands of runs, which all keep their findings."""
    shared = table.get(items)
    if shared is None:
        if len(table) >= SHARED_KEPT:
            table.clear()
        shared = table[items] = dict(items)
    return shared


def _final_segment(records: Sequence[Record]) -> int | None:
    """The first line of the chained traceback's segment whose exception a catch-all should
    quote, when a "During handling" link makes it other than the first; None otherwise."""
    links = [(record.line, record.message.lstrip().startswith(_DIRECT_CAUSE)) for record in records
             if record.message.lstrip().startswith((_DIRECT_CAUSE, _DURING_HANDLING))]
    chosen = None
    for line, direct in reversed(links):
        if direct:
            continue  # the cause is above this link: keep walking back
        chosen = line
        break
    return chosen


_DIRECT_CAUSE = "The above exception was the direct cause"
_DURING_HANDLING = "During handling of the above exception"


def entries(rules: RuleSet, near: bool = False) -> list[Entry]:
    """What the prefilter looks for. Owner ids: 2*i for rule i's [[match]] regexes, 2*i+1 for
    its [[context]] regexes, 2*len(rules)+j for the j-th [[fact]] of facts.toml, MARKER for
    grouping's markers, NEAR for the [[match]] literals."""
    found: list[Entry] = []
    literals: set[str] = set()
    for number, rule in enumerate(rules.rules):
        found.extend(Entry(2 * number, pattern, pattern.literals, (rule.id, pattern.line), f"{rule.path}:{pattern.line}")
                     for pattern in rule.matches)
        found.extend(Entry(2 * number + 1, pattern, pattern.literals, (rule.id, pattern.line),
                           f"{rule.path}:{pattern.line}") for pattern in rule.context)
        literals.update(literal for pattern in rule.matches for literal in pattern.literals)
    base = 2 * len(rules.rules)
    found.extend(Entry(base + number, fact.pattern, fact.pattern.literals, (f"fact {fact.name}", fact.line),
                       f"{fact.path}:{fact.line}") for number, fact in enumerate(rules.facts) if fact.pattern is not None)
    found.extend(Entry(MARKER, None, (marker,)) for marker in MARKERS)
    found.append(Entry(MARKER, _FATAL_PATTERN, _FATAL_LITERALS))
    found.append(Entry(LEVEL_MARK, _ERROR_PATTERN, _ERROR_LITERALS))
    if near:
        found.extend(Entry(NEAR, None, (literal,)) for literal in sorted(literals))
    return found


_FRAME = compile_lazily(r'\bFile "[^"]*", line \d+')


def _built_in(source: str, literals: Iterable[str]) -> Pattern:
    """One of this module's own shapes, compiled when a line first needs it (once a process, for
    every Matcher): compiling both up front was a third of the start-up on empty input."""
    return Pattern(index=0, source=source, compiled=LazyRegex(source), literals=tuple(item.lower() for item in literals), line=0)


_FATAL_PATTERN = _built_in(_FATAL_SHAPES, _FATAL_LITERALS)
_ERROR_PATTERN = _built_in(_ERROR_SHAPES, _ERROR_LITERALS)


def _fatal_logger(record: Record) -> bool:
    """Logged at fatal level by a logger that ends the process after the line."""
    return record.logger == "logfmt" or (record.logger in ("glog", "absl") and record.origin is not None
                                         and _FATAL_ORIGIN.search(record.origin) is not None)


def _logged_error(record: Record) -> bool:
    """A line of a pasted excerpt (no journal time, host, unit, cursor or priority) logged at error level."""
    if (record.timestamp is not None or record.host is not None or record.unit is not None
            or record.cursor is not None or record.priority is not None):
        return False
    if record.level in ("error", "critical"):
        return True
    return record.level is None and _CLI_ERROR.match(record.message) is not None


def level_hits(record: Record, hits: frozenset[int]) -> frozenset[int]:
    """A record its logger marked fatal, or an excerpt's line logged at error level, is an event
    for grouping even when no rule's regex matched it (see FATAL_RULE and LEVEL_MARK)."""
    if LEVEL_MARK in hits:
        hits = hits - _LEVEL_ONLY
    if hits:
        return hits
    # Exactly the lines _FATAL_SHAPES and _ERROR_SHAPES make candidates, so that skipping lines
    # changes nothing.
    if record.level == "critical" and _fatal_logger(record):
        return _MARKER_ONLY
    if _logged_error(record):
        return _MARKER_ONLY
    return hits


def _source_echoes(records: Sequence[Record]) -> set[int]:
    """Line numbers of the source lines that a traceback prints under each `File "...", line N`."""
    echoes: set[int] = set()
    for previous, record in zip(records, records[1:], strict=False):
        if 'File "' in previous.message and _FRAME.search(previous.message):
            echoes.add(record.line)
    return echoes
