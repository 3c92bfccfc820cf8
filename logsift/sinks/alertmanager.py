"""`--sink alertmanager=URL`: Prometheus Alertmanager's v2 API (`POST /api/v2/alerts`).

Each incident is one alert, labelled `alertname`, `unit`, `host`, `class` and `severity`, so that
an Alertmanager route can group by `class` across hosts (one notification for the same cause on
40 nodes); the annotations carry the summary, the description (what it means, the evidence), the
remediation steps, what to avoid and a runbook link. Alertmanager forgets an alert whose `endsAt`
has passed, so a firing alert is posted with `endsAt` a few re-post intervals ahead and re-posted
every interval while it fires (`refresh`); a resolved one is posted with `endsAt` set to when it
resolved. When a later run names another cause, the alert's labels change: the alert under the old
labels is resolved in the same POST, so that Alertmanager shows one alert per incident.
Times sent are wall-clock times (when logsift saw the change), not the journal's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Sequence

from logsift.sinks import Change, SinkOptions, http_url
from logsift.sinks.http import post_json

ALERTNAME = "LogsiftIncident"
MIN_TTL = 60.0  # seconds: a firing alert outlives a few missed re-posts, never less than this
PATH = "/api/v2/alerts"


class AlertmanagerSink:
    name = "alertmanager"

    def __init__(self, target: str | None, options: SinkOptions) -> None:
        base = http_url("alertmanager", target).rstrip("/")
        self.url = base if base.endswith(PATH) else base + PATH
        self.timeout = options.timeout
        self.ttl = max(4 * options.repost, MIN_TTL)

    def send(self, change: Change) -> None:
        post_json(self.url, self.alerts(change), self.timeout)

    def refresh(self, firing: Sequence[Change]) -> None:
        alerts = [alert for change in firing for alert in self.alerts(change, resend=True)]
        if alerts:
            post_json(self.url, alerts, self.timeout)

    def alerts(self, change: Change, resend: bool = False, now: datetime | None = None) -> list[dict[str, Any]]:
        """The Alertmanager alerts for one change: the incident's, and on a change of labels the
        resolution of the alert under the old ones (not on a re-post: that was sent already)."""
        now = now or datetime.now(UTC)
        observed = _parse(change.get("observed_at")) or now
        started = _parse(change.get("opened_at")) or observed
        resolved = change.get("state") == "resolved"
        labels = self.labels(change)
        current: dict[str, Any] = {
            "labels": labels,
            "annotations": describe_alert(change),
            "startsAt": _format(started),
            "endsAt": _format(min(observed, now) if resolved else now + timedelta(seconds=self.ttl)),
        }
        alerts = [current]
        previous = change.get("previous")
        if previous and not resend:
            old = {**labels, "class": str(previous.get("class") or "unknown"),
                   "severity": str(previous.get("severity") or "error")}
            if old != labels:
                alerts.insert(0, {"labels": old, "annotations": current["annotations"],
                                  "startsAt": _format(started), "endsAt": _format(min(observed, now))})
        return alerts

    @staticmethod
    def labels(change: Change) -> dict[str, str]:
        return {
            "alertname": ALERTNAME,
            "unit": str(change.get("unit") or "unknown"),
            "host": str(change.get("host") or "unknown"),
            "class": str(change.get("class") or "unknown"),
            "severity": str(change.get("severity") or "error"),
        }


def describe_alert(change: Change) -> dict[str, str]:
    """The annotations: what a notification shows."""
    steps = change.get("remediation") or []
    avoid = change.get("avoid") or []
    values = {
        "summary": str(change.get("summary") or ""),
        "description": str(change.get("description") or ""),
        "remediation": "\n".join(f"{number}. {step}" for number, step in enumerate(steps, 1)),
        "avoid": "\n".join(f"- {item}" for item in avoid),
        "runbook": str(change.get("runbook") or ""),
        "incident": str(change.get("alert") or ""),
        "failed_runs": str(change.get("failed_runs") or 0),
    }
    return {name: value for name, value in values.items() if value}


def _parse(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _format(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
