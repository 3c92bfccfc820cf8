"""`logsift [FILE...]`: diagnose failed runs in logs read from files, stdin or the journal.

Options follow journalctl where it has one: `-u`, `-S/--since`, `-U/--until`, `-b`, `-t`, `-p`,
`-n`, `--file`, `-D`, `--after-cursor`, `--utc`, `-o/--output`, `-q`, `--no-pager`. The command
parses them, calls `logsift.diagnose`, renders the Report and says what was read on stderr.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click

from logsift.cli.options import color_option, patterns_option, use_color
from logsift.exceptions import OutputError, UsageError
from logsift.records import Severity

if TYPE_CHECKING:  # the pipeline is imported when a command runs: `logsift --help` stays fast
    from logsift.report.common import RenderOptions
    from logsift.report.document import Report

# As read.sources.BACKENDS and report.REGISTRY name them (tests/test_imports.py checks).
BACKENDS = ("auto", "python", "journalctl")
OUTPUTS = ("html", "json", "markdown", "table", "terminal")

FAIL_ON = ("warning", "error", "critical")
F = TypeVar("F", bound=Callable[..., Any])
_BOOT_VALUE = re.compile(r"^(?:[0-9a-fA-F]{32})?(?:[+-]?\d+)?$")
_GLUED_FORMAT = re.compile(r"^(?:-f=?|--follow=)([a-z]+)$")
PROGRESS_MIN = 32 << 20  # inputs at least this large show a progress bar (on a terminal)
WIDTH = 100  # when stdout is not a terminal and COLUMNS is not set


def journal_options(function: F) -> F:
    """The journal source options, as journalctl spells them (stackable on any command)."""
    options = [
        click.option("--file", "journal_files", multiple=True, metavar="FILE",
                     help="Read a native .journal file (repeatable; globs allowed)."),
        click.option("-D", "--directory", metavar="DIR",
                     help="Read the journal files under DIR, host subfolders included (hosts are kept apart)."),
        click.option("-u", "--unit", "units", multiple=True, metavar="UNIT",
                     help="Only this unit, with systemd's own lines about it, as journalctl -u (repeatable). "
                     "On FILE input: only the incidents of this unit."),
        click.option("-S", "--since", metavar="TIME", help="Entries at or after TIME ('2026-05-25 20:00', '-1h', 'today')."),
        click.option("-U", "--until", metavar="TIME", help="Entries at or before TIME."),
        click.option("-b", "--boot", metavar="[ID|OFFSET]", default=None,
                     help="Only one boot: the latest with no value, -1 the one before, or a boot ID (journals only)."),
        click.option("--after-cursor", metavar="CURSOR", help="Entries after this journal cursor (journals only)."),
        click.option("-t", "--identifier", "identifiers", multiple=True, metavar="ID",
                     help="Only entries with this syslog identifier, as journalctl -t (repeatable)."),
        click.option("-p", "--priority", metavar="LEVEL",
                     help="Only entries of this priority or more important ('err', '3', 'warning..err'); "
                     "needs json, export or native journal input, which carry priorities."),
        click.option("-n", "--lines", "last", type=click.IntRange(min=0), metavar="N",
                     help="Only the last N entries."),
        click.option("--journal-reader", type=click.Choice(BACKENDS), default="auto", show_default=True,
                     help="Read the journal through systemd-python or a journalctl child process."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


class TriageCommand(click.Command):
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
            glued = _GLUED_FORMAT.match(arg)
            if glued is not None and glued.group(1) in OUTPUTS:
                # `-fjson`, `-f=json`, `--follow=json`: -f once meant --format.
                raise UsageError(f"-f is --follow now; for the report format use -o/--output {glued.group(1)}")
            if arg in ("-b", "--boot"):
                following = args[index + 1] if index + 1 < len(args) else ""
                taken = bool(following) and _BOOT_VALUE.match(following) is not None
                fixed.append(f"--boot={following if taken else '0'}")
                index += 2 if taken else 1
                continue
            fixed.append(arg)
            index += 1
        return super().parse_args(ctx, fixed)


def output_option(function: F) -> F:
    return click.option("-o", "--output", "--format", "output", type=click.Choice(OUTPUTS),
                        default="terminal", show_default=True,
                        help="Report format (--format is the same option).")(function)


@click.command(cls=TriageCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("files", nargs=-1, metavar="[FILE]...")
@output_option
@click.option("-f", "--follow", is_flag=True, help="Follow the input as it grows, printing each incident as it "
              "opens, changes and resolves (stdin, one FILE, or the journal; see `logsift watch`).")
@click.option("-i", "--input-format", default="auto", show_default=True, metavar="NAME",
              help="Input format (journalctl -o name: short, short-iso, cat, json, export, ...); auto-detected.")
@click.option("--fail-on", type=click.Choice(FAIL_ON), default="error", show_default=True,
              help="Exit 1 only for incidents at or above this severity.")
@click.option("--model/--no-model", "use_model", default=None,
              help="Ask the learned fallback about failures that no rule names. Default: when it is "
              "cached (`logsift train`); --model makes a missing model an error.")
@click.option("--model-threshold", type=click.FloatRange(0.0, 1.0), default=None, metavar="P",
              help="Confidence under which the model answers 'unknown' (default: chosen in training).")
@journal_options
@patterns_option
@click.option("--strict-patterns", is_flag=True, help="A broken rule file in a --patterns directory is an error, "
              "not a warning.")
@click.option("--utc", is_flag=True, help="Show and read times in UTC (default: local time, as journalctl; TZ applies).")
@color_option
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="A progress bar on stderr for long inputs (default: only when stderr is a terminal).")
@click.option("-q", "--quiet", is_flag=True, help="No notes on stderr (warnings and errors still show).")
@click.option("--no-pager", is_flag=True, hidden=True, help="Accepted for journalctl's habit; logsift never pages.")
def triage(files: tuple[str, ...], output: str, follow: bool, input_format: str, fail_on: str,
           use_model: bool | None, model_threshold: float | None, pattern_dirs: tuple[Path, ...],
           strict_patterns: bool, utc: bool, color: str, show_progress: bool | None, quiet: bool,
           no_pager: bool, journal_reader: str, **journal: Any) -> int:
    """Diagnose failed runs in FILEs, stdin or the journal: root cause, meaning, remediation,
    what to avoid.

    \b
      journalctl -u sglang-k26 --no-pager | logsift
      logsift -o json journal.txt
      logsift -u sglang-k26 -b          (the live journal)
      logsift -D /srv/journals -u sglang-k26 --since -2h
    """
    if utc:
        os.environ["TZ"] = "UTC"  # --since/--until and printed times in UTC, as journalctl --utc
        _tzset()
    if follow:
        from logsift.cli.watch import follow as follow_input

        return follow_input(files, journal, output, input_format, journal_reader, pattern_dirs, use_model, fail_on,
                            use_color(color) if output == "terminal" else False, _width(), utc, quiet)
    journal_files = journal.pop("journal_files")
    directory = journal.pop("directory")
    source = _source(files, journal_files, directory)
    if source is None and not _journal_wanted(journal):
        source = "-"  # no FILE and no journal option: stdin
    if source == "-" and sys.stdin.isatty():
        raise UsageError("no input: pipe a log in (journalctl -u UNIT | logsift), name files, or use -u UNIT")
    from logsift.api import diagnose
    from logsift.report import REGISTRY as REPORTERS
    from logsift.report.common import RenderOptions

    progress = _Bar() if _progress_wanted(show_progress) else None
    report = diagnose(
        source, unit=journal["units"], since=journal["since"], until=journal["until"], patterns=pattern_dirs,
        model={None: "auto", True: "on", False: "off"}[use_model], input_format=input_format,
        boot=journal["boot"], after_cursor=journal["after_cursor"], identifier=journal["identifiers"],
        priority=journal["priority"], lines=journal["last"], journal_reader=journal_reader,
        model_threshold=model_threshold, strict_patterns=strict_patterns, progress=progress,
        notify=_notify if not quiet else None,
    )
    options = RenderOptions(color=use_color(color) if output == "terminal" else False, width=_width(), utc=utc)
    write_report(lambda: REPORTERS[output](report, sys.stdout, options))
    tell_what_was_read(report, options, quiet, read=output != "json")
    threshold = Severity.parse(fail_on)
    return 1 if any(incident.severity >= threshold for incident in report.incidents) else 0


def write_report(write: Callable[[], None]) -> None:
    """Write to stdout; a full disk or an unwritable output is a one-line error (exit 2)."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        from logsift.read import describe_os_error

        # What could not be written must not be retried at exit, where it would fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise OutputError(f"cannot write the report: {describe_os_error(error)}") from None


def tell_what_was_read(report: Report, options: RenderOptions, quiet: bool, read: bool = True, after: str = "") -> None:
    """stderr after a report: skipped site rules and warnings always; notes and the read line
    (with `after` appended) unless quiet. They name files and quote what was read: one line
    each, escaped."""
    from logsift.sanitize import one_line

    for skipped in report.rules.skipped:
        click.echo(f"logsift: warning: skipped a site rule: {one_line(skipped)}", err=True)
    for warning in report.summary.warnings:
        click.echo(f"logsift: warning: {one_line(warning)}", err=True)
    if not quiet:
        for note in report.summary.notes:
            click.echo(f"logsift: note: {one_line(note)}", err=True)
        if read:
            click.echo(f"logsift: {read_line(report, options)}{after}", err=True)


def read_line(report: Report, options: RenderOptions) -> str:
    """One line of what was read: entries, units, hosts, the time window."""
    summary = report.summary
    noun = ("entry" if summary.lines == 1 else "entries") if report.origin.journal else \
        ("line" if summary.lines == 1 else "lines")
    parts = [f"read {summary.lines:,} {noun}"]
    if summary.entries != summary.lines and not report.origin.journal:
        parts[0] += f" ({summary.entries:,} parsed)"
    if summary.units:
        parts.append(f"{len(summary.units)} unit{'s' if len(summary.units) != 1 else ''}")
    if summary.hosts:
        parts.append(f"{len(summary.hosts)} host{'s' if len(summary.hosts) != 1 else ''}")
    if summary.since is not None and summary.until is not None:
        parts.append(f"{options.clock(summary.since)} to {options.clock(summary.until)}")
    parts.append(f"{summary.runs} run{'s' if summary.runs != 1 else ''}, "
                 f"{summary.incidents} incident{'s' if summary.incidents != 1 else ''}")
    return ", ".join(parts)


def _source(files: tuple[str, ...], journal_files: tuple[str, ...], directory: str | None) -> Any:
    if journal_files and directory:
        raise UsageError("give either --file or --directory, not both")
    if (journal_files or directory) and files:
        raise UsageError("FILE arguments cannot be combined with --file or --directory; name them all with --file")
    if directory:
        if not os.path.isdir(directory):
            raise UsageError(f"--directory {directory}: no such directory")
        return directory
    if journal_files:
        paths = _globbed(journal_files)
        return [Path(path) for path in paths]
    if not files:
        return None
    return [Path(path) for path in files] if len(files) > 1 else files[0]


def _globbed(patterns: tuple[str, ...]) -> list[str]:
    import glob

    paths: list[str] = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern)) if any(char in pattern for char in "*?[") else [pattern]
        if not matched or not all(os.path.isfile(path) for path in matched):
            raise UsageError(f"--file {pattern}: no such file")
        paths.extend(matched)
    return paths


def _journal_wanted(journal: dict[str, Any]) -> bool:
    return bool(journal["units"] or journal["since"] or journal["until"] or journal["boot"] is not None
                or journal["after_cursor"])


def _width() -> int:
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        import shutil  # with its archive modules: only for the terminal

        return max(60, shutil.get_terminal_size((WIDTH, 24)).columns)
    return WIDTH


def _progress_wanted(choice: bool | None) -> bool:
    if choice is not None:
        return choice
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


def _tzset() -> None:
    import time

    time.tzset()


def _notify(message: str) -> None:
    if sys.stderr.isatty():
        click.echo(f"logsift: {message}", err=True)


class _Bar:
    """click's progress bar on stderr, for inputs large enough to be worth it."""

    def __init__(self) -> None:
        self.bar: Any = None

    def start(self, name: str, total: int | None) -> None:
        if total is None or total < PROGRESS_MIN:
            return
        self.bar = click.progressbar(length=total, label=f"reading {os.path.basename(name)}", file=sys.stderr,
                                     show_eta=True, show_percent=True, width=30)
        self.bar.__enter__()

    def advance(self, size: int) -> None:
        if self.bar is not None:
            self.bar.update(size)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
