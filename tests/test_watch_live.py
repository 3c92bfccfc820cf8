"""`logsift watch` and `logsift -f` against real parts: journals that systemd-journal-remote keeps
writing during the test, Debian's prometheus-alertmanager and prometheus on loopback, a loopback
webhook receiver, `journalctl -f` piped in, systemd-analyze on the unit file, and a kill -9 loop.
Everything is polled for, never slept on; daemons are stopped by the PID they were started with.
"""

from __future__ import annotations

import json
import random
import select
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.journal_tools import SEED, build_journal, entries_export, have_journal_remote, short_to_entries
from tests.watch_parts import (
    ALERTMANAGER,
    LOGSIFT,
    PROMETHEUS,
    ROOT,
    JournalWriter,
    Receiver,
    WatchProcess,
    free_port,
    get_json,
    have,
    start_alertmanager,
    start_prometheus,
    wait_for,
)

pytestmark = pytest.mark.skipif(not have_journal_remote(), reason="needs systemd-journal-remote and journalctl: "
                                "apt-get install systemd-journal-remote (make test installs it)")
needs_alertmanager = pytest.mark.skipif(not have(ALERTMANAGER), reason="needs prometheus-alertmanager: "
                                        "apt-get install prometheus-alertmanager (make test installs it)")
needs_prometheus = pytest.mark.skipif(not have(PROMETHEUS), reason="needs prometheus: apt-get install prometheus "
                                      "(make test installs it)")
SEED_UNIT = "sglang-k26.service"
LOOP_UNIT = "vllm-qwen.service"
FAST = ["--no-model", "--checkpoint-interval", "0.05", "--retry-max", "0.2", "--idle", "0.3"]


def seed_entries() -> list[list[tuple[str, str]]]:
    return short_to_entries((SEED / "journal.txt").read_text())


def _index(entries: list[list[tuple[str, str]]], text: str, after: int = 0) -> int:
    for index in range(after, len(entries)):
        if text in dict(entries[index])["MESSAGE"]:
            return index
    raise AssertionError(f"no entry with {text!r} after {after}")


def seed_milestones(entries: list[list[tuple[str, str]]]) -> list[int]:
    """The entries that end runs 1, 2 and 3 ("Failed with result") and make run 4 healthy."""
    found, after = [], 0
    for _ in range(3):
        after = _index(entries, ": Failed with result", after) + 1
        found.append(after - 1)
    found.append(_index(entries, "ready to roll", after))
    return found


# A vLLM unit crash-looping on CUDA out of memory while the seed incident runs (both on
# dflash-train), then coming up once its memory setting is fixed. The OOM lines are torch's wording.
_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.17 GiB. GPU 0 has a total capacity of "
        "79.19 GiB of which 312.44 MiB is free. Including non-PyTorch memory, this process has 78.87 GiB memory in "
        "use. Of the allocated memory 74.02 GiB is allocated by PyTorch, and 1.90 GiB is reserved by PyTorch but "
        "unallocated.")


def crash_loop_entries(failed_runs: int = 8) -> list[list[tuple[str, str]]]:
    lines: list[str] = []
    minute = 12
    for run in range(failed_runs + 1):
        pid = 81000 + run * 10
        stamp = f"May 25 20:{minute:02d}"
        lines.append(f"{stamp}:00 dflash-train systemd[1]: Started {LOOP_UNIT} - vLLM Qwen3-32B (TP1).")
        lines.append(f"{stamp}:09 dflash-train python3[{pid}]: INFO 05-25 20:{minute:02d}:09 [gpu_model_runner.py:1595] "
                     "Loading model weights took 61.03 GiB")
        if run == failed_runs:
            lines.append(f"{stamp}:20 dflash-train python3[{pid}]: INFO:     Application startup complete.")
            break
        lines += [
            f"{stamp}:14 dflash-train python3[{pid}]: Traceback (most recent call last):",
            f'{stamp}:14 dflash-train python3[{pid}]:   File "/opt/vllm/lib/python3.12/site-packages/vllm/v1/worker/'
            'gpu_worker.py", line 226, in determine_available_memory',
            f"{stamp}:14 dflash-train python3[{pid}]:     self.model_runner.profile_run()",
            f"{stamp}:14 dflash-train python3[{pid}]: {_OOM}",
            f"{stamp}:15 dflash-train systemd[1]: {LOOP_UNIT}: Main process exited, code=exited, status=1/FAILURE",
            f"{stamp}:15 dflash-train systemd[1]: {LOOP_UNIT}: Failed with result 'exit-code'.",
            f"{stamp}:25 dflash-train systemd[1]: {LOOP_UNIT}: Scheduled restart job, restart counter is at {run + 1}.",
        ]
        minute += 5
    return short_to_entries("\n".join(lines), unit=LOOP_UNIT)


def merged(*lists: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    every = [entry for entries in lists for entry in entries]
    return sorted(every, key=lambda entry: int(dict(entry)["__REALTIME_TIMESTAMP"]))


def am_alerts(url: str, unit: str) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"filter": f'unit="{unit}"', "active": "true"})
    alerts: list[dict[str, Any]] = get_json(f"{url}/api/v2/alerts?{query}")
    return alerts


def metric(port: int, name: str, **labels: str) -> float | None:
    """A value from the watch's /metrics (None while it is not there, or not up yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:  # noqa: S310
            text = response.read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if head.split("{")[0] == name and all(f'{key}="{wanted}"' in head for key, wanted in labels.items()):
            return float(value)
    return None


def essence(change: dict[str, Any]) -> tuple[Any, ...]:
    """What a state change says, without what depends on the journal file or the wall clock."""
    root = change.get("root_cause") or {}
    evidence = [(item["line"], item["text"]) for item in root.get("evidence", [])]
    runs = [(run["run"], run["started"], run["ended"], run["outcome"], run["class"]) for run in change["runs"]]
    return (change["key"], change["state"], change["change"], change["class"], change["severity"],
            change["failed_runs"], json.dumps(change["previous"]), change["title"], change["summary"], evidence, runs)


@pytest.fixture()
def receiver() -> Any:
    hook = Receiver()
    yield hook
    hook.close()


@pytest.fixture(autouse=True)
def no_leftovers() -> Any:
    """Every watch a test started is gone when it ends, whatever failed."""
    started: list[WatchProcess] = []
    WatchProcess.started = started
    yield
    WatchProcess.started = None
    for watch in started:
        if watch.process.poll() is None:
            watch.kill()


# -- the bar: the seed incident, entry by entry, in Alertmanager ----------------------------------


@needs_alertmanager
@pytest.mark.parametrize("reader", ["python", "journalctl"])
def test_seed_incident_written_live_is_one_alert_in_alertmanager(tmp_path: Path, receiver: Receiver,
                                                                 reader: str) -> None:
    if reader == "python":
        pytest.importorskip("systemd.journal", reason="needs systemd-python (the journal extra)")
    alertmanager, url = start_alertmanager(tmp_path)
    entries = seed_entries()
    milestones = seed_milestones(entries)
    journal = tmp_path / "seed.journal"
    writer = JournalWriter(journal)
    port = free_port()
    try:
        writer.write(entries[:1])
        wait_for(journal.exists, what="journal-remote to create the file")
        watch = WatchProcess([*FAST, "--journal-reader", reader, "--file", str(journal), "--state",
                              str(tmp_path / "state"), "--sink", f"alertmanager={url}", "--sink",
                              f"webhook={receiver.url}", "--repost", "1", "--metrics-listen", f"127.0.0.1:{port}"],
                             tmp_path)
        position = 1
        expected = [("opened", "cuda.toolkit-too-old-for-arch"), ("failed-again", "cuda.nvcc-not-found"),
                    ("failed-again", "cuda.header-missing"), ("resolved", "cuda.header-missing")]
        for step, milestone in enumerate(milestones):
            for entry in entries[position:milestone + 1]:
                writer.write([entry])  # entry by entry, as journald would store them
            position = milestone + 1
            got = wait_for(lambda step=step: len(receiver.bodies()) >= step + 1 and receiver.bodies(),
                           what=f"change {step + 1}: {watch.stderr()}")
            assert [(body["change"], body["class"]) for body in got] == expected[:step + 1]
            if step < 3:
                alerts = wait_for(lambda step=step: [a for a in am_alerts(url, SEED_UNIT)
                                                     if a["labels"]["class"] == expected[step][1]] and
                                  am_alerts(url, SEED_UNIT), what="the alert in Alertmanager")
                assert len(alerts) == 1, alerts  # one alert per incident: the old cause's labels resolved
                assert alerts[0]["labels"]["class"] == expected[step][1]
                assert alerts[0]["labels"]["host"] == "dflash-train"
                assert alerts[0]["labels"]["severity"] == "critical"
                assert alerts[0]["annotations"]["remediation"].startswith("1. ")
            if step == 0:  # re-posted while firing (--repost 1): Alertmanager is told it still fires
                ends = alerts[0]["endsAt"]
                wait_for(lambda ends=ends: am_alerts(url, SEED_UNIT)[0]["endsAt"] > ends, timeout=15,
                         what="a re-post to move endsAt on")
        wait_for(lambda: am_alerts(url, SEED_UNIT) == [], what="the alert to be resolved in Alertmanager")
        assert len({body["alert"] for body in receiver.bodies()}) == 1
        assert [item["key"] for item in receiver.received] == [body["key"] for body in receiver.bodies()]
        assert metric(port, "logsift_incidents_total", **{"class": "cuda.toolkit-too-old-for-arch"}) == 1
        assert metric(port, "logsift_runs_failed_total", **{"class": "cuda.header-missing"}) == 1
        assert (metric(port, "logsift_lines_read_total") or 0) >= milestones[-1] + 1
        assert metric(port, "logsift_outbox_depth", sink="alertmanager") == 0
        assert watch.stop() == 0, watch.stderr()
    finally:
        writer.close()
        alertmanager.stop()


# -- kill -9 at random points -------------------------------------------------------------------------


def test_kill_9_loop_ends_with_the_alerts_of_an_uninterrupted_run(tmp_path: Path) -> None:
    entries = merged(seed_entries(), crash_loop_entries())
    # The uninterrupted run, on the same entries in a journal written at once.
    reference = build_journal(entries_export(entries), tmp_path / "reference.journal")
    expected_hook = Receiver()
    watch = WatchProcess([*FAST, "--file", str(reference), "--state", str(tmp_path / "reference-state"),
                          "--sink", f"webhook={expected_hook.url}"], tmp_path)
    wait_for(lambda: sum(body["change"] == "resolved" for body in expected_hook.bodies()) == 2, timeout=60,
             what=f"the uninterrupted run: {watch.stderr()}")
    watch.stop()
    expected = {body["key"]: body for body in expected_hook.bodies()}
    expected_hook.close()
    by_unit = {unit: [body["change"] for body in expected.values() if body["unit"] == unit]
               for unit in (SEED_UNIT, LOOP_UNIT)}
    assert by_unit[SEED_UNIT] == ["opened", "failed-again", "failed-again", "resolved"]
    assert by_unit[LOOP_UNIT] == ["opened"] + ["failed-again"] * 7 + ["resolved"]

    # The same entries written live, the watch killed with SIGKILL at random points meanwhile.
    hook = Receiver()
    journal = tmp_path / "live.journal"
    writer = JournalWriter(journal)
    writer.write(entries[:5])
    wait_for(journal.exists, what="journal-remote to create the file")
    done = threading.Event()
    # Paced so that the writing lasts about 25 s: twenty kills and more land while it goes on.
    chunks = range(5, len(entries), 6)
    pause = 25.0 / len(chunks)

    def feed() -> None:
        for start in chunks:
            writer.write(entries[start:start + 6])
            time.sleep(pause)
        done.set()

    feeder = threading.Thread(target=feed)
    feeder.start()
    args = [*FAST, "--file", str(journal), "--state", str(tmp_path / "state"), "--sink", f"webhook={hook.url}"]
    rng = random.Random(11)
    kills = while_writing = 0
    try:
        while kills < 20 or not done.is_set():
            watch = WatchProcess(args, tmp_path)
            time.sleep(rng.uniform(0.3, 1.5))  # start-up takes about 0.5 s
            if watch.process.poll() is not None:
                raise AssertionError(f"the watch exited by itself: {watch.stderr()}")
            watch.kill()
            kills += 1
            while_writing += not done.is_set()
        final = WatchProcess(args, tmp_path)
        final.running()
        wait_for(lambda: set(expected) <= {item["key"] for item in hook.received}, timeout=60,
                 what=f"every change after {kills} kills: {final.stderr()}")
        assert final.stop() == 0
    finally:
        feeder.join()
        writer.close()
        hook.close()
    delivered = hook.bodies()
    assert kills >= 20 and while_writing >= 20, (kills, while_writing)
    assert {body["key"] for body in delivered} == set(expected), "a change missing, or one the reference never made"
    for body in delivered:  # a change delivered again carries the same key and says the same
        assert essence(body) == essence(expected[body["key"]])
    for alert in {body["alert"] for body in expected.values()}:
        first_seen: list[str] = []
        for body in delivered:
            if body["alert"] == alert and body["key"] not in first_seen:
                first_seen.append(body["key"])
        assert first_seen == [key for key, body in expected.items() if body["alert"] == alert]


# -- a sink that is down ----------------------------------------------------------------------------------


def test_a_sink_that_was_down_gets_every_change_in_order(tmp_path: Path, seed_journal: Path,
                                                         receiver: Receiver) -> None:
    receiver.failing_until = float("inf")  # down (503) until told otherwise
    port = free_port()
    args = [*FAST, "--file", str(seed_journal), "--state", str(tmp_path / "state"), "--sink",
            f"webhook={receiver.url}", "--metrics-listen", f"127.0.0.1:{port}"]
    watch = WatchProcess(args, tmp_path)
    wait_for(lambda: metric(port, "logsift_outbox_depth", sink="webhook") == 4, what=f"the outbox: {watch.stderr()}")
    watch.kill()  # the sidecar dies during the outage too; the outbox is on disk
    watch = WatchProcess(args, tmp_path)
    watch.running()
    wait_for(lambda: (metric(port, "logsift_sink_errors_total", sink="webhook") or 0) >= 2, what="retries")
    assert receiver.received == []
    receiver.failing_until = 0.0  # back
    wait_for(lambda: len(receiver.received) >= 4, what="the changes after the outage")
    wait_for(lambda: metric(port, "logsift_outbox_depth", sink="webhook") == 0, what="an empty outbox")
    keys = [item["key"] for item in receiver.received]
    assert len(keys) == 4 and len(set(keys)) == 4
    assert [key.rsplit("-", 1)[1] for key in keys] == ["1", "2", "3", "4"]
    assert [item["body"]["change"] for item in receiver.received] == ["opened", "failed-again", "failed-again",
                                                                      "resolved"]
    assert all(item["key"] == item["body"]["key"] for item in receiver.received)
    assert watch.stop() == 0


# -- Prometheus scrapes the metrics ---------------------------------------------------------------------


@needs_prometheus
def test_prometheus_scrapes_the_metrics(tmp_path: Path, seed_journal: Path, receiver: Receiver) -> None:
    port = free_port()
    watch = WatchProcess([*FAST, "--file", str(seed_journal), "--sink", f"webhook={receiver.url}",
                          "--metrics-listen", f"127.0.0.1:{port}"], tmp_path)
    prometheus, url = start_prometheus(tmp_path, f"127.0.0.1:{port}")
    try:
        def query(expression: str) -> list[dict[str, Any]]:
            answer = get_json(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": expression}))
            result: list[dict[str, Any]] = answer["data"]["result"]
            return result

        failed = wait_for(lambda: len(query("logsift_runs_failed_total")) == 3 and query("logsift_runs_failed_total"),
                          timeout=60, what="Prometheus to scrape the runs")
        assert sorted(item["metric"]["class"] for item in failed) == [
            "cuda.header-missing", "cuda.nvcc-not-found", "cuda.toolkit-too-old-for-arch"]
        assert {item["metric"]["unit"] for item in failed} == {SEED_UNIT}
        (opened,) = query("logsift_incidents_total")
        assert opened["metric"]["host"] == "dflash-train" and opened["value"][1] == "1"
        wait_for(lambda: query("logsift_lines_read_total") and query("logsift_lines_read_total")[0]["value"][1] == "448",
                 what="all lines read")
        assert query("logsift_incidents_open") == []  # it resolved
        assert query('logsift_outbox_depth{sink="webhook"}')[0]["value"][1] == "0"
    finally:
        prometheus.stop()
        watch.stop()


# -- rotation and vacuuming while following --------------------------------------------------------------


@pytest.mark.parametrize("reader", ["python", "journalctl"])
@pytest.mark.parametrize("how", ["--file", "--directory"])
def test_rotation_and_vacuuming_are_followed(tmp_path: Path, receiver: Receiver, how: str, reader: str) -> None:
    if reader == "python":
        pytest.importorskip("systemd.journal", reason="needs systemd-python (the journal extra)")
    entries = seed_entries()
    milestones = seed_milestones(entries)
    directory = tmp_path / "journals"
    directory.mkdir()
    live = directory / "system.journal"
    writer = JournalWriter(live)
    writer.write(entries[:milestones[0] + 1])
    writer.close()
    where = str(live) if how == "--file" else str(directory)
    watch = WatchProcess([*FAST, "--journal-reader", reader, how, where, "--state", str(tmp_path / "state"),
                          "--sink", f"webhook={receiver.url}"], tmp_path)
    try:
        wait_for(lambda: len(receiver.bodies()) == 1, what=f"run 1: {watch.stderr()}")
        # Rotated as journald does: the file renamed to an archive, a new one under the old name.
        archive = directory / "system@5101c42cbf2049d99d9c3bdb255fce6b-0000000000000001-00062a3b1c000000.journal"
        live.rename(archive)
        writer = JournalWriter(live)
        writer.write(entries[milestones[0] + 1:milestones[1] + 1])
        wait_for(lambda: len(receiver.bodies()) == 2, what=f"run 2 after the rotation: {watch.stderr()}")
        archive.unlink()  # vacuumed
        writer.write(entries[milestones[1] + 1:])
        wait_for(lambda: len(receiver.bodies()) == 4, what=f"runs 3 and 4 after vacuuming: {watch.stderr()}")
        writer.close()
        assert [body["change"] for body in receiver.bodies()] == ["opened", "failed-again", "failed-again", "resolved"]
        watch.running()
        assert watch.stop() == 0
    finally:
        writer.close()
        if watch.process.poll() is None:
            watch.kill()


# -- journalctl -f -o json | logsift -f ------------------------------------------------------------------


def _read_line(stream: Any, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"nothing printed within {timeout}s (so far: {line!r})")
        chunk = stream.read1(1) if hasattr(stream, "read1") else stream.read(1)
        if not chunk:
            raise AssertionError(f"the output ended (so far: {line!r})")
        line += chunk
    return line.decode()


@pytest.mark.parametrize("output", ["json", "terminal"])
def test_journalctl_follow_piped_into_logsift_follow_prints_while_open(tmp_path: Path, output: str) -> None:
    entries = seed_entries()
    milestones = seed_milestones(entries)
    journal = tmp_path / "seed.journal"
    writer = JournalWriter(journal)
    writer.write(entries[:10])
    wait_for(journal.exists, what="journal-remote to create the file")
    journalctl = subprocess.Popen(["journalctl", f"--file={journal}", "-f", "-o", "json", "--all", "--lines=all"],
                                  stdout=subprocess.PIPE)
    follower = subprocess.Popen([*LOGSIFT, "-f", "-o", output, "--no-model", "--color", "never"],
                                stdin=journalctl.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                                env={"PATH": "/usr/bin:/bin", "TZ": "UTC"})
    assert journalctl.stdout is not None and follower.stdout is not None
    journalctl.stdout.close()
    try:
        writer.write(entries[10:milestones[0] + 1])
        first = _read_line(follower.stdout, timeout=30)
        if output == "json":
            change = json.loads(first)
            assert (change["change"], change["class"], change["unit"]) == (
                "opened", "cuda.toolkit-too-old-for-arch", SEED_UNIT)
        else:
            assert "FIRING" in first and SEED_UNIT in first and "cuda.toolkit-too-old-for-arch" in first
        assert journalctl.poll() is None and follower.poll() is None  # the stream is still open
    finally:
        writer.close()
        journalctl.terminate()
        journalctl.wait(timeout=10)
        code = follower.wait(timeout=30)
        follower.stdout.close()
        if follower.stderr is not None:
            follower.stderr.close()
    assert code == 1  # the end of the input: incidents were found


# -- the systemd unit and the example configs ---------------------------------------------------------


def test_the_unit_file_verifies_and_is_hardened(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("needs systemd-analyze: apt-get install systemd (make test installs it)")
    text = (ROOT / "packaging" / "logsift-watch.service").read_text()
    for directive in ("DynamicUser=yes", "SupplementaryGroups=systemd-journal", "StateDirectory=logsift-watch",
                      "ProtectSystem=strict", "NoNewPrivileges=yes", "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
                      "MemoryMax="):
        assert directive in text, directive
    # systemd-analyze checks that ExecStart's program exists: point it at this checkout's logsift.
    program = Path(sys.executable).with_name("logsift")
    unit = tmp_path / "logsift-watch.service"
    unit.write_text(text.replace("/opt/logsift/bin/logsift", str(program)))
    verify = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True,
                            timeout=60)
    assert verify.returncode == 0 and verify.stdout + verify.stderr == "", verify.stdout + verify.stderr
    security = subprocess.run(["systemd-analyze", "security", "--offline=true", "--threshold=20", str(unit)],
                              capture_output=True, text=True, timeout=60)
    assert security.returncode == 0, security.stdout[-2000:]  # exposure 2.0 or less: "OK"
    assert "OK" in security.stdout.splitlines()[-1]
    # The options ExecStart passes are ones `logsift watch` takes.
    from logsift.cli.watch import watch

    exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    words = exec_start.split()[2:]
    words = [{"${STATE_DIRECTORY}": str(tmp_path / "state"), "${LOGSIFT_SINK}": "stdout"}.get(word, word)
             for word in words]
    with watch.make_context("watch", words) as context:
        assert context.params["state_dir"] == tmp_path / "state"


@needs_alertmanager
def test_example_alertmanager_route_groups_one_cause_across_hosts(tmp_path: Path) -> None:
    check = subprocess.run(["amtool", "check-config", str(ROOT / "examples" / "alertmanager.yml")],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    config = (ROOT / "examples" / "alertmanager.yml").read_text()
    (tmp_path / "alertmanager.yml").write_text(config)
    port = free_port()
    from tests.watch_parts import Daemon

    daemon = Daemon([ALERTMANAGER, f"--config.file={tmp_path / 'alertmanager.yml'}",
                     f"--storage.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                     "--cluster.listen-address="], f"http://127.0.0.1:{port}/-/ready", tmp_path)
    try:
        alerts = [{"labels": {"alertname": "LogsiftIncident", "unit": SEED_UNIT, "host": f"gpu-node-{n:02d}",
                              "class": "cuda.header-missing", "severity": "critical"}} for n in range(1, 41)]
        alerts.append({"labels": {"alertname": "LogsiftIncident", "unit": SEED_UNIT, "host": "gpu-node-41",
                                  "class": "cuda.nvcc-not-found", "severity": "critical"}})
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v2/alerts", data=json.dumps(alerts).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(request, timeout=5).close()  # noqa: S310 - loopback
        groups = wait_for(lambda: len(get_json(f"http://127.0.0.1:{port}/api/v2/alerts/groups")) == 2 and
                          get_json(f"http://127.0.0.1:{port}/api/v2/alerts/groups"), what="two groups")
        sizes = sorted((group["labels"]["class"], len(group["alerts"])) for group in groups)
        assert sizes == [("cuda.header-missing", 40), ("cuda.nvcc-not-found", 1)]
    finally:
        daemon.stop()


@needs_prometheus
def test_example_prometheus_rules_load() -> None:
    check = subprocess.run(["promtool", "check", "rules", str(ROOT / "examples" / "prometheus-rules.yml")],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
