"""Real parts for the follow-mode tests, all on loopback, each stopped by what started it.

- `JournalWriter`: systemd-journal-remote writing a real .journal file from a pipe, entry by entry,
  while the test runs (`../shared/COMPONENTS.md`: followers see each entry at once).
- `Receiver`: a webhook receiver (http.server on a thread) that records every POST, and can be
  told to fail (503) for a while, like a sink that is down.
- `Daemon`: Debian's prometheus-alertmanager or prometheus, started on a free port with a
  config written by the test and stopped by the PID it was started with.
- `WatchProcess`: `logsift watch` as a child process (so that it can be killed with SIGKILL).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable

from tests.journal_tools import JOURNAL_REMOTE, export_entry

ROOT = Path(__file__).resolve().parent.parent
LOGSIFT = [sys.executable, "-m", "logsift"]
ALERTMANAGER = "prometheus-alertmanager"
PROMETHEUS = "prometheus"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(test: Callable[[], Any], timeout: float = 20.0, every: float = 0.05, what: str = "condition") -> Any:
    """Poll `test` until it returns something true; that value, or AssertionError on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = test()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


def get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - loopback
        return json.loads(response.read())


class JournalWriter:
    """systemd-journal-remote appending export entries to a real journal file as they are given."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.process = subprocess.Popen([str(JOURNAL_REMOTE), f"--output={path}", "-"], stdin=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)

    def write(self, entries: Iterable[Iterable[tuple[str, str | bytes]]]) -> None:
        assert self.process.stdin is not None
        for entry in entries:
            self.process.stdin.write(export_entry(entry))
        self.process.stdin.flush()

    def close(self) -> None:
        """Close the pipe: journal-remote ignores SIGTERM while blocked on it, and a SIGKILL
        leaves a file that fails --verify."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Receiver:
    """A loopback webhook receiver: every POST is recorded (path, headers, JSON body)."""

    def __init__(self, port: int | None = None) -> None:
        self.received: list[dict[str, Any]] = []
        self.failing_until = 0.0  # answer `failing_status` until this monotonic time
        self.failing_status = 503
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if time.monotonic() < receiver.failing_until:
                    self.send_response(receiver.failing_status)
                    self.end_headers()
                    return
                with receiver.lock:
                    receiver.received.append({"path": self.path, "key": self.headers.get("Idempotency-Key"),
                                              "authorization": self.headers.get("Authorization"),
                                              "body": json.loads(body)})
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", port or 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [item["body"] for item in self.received]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def have(program: str) -> bool:
    return shutil.which(program) is not None


class Daemon:
    """A Debian daemon on loopback, stopped by the PID it was started with."""

    def __init__(self, argv: list[str], ready_url: str, directory: Path) -> None:
        self.log = open(directory / f"{Path(argv[0]).name}.log", "wb")  # noqa: SIM115 - closed in stop
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=directory)
        self.ready_url = ready_url

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"{argv[0]} exited: {(directory / f'{Path(argv[0]).name}.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(ready_url, timeout=1) as response:  # noqa: S310 - loopback
                    return bool(response.status == 200)
            except OSError:
                return False

        wait_for(ready, timeout=30, what=f"{argv[0]} to be ready")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


def start_alertmanager(directory: Path, receiver_url: str | None = None) -> tuple[Daemon, str]:
    port = free_port()
    config = directory / "alertmanager.yml"
    hook = f"\n    webhook_configs:\n      - url: {receiver_url}\n        send_resolved: true" if receiver_url else ""
    config.write_text(f"""route:
  receiver: logsift
  group_by: [class]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: logsift{hook}
""")
    daemon = Daemon([ALERTMANAGER, f"--config.file={config}", f"--storage.path={directory / 'am-data'}",
                     f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="],
                    f"http://127.0.0.1:{port}/-/ready", directory)
    return daemon, f"http://127.0.0.1:{port}"


def start_prometheus(directory: Path, target: str) -> tuple[Daemon, str]:
    port = free_port()
    config = directory / "prometheus.yml"
    config.write_text(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: logsift
    static_configs:
      - targets: ['{target}']
""")
    daemon = Daemon([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={directory / 'prom-data'}",
                     f"--web.listen-address=127.0.0.1:{port}"], f"http://127.0.0.1:{port}/-/ready", directory)
    return daemon, f"http://127.0.0.1:{port}"


class WatchProcess:
    """`logsift watch ARGS` as a child process; stderr kept in a file for failure messages."""

    started: list[WatchProcess] | None = None  # a test's fixture kills what is left in it

    def __init__(self, args: list[str], directory: Path, stdin: int | None = None) -> None:
        self.errors = open(directory / f"watch-{time.monotonic_ns()}.err", "w+b")  # noqa: SIM115
        self.process = subprocess.Popen([*LOGSIFT, "watch", *args], stdout=subprocess.PIPE, stderr=self.errors,
                                        stdin=stdin if stdin is not None else subprocess.DEVNULL, cwd=ROOT,
                                        env={**os.environ, "TZ": "UTC"})
        if WatchProcess.started is not None:
            WatchProcess.started.append(self)

    def running(self, timeout: float = 30) -> None:
        """Wait until it is past start-up (SIGTERM before that ends it the default way)."""
        wait_for(lambda: "note: watching" in self.stderr() or self.process.poll() is not None, timeout=timeout,
                 what="the watch to start")
        if self.process.poll() is not None:
            raise AssertionError(f"the watch exited: {self.stderr()}")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._close()

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM, as systemd stops it; its exit status."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self._close()
        return code

    def stderr(self) -> str:
        self.errors.seek(0)
        return self.errors.read().decode("utf-8", "replace")

    def _close(self) -> None:
        if self.process.stdout is not None:
            self.process.stdout.close()
