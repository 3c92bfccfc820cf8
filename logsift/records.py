"""The values that flow between stages: Record -> Event -> Finding -> Run -> Incident.

All are frozen, slotted dataclasses; stages are functions over iterators of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum
from typing import Mapping


class SinceBoot(datetime):
    """A time known only as seconds since boot (`journalctl -o short-monotonic`): differences
    between such times mean something (time to failure), the date (1970) does not. Reports show
    it as an offset from boot."""

    @property
    def seconds(self) -> float:
        return self.timestamp()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Severity(IntEnum):
    """Ordered so that `max()` picks the worst; names are what rule files and JSON use."""

    INFO = 10
    WARNING = 20
    ERROR = 30
    CRITICAL = 40

    @classmethod
    def parse(cls, name: str) -> Severity:
        return cls[name.strip().upper()]

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Record:
    """One journal entry (or one line of a plain log), as a reader understood it.

    `line` is the 1-based number of the entry's first line in the input as given (for a
    journal read natively, its position in the selection: it orders records, nothing more);
    `lines` how many input lines the entry spans (continuation lines of a multi-line MESSAGE);
    `entry` the journal's own sequence number of the entry, when read from journal files
    (stable whatever the selection, so it is what reports show for journals).
    """

    line: int
    message: str
    timestamp: datetime | None = None
    host: str | None = None
    unit: str | None = None
    identifier: str | None = None
    pid: int | None = None
    priority: int | None = None
    cursor: str | None = None
    invocation: str | None = None
    boot: str | None = None
    source: str = "-"
    lines: int = 1
    fields: Mapping[str, str] | None = None
    entry: int | None = None
    # What the prefixes before the message said (read/relay.py): the relayed process (a Ray
    # actor, a compose service, a rank), the logger's level and its code location.
    relay: str | None = None
    level: str | None = None
    origin: str | None = None
    logger: str | None = None

    @property
    def number(self) -> int:
        """What a person is shown: the input line, or the journal's entry number."""
        return self.entry if self.entry is not None else self.line

    @property
    def stream(self) -> tuple[str | None, str | None, int | None, str | None]:
        """Lines of one process: grouping never joins lines of different streams."""
        return (self.host, self.unit or self.identifier, self.pid, self.relay)

    @property
    def is_systemd(self) -> bool:
        """A line that PID 1 (systemd) logged about a unit: lifecycle evidence for runs."""
        return self.identifier == "systemd" and self.pid in (1, None)


@dataclass(frozen=True, slots=True)
class Event:
    """Lines of one stream that belong to one happening: a traceback, a build, a banner, a line."""

    kind: str
    records: tuple[Record, ...]
    level: str | None = None  # the logger level it was logged at, when a prefix said (read/relay.py)

    @property
    def logged_below_error(self) -> bool:
        """Logged as a warning (or less): the program said it carries on."""
        return self.level in ("warning", "info", "debug")

    @property
    def first(self) -> Record:
        return self.records[0]

    @property
    def last(self) -> Record:
        return self.records[-1]

    @property
    def line(self) -> int:
        return self.records[0].line



@dataclass(frozen=True, slots=True)
class Finding:
    """A rule (or the model) recognised a failure class in one line of an event."""

    rule_id: str
    severity: Severity
    priority: int
    line: int
    text: str
    event: Event
    fields: Mapping[str, str] = field(default_factory=dict)
    source: str = "rule"
    confidence: float = 1.0
    # Other lines that supplied values for `fields` ([[context]] regexes): (line, text).
    context: tuple[tuple[int, str], ...] = ()
    weaker: bool = False  # found by a `fallback = true` [[match]]: weaker evidence of its class

    @property
    def record(self) -> Record:
        for record in self.event.records:
            if record.line <= self.line < record.line + record.lines:
                return record
        return self.event.first

    @property
    def number(self) -> int:
        """The line shown for this finding: the input line, or the journal entry's number."""
        record = self.record
        return record.entry if record.entry is not None else self.line


@dataclass(frozen=True, slots=True)
class RunFact:
    """A value that describes a run (CUDA_HOME, the nvcc used, a version, the launch arguments),
    read by a `[[fact]]` of facts.toml; `line` is the line (or journal entry) it was read from."""

    name: str  # "cuda_home", or "environment.CUDA_HOME" for a fact with a key
    label: str  # what reports show: "CUDA_HOME"
    value: str
    line: int
    text: str
    kind: str = "value"  # or "arguments": compared argument by argument


@dataclass(frozen=True, slots=True)
class Run:
    """One start of a unit, from systemd's "Started" (or the first line seen) to its end."""

    host: str | None
    unit: str | None
    started: datetime | None
    ended: datetime | None
    first_line: int
    last_line: int
    outcome: str  # "failed", "healthy", "running", "stopped"
    exit: str | None
    result: str | None
    findings: tuple[Finding, ...]
    root_cause: Finding | None
    symptoms: tuple[Finding, ...]
    invocation: str | None = None
    observed_start: bool = True  # False when the input began after the run had started
    # What the run showed of its environment, in the order facts.toml defines the facts: the
    # first value of each fact first; a fact that took several values in the run has several.
    facts: tuple[RunFact, ...] = ()
    ready: Finding | None = None  # the line that said the server is up
    reload: Record | None = None  # systemd's "Reloading." (daemon-reload) since the unit's previous start
    failure: Finding | None = None  # a line that said the run failed without saying why (signal "failure")

    def fact(self, name: str) -> RunFact | None:
        """The first value the run showed of a fact."""
        for fact in self.facts:
            if fact.name == name:
                return fact
        return None

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"

    @property
    def time_to_failure(self) -> float | None:
        if not self.observed_start or self.started is None or self.ended is None or not self.failed:
            return None
        return (self.ended - self.started).total_seconds()


@dataclass(frozen=True, slots=True)
class Incident:
    """Consecutive failed runs of one unit; resolved when a later run came up healthy."""

    host: str | None
    unit: str | None
    runs: tuple[Run, ...]
    resolved: bool
    resolved_at: datetime | None = None

    @property
    def failed_runs(self) -> tuple[Run, ...]:
        return tuple(run for run in self.runs if run.failed)

    @property
    def root_cause(self) -> Finding | None:
        for run in reversed(self.failed_runs):
            if run.root_cause is not None:
                return run.root_cause
        return None

    @property
    def severity(self) -> Severity:
        causes = [run.root_cause.severity for run in self.failed_runs if run.root_cause]
        return max(causes, default=Severity.ERROR)

    @property
    def first_seen(self) -> datetime | None:
        return self.runs[0].started or _first_time(self.runs[0])

    @property
    def last_seen(self) -> datetime | None:
        last = self.failed_runs[-1] if self.failed_runs else self.runs[-1]
        return last.ended or _last_time(last)


def _first_time(run: Run) -> datetime | None:
    for finding in run.findings:
        if finding.event.first.timestamp is not None:
            return finding.event.first.timestamp
    return None


def _last_time(run: Run) -> datetime | None:
    for finding in reversed(run.findings):
        if finding.event.last.timestamp is not None:
            return finding.event.last.timestamp
    return None


@dataclass
class Tally:
    """How often one kind of read problem happened, and where it happened first."""

    count: int = 0
    first: str = ""


@dataclass
class ReadProblems:
    """What readers skipped or cut while streaming, so that the CLI can say so in one line each.

    Mutable on purpose: readers add to it as they go; it is read once the input is exhausted.
    `bad` counts records that were skipped (invalid JSON, a cut export entry, garbage) and
    `lost` the input bytes they took with them, when the reader knows; `files` the inputs that
    could not be read (wholly, or from some point on: `PATH: why`); `notes` count things that
    were read but are incomplete (a value over the size cap, fields that journalctl nulled
    because it ran without `--all`), keyed by `NOTES`; `guesses` how a format was chosen when
    the first lines did not say (`PATH: read as export after 2 lines of noise`).
    """

    bad: Tally = field(default_factory=Tally)
    lost: int = 0
    files: list[str] = field(default_factory=list)
    notes: dict[str, Tally] = field(default_factory=dict)
    guesses: list[str] = field(default_factory=list)

    def skip(self, where: str, why: str, size: int = 0) -> None:
        """One bad record at `where`, and the `size` bytes of input it took with it."""
        if not self.bad.count:
            self.bad.first = f"{where}: {why}"
        self.bad.count += 1
        self.lost += size

    def lose_file(self, where: str, why: str) -> None:
        self.files.append(f"{where}: {why}")

    def guess(self, where: str, how: str) -> None:
        self.guesses.append(f"{where}: {how}")

    def note(self, kind: str, where: str) -> None:
        tally = self.notes.setdefault(kind, Tally(first=where))
        tally.count += 1

    def warnings(self) -> list[str]:
        """One sentence per kind of problem, for `logsift: warning: ...` lines."""
        lines: list[str] = [f"not read: {where}" for where in self.files[:20]]
        if len(self.files) > 20:
            lines.append(f"not read: {len(self.files) - 20} more inputs")
        if self.bad.count:
            noun = "record" if self.bad.count == 1 else "records"
            lost = f", {self.lost:,} bytes lost" if self.lost else ""
            lines.append(f"skipped {self.bad.count} bad {noun}{lost} (first at {self.bad.first})")
        for kind, tally in self.notes.items():
            template = NOTES.get(kind, kind + " ({count}, first at {first})")
            lines.append(template.format(count=tally.count, first=tally.first))
        return lines


NOTES: dict[str, str] = {
    "null": "{count} null field value(s) (first at {first}): journalctl replaces values over 4096 bytes "
    "with null unless it is given --all; rerun it with --all",
    "blob": "{count} value(s) shown as [blob data] (first at {first}): rerun journalctl with --all",
    "truncated": "{count} value(s) over the size cap were cut (first at {first}); the cut is marked in the text",
}
