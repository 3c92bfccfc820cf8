"""The examples of docs/api.md run, and print what the page says they print."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT

PAGE = ROOT / "docs" / "api.md"
_EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```\s*\n(?:prints\s*\n\s*```text\n(?P<output>.*?)```)?", re.S)


def _examples() -> list[tuple[str, str | None]]:
    return [(match.group("code"), match.group("output")) for match in _EXAMPLE.finditer(PAGE.read_text())]


def test_the_page_has_examples() -> None:
    assert len(_examples()) >= 5


@pytest.mark.parametrize("number", range(len(_examples())))
def test_example_runs_and_prints_what_the_page_says(number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    code, expected = _examples()[number]
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(os.environ, "TZ", "UTC")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{PAGE.name} example {number + 1}", "exec"), {"__name__": "__docs__"})  # noqa: S102
    if expected is not None:
        assert out.getvalue() == expected


def test_page_names_every_public_name() -> None:
    import logsift

    text = PAGE.read_text()
    for name in ("diagnose", "Report", "Incident", "Run", "Finding", "Record", "schema", "InputError", "UsageError",
                 "RuleError", "LogsiftError"):
        assert name in text, name
        assert getattr(logsift, name) is not None
    assert Path(logsift.__file__).parent == ROOT / "logsift"
