"""`logsift [FILE...]`: diagnose failed runs in logs read from files or stdin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO, Iterator

import click

from logsift import readers
from logsift.cli.options import color_option, patterns_option, rules_from, use_color
from logsift.exceptions import UsageError
from logsift.pipeline import analyze
from logsift.records import Record, Severity
from logsift.reporters import REGISTRY as REPORTERS

FAIL_ON = ("warning", "error", "critical")


def _records(paths: tuple[str, ...], fmt: str) -> Iterator[Record]:
    for path in paths or ("-",):
        if path == "-" and sys.stdin.isatty():
            raise UsageError("no input: pipe a log in (journalctl -u UNIT | logsift) or name files")
        stream: BinaryIO = readers.open_input(path)
        try:
            yield from readers.read(stream, path, fmt)
        finally:
            if path != "-":
                stream.close()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("-f", "--format", "output", type=click.Choice(sorted(REPORTERS)), default="terminal",
              show_default=True, help="Report format.")
@click.option("-i", "--input-format", default="auto", show_default=True, metavar="NAME",
              help="Input format (journalctl -o name: short, short-iso, cat, ...); auto-detected by default.")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="error", show_default=True,
              help="Exit 1 only for incidents at or above this severity.")
@patterns_option
@color_option
def triage(files: tuple[str, ...], output: str, input_format: str, fail_on: str,
           pattern_dirs: tuple[Path, ...], color: str) -> int:
    """Diagnose failed runs in FILEs (or stdin): root cause, meaning, remediation, what to avoid.

    \b
      journalctl -u sglang-k26 --no-pager | logsift
      logsift --format json journal.txt
    """
    if input_format != "auto" and input_format not in readers.REGISTRY:
        raise UsageError(f"unknown --input-format {input_format!r}; known: {', '.join(sorted(readers.REGISTRY))}")
    rules = rules_from(pattern_dirs)
    analysis = analyze(_records(files, input_format), rules)
    REPORTERS[output](analysis, sys.stdout, use_color(color) if output == "terminal" else False)
    threshold = Severity.parse(fail_on)
    return 1 if any(incident.severity >= threshold for incident in analysis.diagnosis.incidents) else 0

