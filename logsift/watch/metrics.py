"""Prometheus metrics of `logsift watch` (`--metrics-listen HOST:PORT`), with prometheus-client
(the `watch` extra), imported only here and only when metrics are asked for.

    logsift_lines_read_total                       journal entries (or lines) read
    logsift_read_lag_seconds                       how far behind the journal the reader is
    logsift_incidents_total{class,unit,host}       incidents opened
    logsift_incidents_open{class,unit,host}        incidents firing now
    logsift_runs_failed_total{class,unit,host}     failed runs counted
    logsift_state_changes_total{change}            opened, failed-again, cause-changed, resolved
    logsift_outbox_depth{sink}                     changes a sink has not taken yet
    logsift_sink_deliveries_total{sink}            changes a sink took
    logsift_sink_errors_total{sink}                failed attempts to deliver
    logsift_outbox_dropped_total                   changes dropped because the outbox was full
    logsift_checkpoint_timestamp_seconds           when the state was last saved

`Metrics` itself records nothing: it is what runs without `--metrics-listen`.
"""

from __future__ import annotations

import threading
from typing import Any

from logsift import __version__
from logsift.exceptions import UsageError


class Metrics:
    def lines(self, count: int) -> None: ...

    def lag(self, seconds: float) -> None: ...

    def change(self, change: dict[str, Any]) -> None: ...

    def open(self, counts: dict[tuple[str, str, str], int]) -> None: ...

    def outbox_depth(self, sink: str, depth: int) -> None: ...

    def delivered(self, sink: str) -> None: ...

    def sink_error(self, sink: str) -> None: ...

    def dropped(self, count: int) -> None: ...

    def checkpoint(self, when: float) -> None: ...

    def close(self) -> None: ...


def parse_listen(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--metrics-listen {text!r}: give HOST:PORT, e.g. 127.0.0.1:9464 (or :9464 for every address)")
    return host.strip("[]") or "0.0.0.0", int(port)


class PrometheusMetrics(Metrics):
    """The metrics on an HTTP endpoint of their own (`/metrics`)."""

    def __init__(self, listen: str) -> None:
        try:
            import prometheus_client as client
        except ImportError:
            raise UsageError("--metrics-listen needs prometheus-client: pip install 'logsift[watch]'") from None
        host, port = parse_listen(listen)
        self.registry = client.CollectorRegistry()
        labels = ("class", "unit", "host")
        make: dict[str, Any] = {"registry": self.registry}
        self._lines = client.Counter("logsift_lines_read", "Journal entries (or lines) read.", **make)
        self._lag = client.Gauge("logsift_read_lag_seconds", "Journal time of the newest entry read, behind the "
                                 "wall clock, while the reader has more to read (0 when it is caught up).", **make)
        self._incidents = client.Counter("logsift_incidents", "Incidents opened.", labels, **make)
        self._open = client.Gauge("logsift_incidents_open", "Incidents firing now.", labels, **make)
        self._failed = client.Counter("logsift_runs_failed", "Failed runs counted in incidents.", labels, **make)
        self._changes = client.Counter("logsift_state_changes", "Alert state changes made.", ("change",), **make)
        self._depth = client.Gauge("logsift_outbox_depth", "State changes a sink has not taken yet.", ("sink",), **make)
        self._delivered = client.Counter("logsift_sink_deliveries", "State changes a sink took.", ("sink",), **make)
        self._errors = client.Counter("logsift_sink_errors", "Failed attempts to deliver to a sink.", ("sink",), **make)
        self._dropped = client.Counter("logsift_outbox_dropped", "State changes dropped: the outbox was full.", **make)
        self._checkpoint = client.Gauge("logsift_checkpoint_timestamp_seconds", "When the state was last saved.", **make)
        info = client.Info("logsift", "The logsift that runs.", **make)
        info.info({"version": __version__})
        self._known_open: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()
        try:
            self.server, self.thread = client.start_http_server(port, addr=host, registry=self.registry)
        except OSError as error:
            raise UsageError(f"--metrics-listen {listen}: cannot listen there: {error.strerror or error}") from None

    def lines(self, count: int) -> None:
        self._lines.inc(count)

    def lag(self, seconds: float) -> None:
        self._lag.set(max(0.0, seconds))

    def change(self, change: dict[str, Any]) -> None:
        labels = (str(change.get("class") or "unknown"), str(change.get("unit") or ""), str(change.get("host") or ""))
        kind = str(change.get("change"))
        self._changes.labels(kind).inc()
        if kind == "opened":
            self._incidents.labels(*labels).inc()
        if kind in ("opened", "failed-again"):
            self._failed.labels(*labels).inc()

    def open(self, counts: dict[tuple[str, str, str], int]) -> None:
        with self._lock:
            for gone in self._known_open - set(counts):
                self._open.remove(*gone)
            for labels, count in counts.items():
                self._open.labels(*labels).set(count)
            self._known_open = set(counts)

    def outbox_depth(self, sink: str, depth: int) -> None:
        self._depth.labels(sink).set(depth)

    def delivered(self, sink: str) -> None:
        self._delivered.labels(sink).inc()

    def sink_error(self, sink: str) -> None:
        self._errors.labels(sink).inc()

    def dropped(self, count: int) -> None:
        self._dropped.inc(count)

    def checkpoint(self, when: float) -> None:
        self._checkpoint.set(when)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
