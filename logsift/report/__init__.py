"""Reporters turn a Report into text for people or programs. One module each; `REGISTRY` maps
the `-o/--output` name to the function. Adding a format is one module plus one line here.
"""

from __future__ import annotations

from typing import Callable, TextIO

from logsift.report import html, json, markdown, table, terminal
from logsift.report.common import RenderOptions
from logsift.report.document import Report

Reporter = Callable[[Report, TextIO, RenderOptions], None]

REGISTRY: dict[str, Reporter] = {
    "terminal": terminal.render,
    "json": json.render,
    "table": table.render,
    "markdown": markdown.render,
    "html": html.render,
}
