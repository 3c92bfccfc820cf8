"""Sinks: where `logsift watch` sends each alert state change (firing, updated, resolved).

A state change is a JSON object (the watch's change contract, version 1: see
logsift/watch/changes.py). A sink takes one with `send` and raises `SinkError` when it could not;
the outbox (logsift/watch/outbox.py) retries with backoff, in order, for as long as the error says
a retry may work. Sinks that need alerts re-posted while they fire (Alertmanager) do it in
`refresh`. Adding a sink is one module here plus one line in `REGISTRY`.

    --sink stdout                           JSON lines on stdout, one per state change
    --sink webhook=https://hooks.example/x  JSON POST, Idempotency-Key header, retried
    --sink alertmanager=http://am:9093      Alertmanager's v2 API, re-posted while firing
    --sink terminal                         what `logsift -f` prints for a person
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence

from logsift.exceptions import SinkError, UsageError

Change = Mapping[str, Any]


@dataclass(frozen=True)
class SinkOptions:
    """Settings every sink is built with (from the command line)."""

    timeout: float = 5.0  # seconds for one HTTP request
    repost: float = 60.0  # seconds between re-posts of firing alerts (Alertmanager)
    color: bool = False  # terminal
    width: int = 100  # terminal
    utc: bool = False  # terminal


class Sink(Protocol):
    name: str  # how it is named in metrics, logs and the state directory

    def send(self, change: Change) -> None:
        """Deliver one state change; raise SinkError when it was not taken."""

    def refresh(self, firing: Sequence[Change]) -> None:
        """Re-post what is still firing (the latest change of each firing alert); a no-op for
        sinks that are told each change once."""


# name -> "module:factory"; a factory takes (target after "=", or None; SinkOptions).
REGISTRY: dict[str, str] = {
    "stdout": "logsift.sinks.stdout:StdoutSink",
    "terminal": "logsift.sinks.terminal:TerminalSink",
    "webhook": "logsift.sinks.webhook:WebhookSink",
    "alertmanager": "logsift.sinks.alertmanager:AlertmanagerSink",
}


def build_sink(spec: str, options: SinkOptions) -> Sink:
    """A sink from its command-line spelling: `stdout`, `webhook=URL`, `alertmanager=URL`."""
    name, equals, target = spec.partition("=")
    name = name.strip().lower()
    path = REGISTRY.get(name)
    if path is None:
        raise UsageError(f"--sink {spec!r}: unknown sink; known: {', '.join(sorted(REGISTRY))} "
                         "(webhook and alertmanager take =URL)")
    module, attribute = path.split(":")
    factory: Any = getattr(importlib.import_module(module), attribute)
    sink: Sink = factory(target.strip() if equals else None, options)
    return sink


def http_url(spec: str, target: str | None) -> str:
    """The URL a sink was given, checked: http or https, with a host."""
    from urllib.parse import urlsplit

    if not target:
        raise UsageError(f"--sink {spec}: give a URL: --sink {spec}=http://HOST:PORT/...")
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--sink {spec}={target}: not an http(s) URL")
    return target


def stdout_gone() -> SinkError:
    """What the stdout sinks raise when the reader went away (`| head`): stdout is pointed at
    /dev/null, so that nothing fails again on the way out, and the watch stops."""
    import os
    import sys

    from logsift.exceptions import SinkClosed

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return SinkClosed("the reader of stdout went away")
