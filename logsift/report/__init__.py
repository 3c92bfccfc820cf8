"""Reporters turn an Analysis into text for people or programs. One module each; `REGISTRY`
maps the `--format` name to the function. Adding a format is one module plus one line here.
"""

from __future__ import annotations

from typing import Callable, TextIO

from logsift.pipeline import Analysis
from logsift.report import json, table, terminal

Reporter = Callable[[Analysis, TextIO, bool], None]

REGISTRY: dict[str, Reporter] = {
    "terminal": terminal.render,
    "json": json.render,
    "table": table.render,
}
