"""`logsift [FILE...]`: diagnose failed runs in logs read from files or stdin."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, TypeVar

import click

from logsift import read as readers
from logsift.cli.options import color_option, patterns_option, rules_from, use_color
from logsift.exceptions import UsageError
from logsift.pipeline import analyze
from logsift.read import selection, sources
from logsift.records import ReadProblems, Severity
from logsift.report import REGISTRY as REPORTERS

FAIL_ON = ("warning", "error", "critical")
F = TypeVar("F", bound=Callable[..., Any])
_BOOT_VALUE = re.compile(r"^(?:[0-9a-fA-F]{32})?(?:[+-]?\d+)?$")


def journal_options(function: F) -> F:
    """The journal source options, as journalctl spells them (stackable on any command)."""
    options = [
        click.option("--file", "journal_files", multiple=True, metavar="FILE",
                     help="Read a native .journal file (repeatable; globs allowed)."),
        click.option("-D", "--directory", metavar="DIR", help="Read the journal files in DIR (several hosts are kept apart)."),
        click.option("-u", "--unit", "units", multiple=True, metavar="UNIT",
                     help="Only this unit, with systemd's own lines about it, as journalctl -u (repeatable)."),
        click.option("-S", "--since", metavar="TIME", help="Entries at or after TIME ('2026-05-25 20:00', '-1h', 'today')."),
        click.option("-U", "--until", metavar="TIME", help="Entries at or before TIME."),
        click.option("-b", "--boot", metavar="[ID|OFFSET]", default=None,
                     help="Only one boot: the latest with no value, -1 the one before, or a boot ID."),
        click.option("--after-cursor", metavar="CURSOR", help="Entries after this journal cursor."),
        click.option("--journal-reader", type=click.Choice(sources.BACKENDS), default="auto", show_default=True,
                     help="Read the journal through systemd-python or a journalctl child process."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


class _TriageCommand(click.Command):
    """`-b` takes an optional value as in journalctl: `-b` (the latest boot), `-b -1`, `-b ID`;
    click alone would need a value, or read `-1` as an option."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        fixed: list[str] = []
        index = 0
        while index < len(args):
            arg = args[index]
            if arg == "--":
                fixed.extend(args[index:])
                break
            if arg in ("-b", "--boot"):
                following = args[index + 1] if index + 1 < len(args) else ""
                taken = bool(following) and _BOOT_VALUE.match(following) is not None
                fixed.append(f"--boot={following if taken else '0'}")
                index += 2 if taken else 1
                continue
            fixed.append(arg)
            index += 1
        return super().parse_args(ctx, fixed)


@click.command(cls=_TriageCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("-f", "--format", "output", type=click.Choice(sorted(REPORTERS)), default="terminal",
              show_default=True, help="Report format.")
@click.option("-i", "--input-format", default="auto", show_default=True, metavar="NAME",
              help="Input format (journalctl -o name: short, short-iso, cat, ...); auto-detected by default.")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="error", show_default=True,
              help="Exit 1 only for incidents at or above this severity.")
@click.option("--model/--no-model", "use_model", default=None,
              help="Ask the learned fallback about failures that no rule names. Default: when it is "
              "available (a cached model, or scikit-learn to train one); --model makes that an error.")
@click.option("--model-threshold", type=click.FloatRange(0.0, 1.0), default=None, metavar="P",
              help="Confidence under which the model answers 'unknown' (default: chosen by cross-validation in training).")
@journal_options
@patterns_option
@color_option
def triage(files: tuple[str, ...], output: str, input_format: str, fail_on: str, use_model: bool | None,
           model_threshold: float | None, pattern_dirs: tuple[Path, ...], color: str, journal_reader: str,
           **journal: Any) -> int:
    """Diagnose failed runs in FILEs, stdin or the journal: root cause, meaning, remediation,
    what to avoid.

    \b
      journalctl -u sglang-k26 --no-pager | logsift
      logsift --format json journal.txt
      logsift -u sglang-k26 -b          (the live journal)
      logsift --directory /srv/journals -u sglang-k26 --since -2h
    """
    if input_format != "auto" and input_format not in readers.REGISTRY:
        raise UsageError(f"unknown --input-format {input_format!r}; known: {', '.join(sorted(readers.REGISTRY))}")
    chosen = selection.select(files=journal.pop("journal_files"), **journal)
    if not chosen.wanted and "-" in (files or ("-",)) and sys.stdin.isatty():
        raise UsageError("no input: pipe a log in (journalctl -u UNIT | logsift), name files, or use -u UNIT")
    rules = rules_from(pattern_dirs)
    problems = ReadProblems()
    fallback = None
    if use_model is not False:
        # Cheap to build: the model is loaded (or trained) only when an event needs it.
        from logsift.learn.classifier import ModelFallback

        fallback = ModelFallback(rules, threshold=model_threshold, required=use_model is True, notify=_notify)
    analysis = analyze(sources.records(files, input_format, chosen, problems, journal_reader), rules,
                       fallback=fallback)
    analysis = replace(analysis, warnings=tuple(problems.warnings()))
    REPORTERS[output](analysis, sys.stdout, use_color(color) if output == "terminal" else False)
    for warning in analysis.warnings:
        click.echo(f"logsift: warning: {warning}", err=True)
    if fallback is not None and fallback.unavailable:
        click.echo(f"logsift: note: failures no rule names were not shown to the model: {fallback.unavailable}", err=True)
    threshold = Severity.parse(fail_on)
    return 1 if any(incident.severity >= threshold for incident in analysis.diagnosis.incidents) else 0


def _notify(message: str) -> None:
    if sys.stderr.isatty():
        click.echo(f"logsift: {message}", err=True)
