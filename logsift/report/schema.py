"""The JSON Schema of the JSON contract (`logsift schema`), kept beside the code that writes it.

The schema is data (`schema.json`); tests validate every fixture's `-o json` output against it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def _text() -> str:
    return resources.files("logsift.report").joinpath("schema.json").read_text(encoding="utf-8")


def schema() -> dict[str, Any]:
    """The schema, a fresh copy each call."""
    loaded: dict[str, Any] = json.loads(_text())
    return loaded
