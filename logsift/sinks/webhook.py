"""`--sink webhook=URL`: each state change POSTed as JSON, with an `Idempotency-Key` header (the
change's `key`) that stays the same when the change is delivered again after a crash or a retry,
so that the receiver can drop duplicates."""

from __future__ import annotations

from typing import Sequence

from logsift.sinks import Change, SinkOptions, http_url
from logsift.sinks.http import post_json


class WebhookSink:
    name = "webhook"

    def __init__(self, target: str | None, options: SinkOptions) -> None:
        self.url = http_url("webhook", target)
        self.timeout = options.timeout

    def send(self, change: Change) -> None:
        post_json(self.url, change, self.timeout, {"Idempotency-Key": str(change["key"])})

    def refresh(self, firing: Sequence[Change]) -> None:
        return None
