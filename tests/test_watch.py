"""Follow mode in-process: the stages fed entry by entry, the alert lifecycle of the seed incident,
restarts at every kind of point giving the changes an uninterrupted run gives, the state
directory, the outbox's order and retries, the sinks' payloads, redaction, and the CLI's errors.
The real daemons, journals being written and kill -9 are in test_watch_live.py."""

from __future__ import annotations

import io
import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Iterable, Sequence

import pytest

from logsift.exceptions import SinkError, UsageError
from logsift.read.export import read_export
from logsift.read.text import TextReader
from logsift.records import Record
from logsift.rules import RuleSet, load_rules
from logsift.sinks import SinkOptions, build_sink
from logsift.sinks.alertmanager import AlertmanagerSink
from logsift.sinks.terminal import TerminalSink
from logsift.watch.follower import Follower
from logsift.watch.loop import LoopOptions, Watch
from logsift.watch.outbox import Outbox
from logsift.watch.sources import Source, Start, cursor_order
from logsift.watch.state import StateDir
from logsift.watch.tracker import Tracker
from tests.helpers import FIXTURES, invoke

SEED_EXPORT = FIXTURES / "seed-incident" / "journal.export"


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_rules()


@pytest.fixture(scope="module")
def seed() -> list[Record]:
    with open(SEED_EXPORT, "rb") as stream:
        return list(read_export(stream, str(SEED_EXPORT)))


def follow(rules: RuleSet, records: Sequence[Record], **options: Any) -> list[tuple[int, dict[str, Any]]]:
    """Feed records one by one, a tick after each; (index of the record, change) for each change."""
    follower = Follower(rules, Tracker(rules, settle=options.pop("settle", 10.0)), **options)
    changes: list[tuple[int, dict[str, Any]]] = []
    now = 0.0
    for index, record in enumerate(records):
        now += 0.001
        changes += [(index, change) for change in follower.feed([record], now)]
        changes += [(index, change) for change in follower.tick(now)]
    changes += [(len(records), change) for change in follower.finish(now + 1)]
    return changes


# -- the seed incident, entry by entry --------------------------------------------------------


def test_seed_fed_entry_by_entry_is_one_alert_through_its_life(rules: RuleSet, seed: list[Record]) -> None:
    changes = follow(rules, seed)
    assert [change["change"] for _, change in changes] == ["opened", "failed-again", "failed-again", "resolved"]
    assert len({change["alert"] for _, change in changes}) == 1
    assert [change["key"] for _, change in changes] == [f"{changes[0][1]['alert']}-{n}" for n in (1, 2, 3, 4)]
    assert [change["class"] for _, change in changes] == [
        "cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found", "cuda.header-missing", "cuda.header-missing"]
    assert [change["failed_runs"] for _, change in changes] == [1, 2, 3, 3]
    assert [change["state"] for _, change in changes] == ["firing"] * 3 + ["resolved"]
    # Each change comes with the line that makes it: systemd's "Main process exited" of runs 1-3
    # (the traceback before it is closed at once: the process is gone), then run 4's ready line.
    messages = [seed[index].message for index, _ in changes]
    assert all(": Main process exited" in message for message in messages[:3]), messages
    assert "ready to roll" in messages[3] or "Application startup complete" in messages[3], messages[3]
    second = changes[1][1]
    assert second["previous"] == {"class": "cuda.toolkit-too-old-for-arch", "severity": "critical"}
    assert "The cause changed" in second["description"]
    assert second["root_cause"]["evidence"][0]["text"].endswith("/dev/null/bin/nvcc: not found")
    assert second["remediation"] and second["avoid"]
    assert [run["class"] for run in changes[3][1]["runs"]] == [
        "cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found", "cuda.header-missing", None]


def test_the_same_changes_whatever_the_batches(rules: RuleSet, seed: list[Record]) -> None:
    follower = Follower(rules, Tracker(rules))
    whole = follower.feed(seed, 0.0) + follower.finish(1.0)
    one_by_one = [change for _, change in follow(rules, seed)]
    assert [_essence(change) for change in whole] == [_essence(change) for change in one_by_one]


_BATCH_FIXTURES = sorted([*FIXTURES.glob("scenarios/*/journal.txt"), *FIXTURES.glob("reports/*/journal.txt"),
                          FIXTURES / "seed-incident" / "journal.txt", *FIXTURES.glob("captured/*.txt"),
                          *FIXTURES.glob("healthy/*.txt")])


@pytest.mark.parametrize("path", _BATCH_FIXTURES, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_follow_mode_tells_what_batch_mode_tells(rules: RuleSet, path: Path) -> None:
    """Every text fixture, fed a line at a time: the alerts are batch mode's incidents (unit,
    failed runs, the cause of each, resolved or not)."""
    import logsift
    from logsift.watch.changes import RUNS_LISTED

    report = logsift.diagnose(path, model=False, rules=rules)
    batch = sorted((incident.host, incident.unit, len(incident.failed_runs), incident.resolved,
                    [run.root_cause.rule_id if run.root_cause else None for run in incident.failed_runs][-RUNS_LISTED:])
                   for incident in report.incidents)
    latest: dict[str, dict[str, Any]] = {}
    for _, change in follow(rules, _text_records(path.read_text(errors="surrogateescape").splitlines()), settle=1.0):
        latest[change["alert"]] = change
    followed = sorted((change["host"], change["unit"], change["failed_runs"], change["state"] == "resolved",
                       [run["class"] for run in change["runs"] if run["outcome"] == "failed"])
                      for change in latest.values())
    assert followed == batch


def test_memory_stays_with_the_last_runs(rules: RuleSet, seed: list[Record]) -> None:
    follower = Follower(rules, Tracker(rules))
    for record in seed:
        follower.feed([record], 0.0)
    assert all(len(runs) <= 2 for runs in follower.diagnoser.runs.values())


def test_units_that_come_and_go_are_forgotten(rules: RuleSet) -> None:
    from datetime import timedelta

    from logsift.diagnosis.runs import LINGER

    start = datetime(2026, 5, 25, 20, 11, 5, tzinfo=UTC)
    follower = Follower(rules, Tracker(rules))
    for number in range(300):  # one scope per ssh session, a minute apart, for months
        scope = f"session-{number}.scope"
        pid1 = {"host": "h", "identifier": "systemd", "pid": 1, "timestamp": start + timedelta(minutes=number)}
        follower.feed([Record(2 * number + 1, f"Started {scope} - Session {number} of User root.", unit=scope, **pid1),
                       Record(2 * number + 2, f"{scope}: Deactivated successfully.", unit=scope, **pid1)], now=0.0)
    # Those that ended in the last LINGER of journal time are kept (systemd may still speak of them).
    kept = LINGER // timedelta(minutes=1) + 1
    assert len(follower.diagnoser.runs) <= kept and len(follower.diagnoser.descriptions) <= kept
    assert len(follower.tracker.systemd) <= kept and follower.lingering <= set(follower.diagnoser.runs)


def test_services_that_come_and_go_leave_no_trace_in_the_indexes(rules: RuleSet) -> None:
    """A timer's service a minute, each run with a process of its own: the Diagnoser's indexes
    (units by host, by identifier, by word, by start) keep only the units still known."""
    from datetime import timedelta

    from logsift.diagnosis.runs import LINGER

    start = datetime(2026, 5, 25, 20, 11, 5, tzinfo=UTC)
    follower = Follower(rules, Tracker(rules))
    line = 0
    for number in range(300):
        unit = f"backup-{number}.service"
        stamp = start + timedelta(minutes=number)
        pid1 = {"host": "h", "identifier": "systemd", "pid": 1, "timestamp": stamp, "unit": unit}
        app = {"host": "h", "identifier": f"backup-{number}", "pid": 5000 + number, "timestamp": stamp, "unit": unit}
        batch = [Record(line + 1, f"Started {unit} - Backup {number}.", **pid1),
                 Record(line + 2, "Traceback (most recent call last):", **app),
                 Record(line + 3, "ModuleNotFoundError: No module named 'boto3'", **app),
                 Record(line + 4, f"{unit}: Main process exited, code=exited, status=1/FAILURE", **pid1),
                 Record(line + 5, f"{unit}: Failed with result 'exit-code'.", **pid1)]
        line += 5
        follower.feed(batch, now=float(number))
    diagnoser = follower.diagnoser
    kept = LINGER // timedelta(minutes=1) + 1
    assert len(diagnoser.runs) <= kept and len(diagnoser.order) <= kept
    for index in (diagnoser.host_units, diagnoser.open_units, diagnoser.started_units):
        assert sum(len(units) for units in index.values()) <= kept
    assert len(diagnoser.identifier_units) <= kept and len(diagnoser.pid_units) <= kept
    assert sum(len(units) for units in diagnoser.word_units.values()) <= 2 * kept  # "backup" and the number
    assert sum(len(units) for units in diagnoser.unindexed.values()) <= kept


def test_a_run_that_goes_on_for_weeks_keeps_a_bounded_number_of_findings(rules: RuleSet) -> None:
    from logsift.diagnosis.runs import FINDINGS_KEPT

    stamp = datetime(2026, 5, 25, 20, 11, 5, tzinfo=UTC)
    pid1 = {"host": "h", "identifier": "systemd", "pid": 1, "timestamp": stamp, "unit": "api.service"}
    records = [Record(1, "Started api.service - API.", **pid1)]
    records.append(Record(2, "INFO:     Application startup complete.", host="h", identifier="api", pid=7,
                          timestamp=stamp, unit="api.service"))
    for number in range(FINDINGS_KEPT + 200):  # a handled error logged with its traceback, again and again
        app = {"host": "h", "identifier": "api", "pid": 7, "timestamp": stamp, "unit": "api.service"}
        records += [Record(3 + 3 * number, "Traceback (most recent call last):", **app),
                    Record(4 + 3 * number, '  File "/srv/api.py", line 3, in handle', **app),
                    Record(5 + 3 * number, f"ValueError: bad request {number}", **app)]
    follower = Follower(rules, Tracker(rules))
    follower.feed(records, now=0.0)
    follower.tick(10.0)
    (run,) = follower.diagnoser.runs[("h", "api.service")]
    assert len(run.findings) == FINDINGS_KEPT
    assert run.findings[-1].text == f"ValueError: bad request {FINDINGS_KEPT + 199}"  # the latest are kept


# -- closing events without the next line -------------------------------------------------------

_APP = [
    "2026-05-25T20:11:05+0000 gpu-node-07 worker[4242]: Traceback (most recent call last):",
    '2026-05-25T20:11:05+0000 gpu-node-07 worker[4242]:   File "/srv/app/main.py", line 8, in <module>',
    "2026-05-25T20:11:05+0000 gpu-node-07 worker[4242]:     import flash_attn",
    "2026-05-25T20:11:05+0000 gpu-node-07 worker[4242]: ModuleNotFoundError: No module named 'flash_attn'",
]


def _text_records(lines: Iterable[str]) -> list[Record]:
    return list(TextReader("-").read(list(lines)))


def test_a_traceback_is_diagnosed_after_the_idle_time_without_a_next_line(rules: RuleSet) -> None:
    follower = Follower(rules, Tracker(rules, settle=0.0), idle=0.5)
    assert follower.feed(_text_records(_APP), now=100.0) == []
    assert follower.tick(100.2) == []  # still open: a line may continue it
    changes = follower.tick(100.6)
    assert [change["class"] for change in changes] == ["python.module-missing"]


def test_no_systemd_lines_a_fatal_error_counts_after_settle(rules: RuleSet) -> None:
    follower = Follower(rules, Tracker(rules, settle=5.0), idle=0.1)
    follower.feed(_text_records(_APP), now=0.0)
    assert follower.tick(1.0) == []  # the traceback closed: the run failed, as far as we know
    assert follower.tick(5.5) == []
    assert [change["change"] for change in follower.tick(6.5)] == ["opened"]


def test_systemd_saying_the_process_exited_closes_its_events_at_once(rules: RuleSet) -> None:
    # Structured input (json, export, native journals) says which unit each line is from.
    stamp = datetime(2026, 5, 25, 20, 11, 5, tzinfo=UTC)
    pid1 = {"host": "gpu-node-07", "identifier": "systemd", "pid": 1, "timestamp": stamp, "unit": "demo.service"}
    app = {"host": "gpu-node-07", "identifier": "demo", "pid": 4242, "timestamp": stamp, "unit": "demo.service"}
    records = [Record(1, "Started demo.service - Demo.", **pid1)]
    records += [Record(2 + index, line.split(": ", 1)[1], **app) for index, line in enumerate(_APP)]
    records.append(Record(6, "demo.service: Main process exited, code=exited, status=1/FAILURE", **pid1))
    follower = Follower(rules, Tracker(rules), idle=60.0)
    changes = follower.feed(records, now=0.0)
    assert [(change["change"], change["class"], change["unit"]) for change in changes] == [
        ("opened", "python.module-missing", "demo.service")]


def test_a_run_that_says_it_failed_without_why_alerts_with_that_line(rules: RuleSet) -> None:
    # Dynamo's runtime when etcd is unreachable (patterns/serving/failed.log, corpus case 201), in
    # a log without systemd's lines: no rule names a cause, and the alert shows the line where the
    # service said it failed (with systemd's lines, systemd.unit-failed is the cause, as in batch mode).
    said = ('Error: Failed to connect to etcd server with config ClientOptions { etcd_url: ["http://localhost:2379"], '
            "etcd_connect_options: None, attach_lease: true }")
    follower = Follower(rules, Tracker(rules, settle=1.0), idle=0.1)
    follower.feed(_text_records([f"2026-05-25T20:11:05+0000 gpu-node-07 dynamo[4242]: {said}"]), now=0.0)
    assert follower.tick(0.5) == []  # settling: it may still be running
    changes = follower.tick(1.5)
    assert [(change["change"], change["class"]) for change in changes] == [("opened", None)]
    change = changes[0]
    assert change["root_cause"] is None and change["failure"]["line"] == 1
    assert "Failed to connect to etcd server" in change["title"] and "no line names the cause" in change["title"]
    assert "Evidence (line 1" in change["description"]
    printed = "\n".join(TerminalSink(None, SinkOptions()).lines(change))
    assert "  line 1: Error: Failed to connect" in printed


def test_text_input_lets_go_of_the_entry_held_for_continuation_lines() -> None:
    reader = TextReader("-")
    batches: list[list[str]] = [[_APP[0]], [], ["  more"]]
    records = list(reader.read_batches(iter(batches)))
    assert [record.message for record in records] == ["Traceback (most recent call last):", "  more"]


# -- restarts: the changes of an uninterrupted run, whatever the point ------------------------------


class ListSource(Source):
    """Journal records given as a list, read from where a restart asks (by cursor)."""

    resumable = True

    def __init__(self, records: list[Record], until: int) -> None:
        super().__init__("list")
        self.records = records
        self.until = until

    def items(self, start: Start) -> Iterable[Record | None]:
        """The records up to `until`, then nothing more for ever (a journal nobody writes to)."""
        index = 0
        if start.cursor is not None:
            index = next(number for number, record in enumerate(self.records) if record.cursor == start.cursor)
            index += 1 if start.mode == "after" else 0
        for record in self.records[index:self.until]:
            yield record
            yield None
        while not self.stop.is_set():
            time.sleep(0.001)
            yield None


class Collecting:
    name = "collect"

    def __init__(self) -> None:
        self.changes: list[dict[str, Any]] = []

    def send(self, change: dict[str, Any]) -> None:
        self.changes.append(change)

    def refresh(self, firing: Sequence[dict[str, Any]]) -> None:
        return None


def _run(rules: RuleSet, records: list[Record], until: int, state: Path, sink: Collecting) -> None:
    """A watch that reads `records[:until]`, then is stopped (SIGTERM) once it has caught up."""
    tracker = Tracker(rules)
    directory = StateDir(state)
    source = ListSource(records, until)
    stop = threading.Event()

    follower = Follower(rules, tracker)
    outbox = Outbox([sink], directory)
    last = records[until - 1].cursor

    def stop_when_caught_up() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (follower.cursor != last or outbox.pending()):
            time.sleep(0.005)
        stop.set()

    stopper = threading.Thread(target=stop_when_caught_up)
    stopper.start()
    try:
        loop = Watch(source, follower, outbox, directory, options=LoopOptions(checkpoint_every=0.0, drain=5.0,
                                                                              tick=0.001))
        loop.run(stop)
    finally:
        stopper.join()
        directory.close()


@pytest.mark.parametrize("cut", [1, 60, 111, 112, 114, 116, 150, 233, 300, 344, 346, 400, 431, 440])
def test_a_restart_at_any_point_gives_the_changes_of_an_uninterrupted_run(rules: RuleSet, seed: list[Record],
                                                                         tmp_path: Path, cut: int) -> None:
    whole = Collecting()
    _run(rules, seed, len(seed), tmp_path / "whole", whole)
    first, second = Collecting(), Collecting()
    _run(rules, seed, cut, tmp_path / "cut", first)  # the input ends at `cut`: stops, saves, ...
    _run(rules, seed, len(seed), tmp_path / "cut", second)  # ... and a new process goes on from there
    delivered = first.changes + second.changes
    assert [change["key"] for change in delivered] == [change["key"] for change in whole.changes]
    assert [_essence(change) for change in delivered] == [_essence(change) for change in whole.changes]
    assert len(whole.changes) == 4


@pytest.fixture(scope="module")
def start_timeout() -> list[Record]:
    """The start-timeout scenario as journal records, each with a cursor as a journal gives."""
    import dataclasses

    path = FIXTURES / "scenarios" / "start-timeout" / "journal.txt"
    records = _text_records(path.read_text().splitlines())
    return [dataclasses.replace(record, cursor=f"s=5e1f;i={number:x};t={number:x}")
            for number, record in enumerate(records, 1)]


@pytest.mark.parametrize("cut", [6, 8, 9, 10])
def test_a_restart_between_a_failed_run_and_systemds_last_words_about_it(rules: RuleSet, start_timeout: list[Record],
                                                                          tmp_path: Path, cut: int) -> None:
    """"Failed to start X." comes after "Failed with result": a restart in between reads the failed
    run again, so that the line joins it rather than making a second failed run."""
    whole = Collecting()
    _run(rules, start_timeout, len(start_timeout), tmp_path / "whole", whole)
    assert [(change["change"], change["class"], change["failed_runs"]) for change in whole.changes] == [
        ("opened", "systemd.start-timeout", 1)]
    first, second = Collecting(), Collecting()
    _run(rules, start_timeout, cut, tmp_path / "cut", first)
    _run(rules, start_timeout, len(start_timeout), tmp_path / "cut", second)

    def told(change: dict[str, Any]) -> tuple[Any, ...]:
        # Not `at` nor the run's end: systemd says the run failed at "timed out" (line 6), and
        # whether "Main process exited" (line 8) is read in the same batch is up to timing.
        runs = [(run["run"], run["outcome"], run["class"]) for run in change["runs"]]
        return (change["key"], change["change"], change["class"], change["failed_runs"], runs)

    assert [told(change) for change in first.changes + second.changes] == [told(change) for change in whole.changes]


def _essence(change: dict[str, Any]) -> tuple[Any, ...]:
    """A change without its wall-clock times (when logsift saw it)."""
    return tuple(sorted((key, json.dumps(value, sort_keys=True)) for key, value in change.items()
                        if key not in ("observed_at", "opened_at")))


# -- the state directory and the outbox --------------------------------------------------------------


def test_cursor_order() -> None:
    a = "s=aa;i=1a;b=bb;m=1;t=100;x=1"
    b = "s=aa;i=1b;b=bb;m=2;t=100;x=2"
    other_file = "s=cc;i=1;b=bb;m=3;t=101;x=3"
    assert cursor_order(a, b) == -1 and cursor_order(b, a) == 1 and cursor_order(a, a) == 0
    assert cursor_order(b, other_file) == -1  # another file's sequence: by time
    assert cursor_order(None, a) is None and cursor_order(a, "") is None


def test_state_is_written_whole_and_used_by_one_watch(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "s")
    state.save({"cursor": "c1"})
    state.add([(1, {"key": "a-1"}), (2, {"key": "a-2"})])
    assert state.load() == {"version": 1, "cursor": "c1"}
    assert [number for number, _ in state.entries()] == [1, 2]
    assert not list((tmp_path / "s").rglob(".*.tmp"))
    with pytest.raises(UsageError, match="another logsift watch"):
        StateDir(tmp_path / "s")
    state.remove([1])
    assert [number for number, _ in state.entries()] == [2]
    state.close()
    (tmp_path / "s" / "state.json").write_text("{not json")
    again = StateDir(tmp_path / "s")
    with pytest.raises(Exception, match="unreadable state"):
        again.load()
    again.close()


class Flaky:
    """A sink that is down for its first `down` attempts, then takes everything."""

    name = "flaky"

    def __init__(self, down: int, retry: bool = True) -> None:
        self.down = down
        self.retry = retry
        self.attempts = 0
        self.taken: list[str] = []

    def send(self, change: dict[str, Any]) -> None:
        self.attempts += 1
        if self.attempts <= self.down:
            raise SinkError("down", retry=self.retry)
        self.taken.append(change["key"])

    def refresh(self, firing: Sequence[dict[str, Any]]) -> None:
        return None


def test_outbox_retries_in_order_until_the_sink_takes_them(tmp_path: Path) -> None:
    sink = Flaky(down=5)
    state = StateDir(tmp_path / "s")
    outbox = Outbox([sink], state, retry_max=0.02)
    outbox.restore(None, [], [])
    outbox.start()
    outbox.add([{"key": f"k-{n}", "alert": "k", "state": "firing"} for n in range(1, 4)])
    deadline = time.monotonic() + 10
    while len(sink.taken) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    outbox.close(drain=1.0)
    assert sink.taken == ["k-1", "k-2", "k-3"]
    assert sink.attempts == 8
    outbox.prune(outbox.checkpoint()["delivered"])
    assert state.entries() == []
    state.close()


def test_a_change_the_sink_refuses_is_skipped_not_retried_forever() -> None:
    sink = Flaky(down=1, retry=False)
    logged: list[str] = []
    outbox = Outbox([sink], retry_max=0.02, log=logged.append)
    outbox.restore(None, [], [])
    outbox.start()
    outbox.add([{"key": "k-1", "alert": "k", "state": "firing"}, {"key": "k-2", "alert": "k", "state": "firing"}])
    outbox.close(drain=2.0)
    assert sink.taken == ["k-2"]
    assert any("refuses it, skipped" in line for line in logged)


# -- sinks -------------------------------------------------------------------------------------------


def _change(**fields: Any) -> dict[str, Any]:
    base = {"key": "abc-2", "alert": "abc", "sequence": 2, "state": "firing", "change": "failed-again",
            "unit": "sglang-k26.service", "host": "gpu-node-07", "class": "cuda.nvcc-not-found",
            "severity": "critical", "previous": {"class": "cuda.toolkit-too-old-for-arch", "severity": "critical"},
            "observed_at": "2026-05-25T20:37:20+00:00", "opened_at": "2026-05-25T20:16:28+00:00",
            "summary": "s", "description": "d", "remediation": ["one", "two"], "avoid": ["x"], "runbook": "",
            "failed_runs": 2, "at": "2026-05-25T20:37:19+00:00", "title": "t", "root_cause": None}
    return {**base, **fields}


def test_alertmanager_alerts_resolve_the_old_labels_when_the_cause_changes() -> None:
    sink = AlertmanagerSink("http://127.0.0.1:9/", SinkOptions(repost=30))
    now = datetime(2026, 5, 25, 20, 40, tzinfo=UTC)
    old, new = sink.alerts(_change(), now=now)
    assert old["labels"]["class"] == "cuda.toolkit-too-old-for-arch"
    assert old["endsAt"] == "2026-05-25T20:37:20.000Z"
    assert new["labels"] == {"alertname": "LogsiftIncident", "unit": "sglang-k26.service", "host": "gpu-node-07",
                             "class": "cuda.nvcc-not-found", "severity": "critical"}
    assert new["endsAt"] == "2026-05-25T20:42:00.000Z"  # 4 re-post intervals ahead
    assert new["annotations"]["remediation"] == "1. one\n2. two"
    assert sink.url == "http://127.0.0.1:9/api/v2/alerts"
    (resent,) = sink.alerts(_change(), resend=True, now=now)
    assert resent["labels"]["class"] == "cuda.nvcc-not-found"
    (resolved,) = sink.alerts(_change(state="resolved", change="resolved", previous=None), now=now)
    assert resolved["endsAt"] == "2026-05-25T20:37:20.000Z"


def test_terminal_sink_prints_the_block_when_the_cause_changes() -> None:
    out = io.StringIO()
    sink = TerminalSink(None, SinkOptions(), out)
    sink.send(_change(root_cause={"evidence": [{"line": 5, "text": "/bin/sh: 1: /dev/null/bin/nvcc: not found"}],
                                  "explanation": "It means this."}))
    text = out.getvalue()
    assert "FAILED AGAIN" in text and "the cause changed: was cuda.toolkit-too-old-for-arch" in text
    assert "What it means" in text and "What to do" in text and "Avoid" in text


def test_webhook_posts_with_the_key_and_sorts_failures() -> None:
    from logsift.sinks.webhook import WebhookSink
    from tests.watch_parts import Receiver, free_port

    receiver = Receiver()
    try:
        sink = WebhookSink(f"http://bot:s3cret@127.0.0.1:{receiver.port}/hook", SinkOptions(timeout=5))
        sink.send(_change())
        (got,) = receiver.received
        assert got["key"] == "abc-2" and got["body"]["class"] == "cuda.nvcc-not-found"
        assert got["authorization"] == "Basic Ym90OnMzY3JldA=="  # bot:s3cret, not in the URL sent
        receiver.failing_until, receiver.failing_status = float("inf"), 400
        with pytest.raises(SinkError) as refused:
            sink.send(_change())
        assert not refused.value.retry and "HTTP 400" in str(refused.value)
        receiver.failing_status = 503
        with pytest.raises(SinkError) as busy:
            sink.send(_change())
        assert busy.value.retry
    finally:
        receiver.close()
    with pytest.raises(SinkError) as down:
        WebhookSink(f"http://127.0.0.1:{free_port()}/hook", SinkOptions(timeout=2)).send(_change())
    assert down.value.retry and "cannot reach it" in str(down.value)


@pytest.mark.parametrize("spec", ["nowhere", "webhook", "webhook=ftp://x/y", "alertmanager=localhost:9093",
                                  "stdout=/tmp/x"])
def test_bad_sink_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError):
        build_sink(spec, SinkOptions())


# -- what is sent is redacted ---------------------------------------------------------------------------


def test_secrets_never_leave_in_a_change(rules: RuleSet) -> None:
    lines = [
        "2026-05-25T20:11:02+0000 gpu-node-07 systemd[1]: Started demo.service - Demo.",
        "2026-05-25T20:11:05+0000 gpu-node-07 demo[4242]: Traceback (most recent call last):",
        '2026-05-25T20:11:05+0000 gpu-node-07 demo[4242]:   File "/srv/app/main.py", line 8, in <module>',
        "2026-05-25T20:11:05+0000 gpu-node-07 demo[4242]:     fetch()",
        "2026-05-25T20:11:05+0000 gpu-node-07 demo[4242]: RuntimeError: fetch https://bot:s3cretpass@hub.internal/m "
        "failed with token=hf_abcdefghijklmnopqrstuvwxyz0123",
        "2026-05-25T20:11:06+0000 gpu-node-07 systemd[1]: demo.service: Main process exited, code=exited, status=1/FAILURE",
    ]
    changes = [change for _, change in follow(rules, _text_records(lines))]
    assert changes, "no change: the test would prove nothing"
    sent = json.dumps(changes)
    assert "s3cretpass" not in sent and "hf_abcdefghijklmnopqrstuvwxyz0123" not in sent
    assert "[REDACTED]" in sent


# -- the command line -------------------------------------------------------------------------------------


def test_watch_help() -> None:
    code, out, _ = invoke("watch", "--help")
    assert code == 0 and "--sink" in out and "--state" in out and "--metrics-listen" in out


@pytest.mark.parametrize(("args", "message"), [
    (["watch", "--sink", "pager=x", "-"], "unknown sink"),
    (["watch", "--metrics-listen", "nowhere", "-"], "HOST:PORT"),
    (["watch", "--since", "-1h", "-"], "--since selects journal entries"),
    (["watch", "/no/such/file"], "no such file"),
    (["-f", "-o", "table", "-"], "-f prints the terminal report or JSON lines"),
    # -f once meant --format: each way of typing that gets the pointer to -o.
    (["-f", "json"], "for the report format use -o/--output json"),
    (["-fjson"], "for the report format use -o/--output json"),
    (["-f=markdown"], "for the report format use -o/--output markdown"),
    (["--follow=table"], "for the report format use -o/--output table"),
    (["watch", "-f", "-"], "logsift watch always follows"),
    (["watch", "-o", "json", "-"], "--sink stdout"),
    (["watch", "--format=json", "-"], "--sink stdout"),
])
def test_watch_usage_errors_are_one_line(args: list[str], message: str) -> None:
    code, _, err = invoke(*args, input=b"")
    assert code == 2, err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_watch_of_binary_garbage_is_one_line_error() -> None:
    code, _, err = invoke("watch", "--no-model", "-", input=bytes(range(256)) * 64)
    assert code == 2 and "binary data" in err and "Traceback" not in err


def test_follow_on_stdin_prints_changes_as_json_lines() -> None:
    code, out, _ = invoke("-f", "-o", "json", "--no-model", input=SEED_EXPORT.read_bytes())
    changes = [json.loads(line) for line in out.splitlines()]
    assert [change["change"] for change in changes] == ["opened", "failed-again", "failed-again", "resolved"]
    assert code == 1  # incidents were found, as triage says


def test_follow_on_stdin_prints_the_terminal_blocks() -> None:
    code, out, _ = invoke("-f", "--no-model", input=SEED_EXPORT.read_bytes())
    assert out.count("FAILED AGAIN") == 2 and "FIRING" in out and "RESOLVED" in out
    assert "curand.h" in out and "What to do" in out
    assert code == 1


def test_follow_stops_when_the_reader_goes_away() -> None:
    import subprocess
    import sys

    from tests.helpers import ROOT

    command = f"{sys.executable} -m logsift -f -o json --no-model < {SEED_EXPORT} | head -n 1"
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert json.loads(result.stdout)["change"] == "opened"
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr
