"""`-o json`: the version 1 contract of DESIGN.md (more keys are allowed, none removed)."""

from __future__ import annotations

import json
from typing import TextIO

from logsift.report.common import RenderOptions
from logsift.report.document import Report


def render(report: Report, out: TextIO, options: RenderOptions) -> None:
    json.dump(report.to_dict(), out, indent=2, ensure_ascii=False)
    out.write("\n")
