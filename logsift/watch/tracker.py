"""Incidents as alerts: from the runs of each unit as they stand to state changes.

The Diagnoser tells each unit's runs as they are now (`Diagnoser.progress`); the Tracker keeps,
per unit, the open incident (its identity, how many runs failed, the labels last sent) and which
runs it has counted, and turns what is new into changes (logsift/watch/changes.py):

- a failed run with no open incident on its unit opens one (`opened`, firing);
- a further failed run updates it (`failed-again`), a counted run whose cause changed too
  (`cause-changed`: lines that came late);
- a run that comes up healthy resolves it (`resolved`).

A run counts as failed once systemd said so (an exit status, "Failed with result") or ended it;
on input without systemd's lines, once a fatal finding has stood for `settle` seconds.
Observing the same runs again changes nothing, which is what makes a restart that replays part
of the journal safe: only what is new makes a change, with the next sequence number of its
incident. The Tracker's state is plain JSON, saved with the journal cursor.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterable

from logsift.diagnosis.runs import Progress, UnitKey
from logsift.records import Run
from logsift.report.common import timestamp
from logsift.rules import RuleSet
from logsift.watch.changes import (
    RUNS_LISTED,
    alert_id,
    failure_change,
    resolved_change,
    run_entry,
    run_identity,
    wall_clock,
)

SEEN_CAP = 4096  # runs remembered after their incident ended (a replay may show them again)
SETTLE = 10.0


class Tracker:
    def __init__(self, rules: RuleSet, runbook: str | None = None, settle: float = SETTLE,
                 wall: Callable[[], str] = wall_clock) -> None:
        self.rules = rules
        self.runbook = runbook
        self.settle = settle
        self.wall = wall
        self.open: dict[UnitKey, dict[str, Any]] = {}  # the open incident of each unit
        self.seen: OrderedDict[str, dict[str, Any]] = OrderedDict()  # run -> what was counted of it
        self.systemd: set[UnitKey] = set()  # units systemd speaks about: wait for its word
        self.waiting: dict[str, tuple[UnitKey, float]] = {}  # failed by a finding only, since when

    # -- observing ---------------------------------------------------------------------------

    def observe(self, key: UnitKey, progress: Iterable[Progress], now: float, final: bool = False) -> list[dict[str, Any]]:
        """The changes that the runs of one unit, as they stand, make; `now` is a monotonic
        time (for `settle`); `final`: the input ended, every failed run counts."""
        runs = list(progress)
        if any(item.run.observed_start or item.explicit or item.closed for item in runs):
            self.systemd.add(key)
        changes: list[dict[str, Any]] = []
        for item in runs:
            run = item.run
            run_id = alert_id(key[0], key[1], run_identity(run))
            if run.outcome == "failed":
                if not self._settled(key, run_id, item, now, final):
                    continue
                change = self._failed(key, run, run_id, item)
            elif run.outcome == "healthy":
                self.waiting.pop(run_id, None)
                change = self._healthy(key, run, run_id)
            else:
                self.waiting.pop(run_id, None)
                change = None
            if change is not None:
                changes.append(change)
        while len(self.seen) > SEEN_CAP:
            self.seen.popitem(last=False)
        return changes

    def forget(self, key: UnitKey) -> None:
        """The unit's runs have all ended and are forgotten: keep only its open incident."""
        if key not in self.open:
            self.systemd.discard(key)

    def waiting_keys(self) -> set[UnitKey]:
        """Units with a run that failed by a finding only, whose `settle` time may be up."""
        return {key for key, _ in self.waiting.values()}

    def _settled(self, key: UnitKey, run_id: str, item: Progress, now: float, final: bool) -> bool:
        if item.explicit or item.closed or final:
            self.waiting.pop(run_id, None)
            return True
        if key in self.systemd:
            return False  # systemd will say how this run ends
        _, since = self.waiting.setdefault(run_id, (key, now))
        if now - since < self.settle:
            return False
        del self.waiting[run_id]
        return True

    def _failed(self, key: UnitKey, run: Run, run_id: str, item: Progress) -> dict[str, Any] | None:
        cause = run.root_cause.rule_id if run.root_cause else None
        seen = self.seen.get(run_id)
        incident = self.open.get(key)
        if seen is not None and seen["outcome"] == "failed":
            self.seen.move_to_end(run_id)
            if seen["class"] == cause:
                seen["final"] = seen["final"] or item.closed
                return None
            if seen["final"] and not run.observed_start:
                return None  # the last words of a run counted whole before a restart
            seen["class"], seen["final"] = cause, item.closed
            if incident is None or incident["id"] != seen["alert"]:
                return None  # its incident is over
            self._count(incident, run, new=False)
            return self._emit(incident, failure_change(incident, run, "cause-changed", self.rules, self.runbook,
                                                       self.wall()))
        kind = "failed-again"
        if incident is None:
            kind = "opened"
            incident = self.open[key] = {
                "id": run_id, "host": key[0], "unit": key[1], "sequence": 0, "failed_runs": 0,
                "class": None, "severity": None, "first_seen": timestamp(run.started) or timestamp(run.ended),
                "last_seen": None, "opened_at": None, "runs": [], "last": None,
            }
        self.seen[run_id] = {"alert": incident["id"], "outcome": "failed", "class": cause, "final": item.closed}
        self.seen.move_to_end(run_id)
        self._count(incident, run, new=True)
        change = failure_change(incident, run, kind, self.rules, self.runbook, self.wall())
        if incident["opened_at"] is None:
            incident["opened_at"] = change["observed_at"]
        return self._emit(incident, change)

    def _healthy(self, key: UnitKey, run: Run, run_id: str) -> dict[str, Any] | None:
        seen = self.seen.get(run_id)
        if seen is not None and seen["outcome"] == "healthy":
            return None
        self.seen[run_id] = {"alert": None, "outcome": "healthy", "class": None, "final": False}
        incident = self.open.pop(key, None)
        if incident is None:
            return None
        incident["runs"] = (incident["runs"] + [run_entry(run)])[-RUNS_LISTED:]
        return resolved_change(incident, run, self.wall())

    @staticmethod
    def _count(incident: dict[str, Any], run: Run, new: bool) -> None:
        entry = run_entry(run)
        runs: list[dict[str, Any]] = incident["runs"]
        if new:
            incident["failed_runs"] += 1
            runs.append(entry)
            del runs[:-RUNS_LISTED]
        else:
            for index, known in enumerate(runs):
                if known["run"] == entry["run"]:
                    runs[index] = entry
        incident["last_seen"] = timestamp(run.ended) or incident["last_seen"]

    @staticmethod
    def _emit(incident: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
        incident["last"] = change
        return change

    # -- what is firing, and saving it --------------------------------------------------------

    def firing(self) -> list[dict[str, Any]]:
        """The latest change of each open incident (what Alertmanager is re-sent)."""
        return [incident["last"] for incident in self.open.values() if incident.get("last")]

    def open_counts(self) -> dict[tuple[str, str, str], int]:
        """Open incidents by (class, unit, host), for the metrics."""
        counts: dict[tuple[str, str, str], int] = {}
        for incident in self.open.values():
            labels = (incident.get("class") or "unknown", incident.get("unit") or "", incident.get("host") or "")
            counts[labels] = counts.get(labels, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "open": [incident for incident in self.open.values()],
            "seen": [[run_id, entry] for run_id, entry in self.seen.items()],
            "systemd": [list(key) for key in sorted(self.systemd, key=lambda key: (key[0] or "", key[1] or ""))],
        }

    def load(self, data: dict[str, Any]) -> None:
        self.open = {(incident["host"], incident["unit"]): incident for incident in data.get("open", [])}
        self.seen = OrderedDict((run_id, entry) for run_id, entry in data.get("seen", []))
        self.systemd = {(host, unit) for host, unit in data.get("systemd", [])}
        self.waiting = {}
