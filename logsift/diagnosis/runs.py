"""From findings to incidents: runs of a unit, the root cause of each run, incidents across runs.

A run is one start of a unit, bounded by systemd's lifecycle lines (or by
`_SYSTEMD_INVOCATION_ID` when the reader knows it). The root cause of a failed run is its most
specific cause: findings that another finding `explains` become symptoms, then the highest
priority wins, then the earliest line. Consecutive failed runs of one unit form one incident; a
later run that comes up healthy resolves it. Findings in runs that did not fail are reported
as findings, not incidents.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, Iterable, Sequence

from logsift.diagnosis import lifecycle
from logsift.diagnosis.compact import compact
from logsift.diagnosis.host import HOST_EVENT_WINDOW, FailedRuns, Span
from logsift.diagnosis.lifecycle import Lifecycle
from logsift.match import Fact, Matched
from logsift.records import Event, Finding, Incident, Record, Run, RunFact, Severity
from logsift.rules import RuleSet

UnitKey = tuple[str | None, str | None]
RECENT_UNITS = 64  # when every unit of a host has stopped: the latest started that are looked at
# A daemon-reload counts for the first start of a unit seen only when it came this soon before.
RELOAD_WINDOW = timedelta(hours=1)
# Facts kept per run: values per fact (a fact rarely takes more than one) and facts with a key
# (Environment= lines), so that memory stays bounded whatever a run prints.
MAX_FACT_VALUES = 4
MAX_FACTS = 64
FINDINGS_KEPT = 500  # per run in follow mode (Diagnoser.forget)
LINGER = timedelta(minutes=5)  # follow mode: a unit whose runs all ended is kept this long (forget)


@dataclass(slots=True)
class _Run:
    host: str | None
    unit: str | None
    first_line: int
    started: datetime | None = None
    invocation: str | None = None
    findings: list[Finding] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    observed: dict[str, list[RunFact]] = field(default_factory=dict)  # facts.toml, by name
    reload: Record | None = None
    ready: Finding | None = None
    failure: Finding | None = None  # the latest line that said the run failed, without saying why
    # A pasted excerpt's latest line logged at error level that no rule knows (match.LEVEL_MARK):
    # the run failed when nothing after it says the program came up.
    logged_error: Finding | None = None
    last_line: int = 0
    last_time: datetime | None = None
    ended: datetime | None = None
    exit: str | None = None
    result: str | None = None
    explicit_failure: bool = False
    clean_exit: bool = False
    stopping: bool = False
    closed: bool = False
    # Made at a run's first process line: most runs of a unit flood (timers, transient units)
    # have only PID 1's lines, and an empty set costs 216 bytes.
    pids: set[int] | None = None
    identifiers: set[str] | None = None
    opened_by: str = "implicit"  # or the lifecycle line that opened it: "starting", "started"
    first_cursor: str | None = None  # the journal cursor of the line that opened it (follow mode)
    # The latest event a handled-signal line made, when it was the run's latest event: it may
    # announce the traceback after it (socketserver's "Exception occurred during processing of
    # request from ...").
    announced: Event | None = None

    def touch(self, record: Record) -> None:
        self.last_line = max(self.last_line, record.line + record.lines - 1)
        if record.timestamp is not None:
            self.last_time = record.timestamp
            if self.started is None and not self.findings and not self.facts:
                self.started = record.timestamp


@dataclass(frozen=True, slots=True)
class Noted:
    """A finding in runs that did not fail, with how often it recurred on that unit."""

    finding: Finding
    host: str | None
    unit: str | None
    count: int
    last_line: int


@dataclass(frozen=True, slots=True)
class Progress:
    """Follow mode: one run as it stands now, and what a restart would need to rebuild it.

    `closed`: systemd ended it (failed, stopped, restart scheduled) or a later run began;
    `explicit`: systemd said it failed (an exit status, "Failed with result"), as opposed to a
    fatal finding in a run that may still be running; `replay`: the input line, journal cursor
    and time of the first line that what is still undecided about the run depends on (None when
    nothing is: the run is closed, or came up and logged nothing since).
    """

    run: Run
    closed: bool
    explicit: bool
    replay: tuple[int, str, datetime | None] | None


@dataclass(frozen=True)
class Diagnosis:
    incidents: tuple[Incident, ...]
    findings: tuple[Noted, ...]  # in runs that did not fail: warnings, not incidents
    runs: tuple[Run, ...]  # every run that failed, had findings, or resolved an incident
    unclassified: tuple[Finding, ...]
    quiet_runs: int = 0  # runs that came and went without a word worth keeping
    units: tuple[str, ...] = ()  # every unit that had a run, quiet ones included

    @property
    def run_count(self) -> int:
        return len(self.runs) + self.quiet_runs


class Diagnoser:
    """Fed matched events in input order; `finish()` gives the diagnosis so far."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.runs: dict[UnitKey, list[_Run]] = {}
        self.pid_units: dict[tuple[str | None, int], str | None] = {}
        self.descriptions: dict[tuple[str | None, str], str] = {}
        self.order: dict[UnitKey, None] = {}  # units in order of first appearance (an ordered set)
        # Indexes, so that the cost of a line does not grow with the number of units (100,000
        # timer units on one host): the named units of each host, the units whose runs logged
        # under an identifier, the words of unit names, the units whose last run may be open
        # (pruned as they are looked at), and the units by their latest start.
        self.host_units: dict[str | None, dict[str, None]] = {}
        self.identifier_units: dict[tuple[str | None, str], dict[str, None]] = {}
        self.word_units: dict[tuple[str | None, str], dict[str, None]] = {}
        # Services not yet in word_units: indexed when a process first needs a unit by its name
        # (a flood of timer and transient units that never log costs no word index).
        self.unindexed: dict[str | None, list[str]] = {}
        self.open_units: dict[str | None, dict[str, None]] = {}
        self.started_units: dict[str | None, OrderedDict[str, None]] = {}
        self.host_events: list[Matched] = []  # kernel lines on a host that runs named units
        self.quiet_runs = 0  # runs forgotten because nothing happened in them
        # (host, unit, class) -> [first finding, count, last line], for runs that did not fail
        self.noted: dict[tuple[str | None, str | None, str], list[Any]] = {}
        self.reloads: dict[str | None, Record] = {}  # host -> its latest "Reloading."
        self.fact_order = {name: index for index, name in enumerate(rules.fact_labels)}
        self.changed: set[UnitKey] = set()  # units whose runs changed since take_changed()

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, matched: Matched) -> None:
        event = matched.event.event
        record = event.first
        if event.kind == "lifecycle":
            parsed = lifecycle.parse(record.message)
            if parsed is not None:
                self._lifecycle(record, parsed, matched)
                return
            # Another systemd line about a unit ("X.service: A process of this unit has been
            # killed by the OOM killer."): it belongs to that unit's run, whatever PID 1 said before.
            named = lifecycle.unit_named(record.message)
            if named is not None:
                runs = self.runs.get((record.host, named))
                run = runs[-1] if runs else self._run_for(record.host, named, record)
                run.touch(record)
                self._attach(run, matched)
                return
            if matched.findings:
                self.host_events.append(matched)  # PID 1 speaks for the host, like the kernel
            return
        if record.identifier == "kernel" and record.unit is None and self._has_units(record.host):
            # The kernel speaks for the host (an Xid, the OOM killer): which unit it hit is decided
            # at the end, by which run failed around that time.
            if matched.findings:
                self.host_events.append(matched)
            return
        unit = self._unit_of(record)
        run = self._run_for(record.host, unit, record)
        for item in event.records:
            run.touch(item)
        if record.pid is not None:
            if run.pids is None:
                run.pids = set()
            run.pids.add(record.pid)
        if record.identifier is not None:
            if run.identifiers is None:
                run.identifiers = set()
            run.identifiers.add(record.identifier)
            if unit is not None:
                self.identifier_units.setdefault((record.host, record.identifier), {})[unit] = None
        self._attach(run, matched)

    def _attach(self, run: _Run, matched: Matched) -> None:
        self.changed.add((run.host, run.unit))
        # A rule with signal "handled" knows this event as an error the program logged and went on
        # from (inductor's autotuner skipping a choice that failed): what else the event matched
        # (its traceback's catch-all, the error's own class) fails no run and is no root cause.
        handled = any(self._signal(finding) == "handled" for finding in matched.findings)
        event = matched.event.event
        announced, run.announced = run.announced, None
        if handled and event.kind == "line":
            # The line may announce the traceback that comes next (the handler prints both), or
            # say what it did about the error lines right before it (llama.cpp's "compute buffer
            # allocation failed, retrying without pipeline parallelism").
            run.announced = event
            _drop_just_before(run, event)
        elif (announced is not None and event.kind == "traceback" and event.first.stream == announced.first.stream
              and event.first.line == announced.last.line + announced.last.lines):
            handled = True
        for finding in matched.findings:
            rule = self.rules.by_id.get(finding.rule_id)
            if handled and (rule is None or rule.signal in (None, "handled", "failure")):
                continue
            if rule is not None and rule.signal == "ready":
                run.ready = finding
            elif rule is not None and rule.signal == "failure":
                if finding.weaker:
                    run.logged_error = finding
                else:
                    run.failure = finding
            else:
                run.findings.append(finding)
        run.facts.extend(matched.facts)
        for fact in matched.observed:
            values = run.observed.get(fact.name)
            if values is None:
                if len(run.observed) >= MAX_FACTS:
                    continue
                values = run.observed[fact.name] = []
            if len(values) < MAX_FACT_VALUES and all(fact.value != seen.value for seen in values):
                values.append(fact)

    def _signal(self, finding: Finding) -> str | None:
        rule = self.rules.by_id.get(finding.rule_id)
        return None if rule is None else rule.signal

    def _unit_of(self, record: Record) -> str | None:
        if record.unit is not None:
            return record.unit
        if record.pid is None:
            return self._only_unit(record.host)
        key = (record.host, record.pid)
        if key in self.pid_units:
            return self.pid_units[key]
        unit = self._active_unit(record)
        self.pid_units[key] = unit
        return unit

    def _active_unit(self, record: Record) -> str | None:
        """The unit a process we have not seen before belongs to, on a host that runs several.

        The text reader skips lines that cannot matter, so a process is often first seen long
        after its unit started, and after other units started. In order: the unit whose current
        run already has processes of this identifier (another TP rank), the unit named like the
        identifier (`ollama` -> ollama.service, `text-generation-launcher` ->
        text-generation-inference.service), a unit whose earlier runs logged under it, then
        the most recently started service that has not logged yet, then the most recent one.
        Each test looks only at the units an index names, never at every unit of the host.
        """
        host = record.host
        if not self.host_units.get(host):
            return None

        def latest(unit: str) -> _Run | None:
            runs = self.runs.get((host, unit))
            return runs[-1] if runs and unit.endswith(".service") else None

        def recent(unit: str) -> tuple[bool, bool, int]:
            run = latest(unit)
            assert run is not None
            return (not run.closed, not run.identifiers, run.first_line)

        identifier = record.identifier or ""
        if identifier:
            logged = [unit for unit in self.identifier_units.get((host, identifier), ()) if latest(unit) is not None]
            found = [unit for unit in logged if identifier in (latest(unit).identifiers or ())]  # type: ignore[union-attr]
            if not found:
                named: dict[str, None] = {}
                self._index_words(host)
                for word in _words(identifier) - _GENERIC:
                    named.update(self.word_units.get((host, word), {}))
                found = [unit for unit in named if latest(unit) is not None]
            if not found:
                found = [unit for unit in logged
                         if any(identifier in (run.identifiers or ()) for run in self.runs[(host, unit)][:-1])]
            if found:
                return max(found, key=recent)
        opened = self.open_units.get(host, {})
        for unit in [unit for unit in opened if (run := latest(unit)) is None or run.closed]:
            del opened[unit]  # each unit leaves once per run: amortised constant
        if opened:
            silent = [unit for unit in opened if not latest(unit).identifiers]  # type: ignore[union-attr]
            return max(silent or opened, key=recent)
        started = self.started_units.get(host, OrderedDict())
        candidates = [unit for unit in islice(reversed(started), RECENT_UNITS) if latest(unit) is not None]
        return max(candidates, key=recent) if candidates else None

    def _has_units(self, host: str | None) -> bool:
        return bool(self.host_units.get(host))

    def _only_unit(self, host: str | None) -> str | None:
        units = self.host_units.get(host)
        return next(iter(units)) if units is not None and len(units) == 1 else None

    def _register(self, key: UnitKey) -> None:
        """A unit seen for the first time: into the order and the indexes."""
        self.order[key] = None
        host, unit = key
        if unit is None:
            return
        self.host_units.setdefault(host, {})[unit] = None
        if unit.endswith(".service"):
            self.unindexed.setdefault(host, []).append(unit)

    def _index_words(self, host: str | None) -> None:
        """The words of the names of the host's services registered since the last call."""
        for unit in self.unindexed.pop(host, ()):
            for word in set(_SEPARATORS.split(unit.removesuffix(".service").lower())):
                if word:
                    self.word_units.setdefault((host, word), {})[unit] = None

    def _started(self, host: str | None, unit: str | None) -> None:
        """A new run of the unit: it may be open, and it is the latest to start."""
        if unit is None:
            return
        self.open_units.setdefault(host, {})[unit] = None
        started = self.started_units.get(host)
        if started is None:
            started = self.started_units[host] = OrderedDict()
        if unit in started:
            started.move_to_end(unit)
        else:
            started[unit] = None

    def _run_for(self, host: str | None, unit: str | None, record: Record) -> _Run:
        key = (host, unit)
        runs = self.runs.get(key)
        if runs is None:
            runs = self.runs[key] = []
            self._register(key)
        if runs:
            last = runs[-1]
            if not (record.invocation and last.invocation and record.invocation != last.invocation):
                # Lines after a run ended are its processes' last words: a new run needs "Started".
                last.invocation = last.invocation or record.invocation
                return last
            last.closed = True
            _compact(last)
        run = _Run(host=host, unit=unit, first_line=record.line, invocation=record.invocation,
                   first_cursor=record.cursor)
        runs.append(run)
        self._started(host, unit)
        self.changed.add(key)
        return run

    def _lifecycle(self, record: Record, parsed: Lifecycle, matched: Matched) -> None:
        unit = parsed.unit
        host = record.host
        if parsed.what == "reloading":
            self.reloads[host] = record
            return
        if unit is None and parsed.description:
            unit = self.descriptions.get((host, parsed.description)) or self._only_unit(host)
            if unit is None:
                return  # "Started Session 3 of user root.": not about a unit we follow
        elif unit is not None and parsed.description is None and (host, None) in self.runs:
            self._adopt(host, unit)
        if parsed.what == "started" and parsed.unit and " - " in record.message:
            self.descriptions[(host, record.message.split(" - ", 1)[1].rstrip("."))] = parsed.unit
        key = (host, unit)
        runs = self.runs.setdefault(key, [])
        if key not in self.order:
            self._register(key)
        self.changed.add(key)
        last = runs[-1] if runs else None
        what = parsed.what
        if what in ("starting", "started"):
            # "Started" confirms the run that "Starting" opened; anything else opens a new run.
            confirms = (
                last is not None and what == "started" and last.opened_by == "starting"
                and not last.closed and last.exit is None
            )
            if last is None or not confirms:
                if last is not None and not last.closed:
                    last.closed = True
                reload = self._reload_before(host, last, record)
                self._forget_quiet(runs)
                if runs:
                    _compact(runs[-1])
                last = _Run(host=host, unit=unit, first_line=record.line, started=record.timestamp,
                            invocation=record.invocation, opened_by=what, reload=reload,
                            first_cursor=record.cursor)
                runs.append(last)
                self._started(host, unit)
            last.touch(record)
            return
        if last is None:  # the input starts after the run began
            last = _Run(host=host, unit=unit, first_line=record.line, started=None, first_cursor=record.cursor)
            runs.append(last)
            self._started(host, unit)
        last.touch(record)
        self._attach(last, matched)
        if what == "exited":
            last.exit = parsed.exit
            last.ended = record.timestamp
            if parsed.success:
                last.clean_exit = True
            elif not last.stopping:
                last.explicit_failure = True
        elif what in ("failed", "failed-start", "timeout", "limit"):
            last.explicit_failure = True
            last.result = parsed.result or last.result or {"limit": "start-limit-hit", "timeout": "timeout"}.get(what)
            last.ended = last.ended or record.timestamp
            if what in ("failed", "failed-start", "limit"):
                last.closed = True
        elif what == "stopping":
            last.stopping = True
        elif what in ("deactivated", "stopped", "restart"):
            last.ended = last.ended or record.timestamp
            last.closed = True

    def _reload_before(self, host: str | None, previous: _Run | None, record: Record) -> Record | None:
        """systemd's daemon-reload on this host since the unit's previous start (or shortly before
        the first start seen): the unit files this start read may differ from the last one's."""
        reload = self.reloads.get(host)
        if reload is None:
            return None
        if previous is not None:
            return reload if reload.line > previous.first_line else None
        if record.timestamp is not None and reload.timestamp is not None and \
                record.timestamp - reload.timestamp > RELOAD_WINDOW:
            return None
        return reload

    def _forget_quiet(self, runs: list[_Run]) -> None:
        """Memory must not grow with the journal: a run that ended without failing, after a run
        that did not fail either, can neither be part of an incident nor resolve one, so only its
        count and its findings, folded per class, are kept (units restart, timers run every few
        minutes, for months)."""
        if not runs or not runs[-1].closed:
            return
        last = runs[-1]
        if self._outcome(last) == "failed":
            return
        if len(runs) >= 2 and self._outcome(runs[-2]) == "failed":
            return  # it resolves the incident before it
        self._note(last, self.noted)
        for pid in last.pids or ():
            self.pid_units.pop((last.host, pid), None)
        runs.pop()
        self.quiet_runs += 1

    @staticmethod
    def _note(run: _Run, noted: dict[tuple[str | None, str | None, str], list[Any]]) -> None:
        for finding in run.findings:
            if finding.severity < Severity.WARNING:
                continue
            key = (run.host, run.unit, finding.rule_id)
            entry = noted.get(key)
            if entry is None:
                noted[key] = [finding, 1, finding.line]
            else:
                entry[1] += 1
                entry[2] = finding.line

    def _adopt(self, host: str | None, unit: str) -> None:
        """Lines read before systemd named the unit belong to it (an excerpt without "Started")."""
        unnamed = self.runs.get((host, None))
        if not unnamed or (host, unit) in self.runs or self._has_units(host):
            return
        self.runs[(host, unit)] = unnamed
        del self.runs[(host, None)]
        # The unnamed key's place in the order goes to the unit (rare: once per excerpt).
        self.order = {((host, unit) if key == (host, None) else key): None for key in self.order}
        self._register((host, unit))
        for run in unnamed:
            run.unit = unit
        self._started(host, unit)
        for key, value in list(self.pid_units.items()):
            if key[0] == host and value is None:
                self.pid_units[key] = unit

    # -- results ---------------------------------------------------------------------------

    def _failed_runs(self) -> FailedRuns[_Run]:
        return FailedRuns(
            (host, Span(run.first_line, run.last_line, run.ended or run.last_time, order), run)
            for order, ((host, unit), run) in enumerate(
                (key, run) for key, runs in self.runs.items() for run in runs)
            if unit is not None and run.explicit_failure
        )

    def _place_host_events(self) -> None:
        """Give each kernel event to the run that failed right after it on the same host, or, when
        none did, to the host itself (an Xid or OOM kill that took no unit down is still news)."""
        self.place_host_events(None, wait=False)

    # -- follow mode: results as they stand, without rebuilding everything ---------------------

    def take_changed(self) -> set[UnitKey]:
        """The units whose runs changed since the last call."""
        changed, self.changed = self.changed, set()
        return changed

    def progress(self, key: UnitKey) -> list[Progress]:
        """The runs of one unit as they stand now, oldest first."""
        result: list[Progress] = []
        runs = self.runs.get(key, [])
        last = runs[-1] if runs and all(run.closed for run in runs) else None
        for run in runs:
            replay: tuple[int, str, datetime | None] | None = None
            if run.closed and run is last and run.first_cursor is not None and run.explicit_failure:
                # A failed run of a unit that lingers (`forget`): a restart reads it again, so
                # that systemd's last words about it join it then too.
                replay = (run.first_line, run.first_cursor, run.started or run.last_time)
            elif not run.closed and run.first_cursor is not None:
                if run.ready is None and (run.findings or run.facts or run.observed or run.failure):
                    first_seen = run.findings[0].event.first.timestamp if run.findings else None
                    replay = (run.first_line, run.first_cursor, run.started or first_seen)
                elif run.ready is not None:
                    # Came up: only what it logged since then can still decide how it ends.
                    ready_line = run.ready.line
                    after = [f for f in run.findings if f.line > ready_line and f.event.first.cursor]
                    if run.failure is not None and run.failure.line > ready_line and run.failure.event.first.cursor:
                        after.append(run.failure)
                        after.sort(key=lambda finding: finding.line)
                    if after:
                        first = after[0].event.first
                        replay = (first.line, first.cursor or "", first.timestamp)
            result.append(Progress(self._build(run), run.closed, run.explicit_failure, replay))
        return result

    def pending_host_events(self) -> list[Matched]:
        return list(self.host_events)

    def place_host_events(self, latest: datetime | None, wait: bool = True) -> None:
        """Give each kernel event to the run that failed after it on its host, else to the host.
        Follow mode (`wait`) decides only once that is known: a run has failed after it, or
        HOST_EVENT_WINDOW has passed (in log time, up to `latest`); until then it waits."""
        if not self.host_events:
            return
        failed = self._failed_runs()
        waiting: list[Matched] = []
        targets: dict[int, _Run] = {}
        for matched in self.host_events:
            record = matched.event.event.first
            target = failed.taken_down_by(record.host, record.line, record.timestamp)
            if target is None:
                stamp = record.timestamp
                if wait and (latest is None or stamp is None or latest - stamp <= HOST_EVENT_WINDOW):
                    waiting.append(matched)
                    continue
                target = self._run_for(record.host, None, record)
                for item in matched.event.event.records:
                    target.touch(item)
            self._attach(target, matched)
            targets[id(target)] = target
        for target in targets.values():
            target.findings.sort(key=lambda finding: finding.line)
        self.host_events = waiting

    def resume(self, host: str | None, unit: str | None, started: datetime | None, invocation: str | None,
               observed_start: bool) -> None:
        """Follow mode, after a restart: the run a unit was in, known only by how it began (its
        lines are not read again: nothing in them was still undecided). Lines read from here on
        join it, as they would have joined it before the restart."""
        key = (host, unit)
        if key not in self.order:
            self._register(key)
        self.runs.setdefault(key, []).append(
            _Run(host=host, unit=unit, first_line=0, started=started, invocation=invocation,
                 opened_by="started" if observed_start else "implicit"))
        self._started(host, unit)

    def forget(self, key: UnitKey, keep: int = 2, latest: datetime | None = None) -> bool:
        """Follow mode: drop all but the last `keep` runs of a unit once they have been reported,
        so that memory stays flat over a crash loop of days (two are kept: a new run is told to
        resolve an incident or not by the run before it), and the unit itself once all its runs
        ended `LINGER` before `latest` (units come and go: one scope per ssh session). True when
        the unit lingers: all its runs ended, but systemd's last words about them may still come
        ("Failed to start X." after "Failed with result", "Scheduled restart job" after
        RestartSec), and batch mode gives them to the run they are about, not to a new one."""
        runs = self.runs.get(key)
        for run in runs or ():
            # A service that runs for weeks and warns now and then: its first findings (how it
            # came up) and its latest (what a failure would follow) are what can still matter.
            if len(run.findings) > FINDINGS_KEPT:
                del run.findings[FINDINGS_KEPT // 10:len(run.findings) - FINDINGS_KEPT + FINDINGS_KEPT // 10]
            if len(run.facts) > FINDINGS_KEPT:
                del run.facts[FINDINGS_KEPT // 10:len(run.facts) - FINDINGS_KEPT + FINDINGS_KEPT // 10]
        if not runs:
            return False
        lingers = False
        if all(run.closed for run in runs):
            ended = runs[-1].last_time
            lingers = latest is not None and ended is not None and latest - ended < LINGER
        if all(run.closed for run in runs) and not lingers:
            # Every run of it has ended and been reported (an ssh session's scope, a timer's
            # service): nothing of it can change any more. A unit that starts again is met anew.
            drop = len(runs)
            del self.runs[key]
            self._unregister(key)
        elif len(runs) > keep:
            drop = len(runs) - keep
        else:
            return lingers
        kept = set().union(*(run.identifiers or () for run in runs[drop:]))
        for run in runs[:drop]:
            for pid in run.pids or ():
                if self.pid_units.get((run.host, pid)) == run.unit:
                    del self.pid_units[(run.host, pid)]
            for identifier in (run.identifiers or set()) - kept:
                _discard(self.identifier_units, (run.host, identifier), run.unit)
        del runs[:drop]
        return lingers

    def _unregister(self, key: UnitKey) -> None:
        """A unit forgotten: out of the order and of every index `_register` and `_started` put it in."""
        self.order.pop(key, None)
        host, unit = key
        for description in [name for name, named in self.descriptions.items() if name[0] == host and named == unit]:
            del self.descriptions[description]
        if unit is None:
            return
        _discard(self.host_units, host, unit)
        _discard(self.open_units, host, unit)
        _discard(self.started_units, host, unit)
        waiting = self.unindexed.get(host)
        if waiting is not None and unit in waiting:
            waiting.remove(unit)
        for word in set(_SEPARATORS.split(unit.removesuffix(".service").lower())):
            if word:
                _discard(self.word_units, (host, word), unit)

    def finish(self) -> Diagnosis:
        self._place_host_events()
        incidents: list[Incident] = []
        all_runs: list[Run] = []
        unclassified: list[Finding] = []
        noted = {key: list(entry) for key, entry in self.noted.items()}
        for key in self.order:
            runs = self.runs.get(key, [])
            built = [self._build(run) for run in runs]
            all_runs.extend(built)
            incidents.extend(self._incidents(key, built))
            for run, done in zip(runs, built, strict=True):
                if not done.failed:
                    self._note(run, noted)
                elif done.root_cause is not None and done.root_cause.rule_id == "python.unclassified-traceback":
                    unclassified.append(done.root_cause)
        incidents.sort(key=lambda incident: incident.runs[0].first_line)
        findings = sorted(
            (Noted(entry[0], host, unit, entry[1], entry[2]) for (host, unit, _), entry in noted.items()),
            key=lambda item: item.finding.line,
        )
        units = tuple(sorted({unit for _, unit in self.order if unit is not None}))
        return Diagnosis(tuple(incidents), tuple(findings), tuple(all_runs), tuple(unclassified), self.quiet_runs,
                         units)

    def _outcome(self, run: _Run) -> str:
        if run.explicit_failure:
            return "failed"
        if run.clean_exit or (run.stopping and run.exit is not None):
            return "healthy" if run.ready is not None else "stopped"
        ready_line = run.ready.line if run.ready is not None else 0
        # An error the program logged as a warning (an optional import, a first KV-cache size it
        # then shrank) is one it carried on from: alone, it does not make a run fail that systemd
        # saw running, or that came up. In a pasted excerpt (no lifecycle lines, never ready) it
        # is all there is to go on, and it counts.
        excerpt = run.opened_by == "implicit" and run.ready is None
        fatal = [f for f in run.findings
                 if f.severity >= Severity.ERROR and f.line > ready_line and (excerpt or not f.event.logged_below_error)]
        if fatal:
            return "failed"
        # "Error: ..." as a program's last word, "shutdown with error": the run failed, and no rule
        # knows why (its root cause stays unknown rather than a guess).
        if run.failure is not None and run.failure.line > ready_line and not run.failure.event.logged_below_error:
            return "failed"
        # A pasted excerpt that logged an error and never said it came up: that error is where it
        # stopped (a journal's run that is still going is not judged by its error lines).
        if excerpt and run.logged_error is not None:
            return "failed"
        if run.ready is not None:
            return "healthy"
        return "stopped" if run.closed else "running"

    def _build(self, run: _Run) -> Run:
        outcome = self._outcome(run)
        root = self.choose_root(run.findings, run.ready) if outcome == "failed" and run.findings else None
        if root is not None:
            root = self._enrich(root, run.facts)
        # Other findings are symptoms; another rank repeating the root cause is not news.
        symptoms = tuple(
            f for f in run.findings
            if f.severity >= Severity.WARNING and (root is None or f.rule_id != root.rule_id)
        ) if run.findings else ()
        return Run(
            host=run.host,
            unit=run.unit,
            started=run.started,
            ended=run.ended if run.ended is not None else (run.last_time if outcome == "failed" else None),
            first_line=run.first_line,
            last_line=max(run.last_line, run.first_line),
            outcome=outcome,
            exit=run.exit,
            result=run.result,
            findings=tuple(run.findings),
            root_cause=root,
            symptoms=symptoms,
            invocation=run.invocation,
            observed_start=run.opened_by != "implicit",
            facts=self._facts(run),
            ready=run.ready,
            reload=run.reload,
            failure=(run.failure or run.logged_error) if outcome == "failed" else None,
        )

    def _facts(self, run: _Run) -> tuple[RunFact, ...]:
        """In the order facts.toml defines them (a fact with a key after its base name), so
        that runs line up when a report compares them."""
        if not run.observed:
            return ()

        def order(name: str) -> tuple[int, str]:
            base = name.split(".", 1)[0]
            return (self.fact_order.get(base, len(self.fact_order)), name)

        return tuple(fact for name in sorted(run.observed, key=order) for fact in run.observed[name])

    def choose_root(self, findings: Sequence[Finding], ready: Finding | None = None) -> Finding | None:
        causes = [f for f in findings if f.severity >= Severity.WARNING]
        if ready is not None:
            after = [f for f in causes if f.line > ready.line and f.severity >= Severity.ERROR]
            causes = after or causes
        if not causes:
            return None
        present = {f.rule_id for f in causes}
        explained: set[str] = set()
        explained_fallback: set[str] = set()
        for finding in causes:
            rule = self.rules.by_id.get(finding.rule_id)
            if rule is not None:
                explained.update(other for other in rule.explains if other != finding.rule_id and other in present)
                explained_fallback.update(other for other in rule.explains_fallback if other != finding.rule_id)
        candidates = [f for f in causes if f.rule_id not in explained
                      and not (f.weaker and f.rule_id in explained_fallback)] or causes
        # Within a rank, a finding of a rule's own wording beats its weaker evidence (a kernel's
        # OOM report header beats nothing, but the kill line that names the victim beats it).
        return max(candidates, key=lambda f: (_rank(f), not f.weaker, f.severity, -f.line))

    def _enrich(self, root: Finding, facts: Iterable[Fact]) -> Finding:
        fields = dict(root.fields)
        context: list[tuple[int, str]] = []
        for fact in facts:
            if fact.rule_id != root.rule_id:
                continue
            new = {name: value for name, value in fact.fields.items() if name not in fields}
            if new:
                fields.update(new)
                context.append((fact.line, fact.text))
        if not context:
            return root
        return replace(root, fields=fields, context=tuple(context))

    def _incidents(self, key: UnitKey, runs: list[Run]) -> list[Incident]:
        incidents: list[Incident] = []
        current: list[Run] = []
        for run in runs:
            if run.failed:
                current.append(run)
            elif current and run.outcome == "healthy":
                current.append(run)
                incidents.append(Incident(key[0], key[1], tuple(current), True, run.started))
                current = []
            elif current:
                current.append(run)
        if current:
            incidents.append(Incident(key[0], key[1], tuple(current), False))
        return incidents


def _compact(run: _Run) -> None:
    """A run that the next run of its unit followed keeps slim copies of its events (compact.py)."""
    run.findings, (run.ready, run.failure, run.logged_error) = compact(run.findings, run.ready, run.failure,
                                                                       run.logged_error)


HANDLED_GAP = 2


def _drop_just_before(run: _Run, handled: Event) -> None:
    """The findings of the one-line events of the handled line's stream that end right above it,
    one after the other (at most HANDLED_GAP lines no rule flagged between them: the rest of the
    same error report): the errors the handled line says the program dealt with."""
    stream, expect = handled.first.stream, handled.first.line - 1

    def right_above(event: Event) -> bool:
        last = event.last
        end = last.line + last.lines - 1
        return event.kind == "line" and event.first.stream == stream and expect - HANDLED_GAP <= end <= expect

    while True:
        if run.findings and right_above(run.findings[-1].event):
            event = run.findings[-1].event
            while run.findings and run.findings[-1].event is event:
                run.findings.pop()
        elif run.logged_error is not None and right_above(run.logged_error.event):
            event = run.logged_error.event
        else:
            return
        if run.logged_error is not None and run.logged_error.event is event:
            run.logged_error = None
        expect = event.first.line - 1


def diagnose(rules: RuleSet, matched: Iterable[Matched]) -> Diagnosis:
    diagnoser = Diagnoser(rules)
    for item in matched:
        diagnoser.feed(item)
    return diagnoser.finish()


LOGGED_BELOW_ERROR_PENALTY = 20


def _rank(finding: Finding) -> int:
    """A finding's priority as a root cause: one the program logged only as a warning ranks below
    the errors of its run, but above wrappers and systemd's generic lines."""
    return finding.priority - (LOGGED_BELOW_ERROR_PENALTY if finding.event.logged_below_error else 0)


# Identifiers that say nothing about which service runs them.
_GENERIC = {"python", "python3", "java", "node", "bash", "sh", "env", "uv", "conda", "docker", "sudo", "server",
            "service", "launcher", "main", "app", "worker"}


_SEPARATORS = re.compile(r"[-_.@\d]+")  # between the words of unit names and identifiers


def _discard(index: dict[Any, Any], key: Any, unit: str | None) -> None:
    """Take `unit` out of one entry of an index (a dict of units per key), and the entry once empty."""
    units = index.get(key)
    if units is not None and unit is not None:
        units.pop(unit, None)
        if not units:
            del index[key]


def _words(identifier: str) -> set[str]:
    """The words of an identifier that can name a unit: `ollama` ~ ollama.service,
    `text-generation-launcher` ~ text-generation-inference.service."""
    return {word for word in _SEPARATORS.split(identifier.lower()) if len(word) > 2}
