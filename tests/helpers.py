"""Small helpers shared by tests: run the CLI in-process and parse its JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from logsift.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"


def invoke(*args: str, input: bytes | str | None = None) -> tuple[int, str, str]:
    """Run `logsift ARGS` the way the console script does; returns (exit code, stdout, stderr)."""
    from logsift.cli import run

    runner = CliRunner()
    result = runner.invoke(_Entry(run), list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def report(*args: str, input: bytes | str | None = None) -> tuple[int, dict[str, Any]]:
    code, out, err = invoke("--format", "json", *args, input=input)
    assert code in (0, 1), f"exit {code}: {err}"
    return code, json.loads(out)


class _Entry:
    """Adapts logsift.cli.run (which maps errors to exit codes) to CliRunner's command protocol."""

    def __init__(self, run: Any) -> None:
        self._run = run
        self.name = "logsift"

    def main(self, args: list[str], prog_name: str | None = None, **_: Any) -> None:
        raise SystemExit(self._run(args))


__all__ = ["FIXTURES", "ROOT", "SHARED", "invoke", "main", "report"]
