"""Reporters turn a Report into text for people or programs. One module each; `REGISTRY` maps
the `-o/--output` name to the function. Adding a format is one module plus one line here.
"""

from __future__ import annotations

from importlib import import_module
from typing import Callable, TextIO

from logsift.report.common import RenderOptions
from logsift.report.document import Report

Reporter = Callable[[Report, TextIO, RenderOptions], None]


def _lazy(module: str) -> Reporter:
    """The module's `render`, imported when it is first called (tabulate, Jinja2 only when used)."""

    def render(report: Report, out: TextIO, options: RenderOptions) -> None:
        import_module(f"logsift.report.{module}").render(report, out, options)

    return render


REGISTRY: dict[str, Reporter] = {
    "terminal": _lazy("terminal"),
    "json": _lazy("json"),
    "table": _lazy("table"),
    "markdown": _lazy("markdown"),
    "html": _lazy("html"),
}
