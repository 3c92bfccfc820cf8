"""`logsift report [FILE...]`: the post-mortem of the incidents in a log, as Markdown or one HTML page.

Takes triage's sources and filters (files, stdin, `--file`, `-D`, `-u`, `-S/-U`, `-b`, ...), calls
`logsift.diagnose` like triage, and renders the story of each incident: summary, timeline, each
attempt with its evidence, what changed between attempts, the fix, the symptoms that were not
causes. To stdout, or with `--write FILE` to a file that appears whole or not at all.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from io import StringIO
from pathlib import Path
from typing import Any

import click

from logsift.api import diagnose
from logsift.cli.options import patterns_option
from logsift.cli.triage import FAIL_ON, TriageCommand, journal_options, tell_what_was_read
from logsift.cli.triage import _journal_wanted as journal_wanted
from logsift.cli.triage import _notify as notify
from logsift.cli.triage import _source as source_of
from logsift.cli.triage import _tzset as tzset
from logsift.exceptions import UsageError
from logsift.records import Severity
from logsift.report import REGISTRY as REPORTERS
from logsift.report.common import RenderOptions

FORMATS = ("markdown", "html")


@click.command(cls=TriageCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("-o", "--output", "--format", "output", type=click.Choice(FORMATS), default="markdown",
              show_default=True, help="Markdown (for a ticket or a wiki), or one self-contained HTML page.")
@click.option("-w", "--write", "target", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the report to FILE (replaced whole, never half-written) instead of stdout.")
@click.option("-i", "--input-format", default="auto", show_default=True, metavar="NAME",
              help="Input format (journalctl -o name: short, short-iso, cat, json, export, ...); auto-detected.")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="error", show_default=True,
              help="Exit 1 only for incidents at or above this severity (the report is written either way).")
@click.option("--model/--no-model", "use_model", default=None,
              help="Ask the learned fallback about failures that no rule names (default: when available).")
@journal_options
@patterns_option
@click.option("--strict-patterns", is_flag=True, help="A broken rule file in a --patterns directory is an error.")
@click.option("--utc", is_flag=True, help="Show and read times in UTC (default: local time; TZ applies).")
@click.option("-q", "--quiet", is_flag=True, help="No notes on stderr (warnings and errors still show).")
def report(files: tuple[str, ...], output: str, target: Path | None, input_format: str, fail_on: str,
           use_model: bool | None, pattern_dirs: tuple[Path, ...], strict_patterns: bool, utc: bool, quiet: bool,
           journal_reader: str, **journal: Any) -> int:
    """Write the post-mortem of the incidents in FILEs, stdin or the journal: when it started,
    each attempt with its cause and how long it lived, what changed between attempts, what fixed
    it, and what to do so it does not recur.

    \b
      logsift report journal.txt > postmortem.md
      logsift report -o html -u sglang-k26 --since yesterday --write postmortem.html
      journalctl -u sglang-k26 -o export | logsift report -o html > postmortem.html

    Exit status: 0 no incident, 1 incidents found (the report is written either way), 2 usage or
    input error.
    """
    if utc:
        os.environ["TZ"] = "UTC"
        tzset()
    journal_files = journal.pop("journal_files")
    directory = journal.pop("directory")
    source = source_of(files, journal_files, directory)
    if source is None and not journal_wanted(journal):
        source = "-"
    if source == "-" and sys.stdin.isatty():
        raise UsageError("no input: pipe a log in (journalctl -u UNIT | logsift report), name files, or use -u UNIT")
    if target is not None and not target.parent.is_dir():
        raise UsageError(f"--write {target}: no such directory {target.parent}")
    found = diagnose(
        source, unit=journal["units"], since=journal["since"], until=journal["until"], patterns=pattern_dirs,
        model={None: "auto", True: "on", False: "off"}[use_model], input_format=input_format,
        boot=journal["boot"], after_cursor=journal["after_cursor"], identifier=journal["identifiers"],
        priority=journal["priority"], lines=journal["last"], journal_reader=journal_reader,
        strict_patterns=strict_patterns, notify=notify if not quiet else None,
    )
    options = RenderOptions(utc=utc)
    if target is None:
        REPORTERS[output](found, sys.stdout, options)
        sys.stdout.flush()
    else:
        text = StringIO()
        REPORTERS[output](found, text, options)
        _write(target, text.getvalue())
    from logsift.sanitize import one_line

    tell_what_was_read(found, options, quiet, after=f"; wrote {one_line(str(target))}" if target else "")
    threshold = Severity.parse(fail_on)
    return 1 if any(incident.severity >= threshold for incident in found.incidents) else 0


def _write(target: Path, text: str) -> None:
    """Replace `target` whole: a reader never sees half a report, a failure leaves the old one."""
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644 & ~_umask())
        os.replace(temporary, target)
    except OSError as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise UsageError(f"--write {target}: {error.strerror or error}") from None


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
