"""`--sink stdout`: one JSON object a line on standard output per state change, flushed at once
(for `logsift watch ... | jq`, or a log shipper reading the sidecar's output)."""

from __future__ import annotations

import json
import sys
from typing import Sequence, TextIO

from logsift.exceptions import UsageError
from logsift.sinks import Change, SinkOptions, stdout_gone


class StdoutSink:
    name = "stdout"

    def __init__(self, target: str | None, options: SinkOptions, out: TextIO | None = None) -> None:
        if target:
            raise UsageError(f"--sink stdout={target}: stdout takes no target")
        self.out = out

    def send(self, change: Change) -> None:
        out = self.out or sys.stdout
        try:
            out.write(json.dumps(change, ensure_ascii=False, sort_keys=True) + "\n")
            out.flush()
        except BrokenPipeError:
            raise stdout_gone() from None

    def refresh(self, firing: Sequence[Change]) -> None:
        return None
