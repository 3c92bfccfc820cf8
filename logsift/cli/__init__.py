"""The command line: parses options, calls the library, renders, maps errors to exit codes.

`logsift [FILE...]` is triage (the default command); other commands are `logsift NAME`.
Each command lives in its own module here and is registered in COMMANDS by its import path,
so `logsift --help` imports none of them and stays fast.
"""

from __future__ import annotations

import difflib
import gc
import importlib
import os
import sys
from typing import Any

import click

from logsift import __version__
from logsift.exceptions import LogsiftError
from logsift.sanitize import one_line

DEFAULT_COMMAND = "triage"
# name -> "module:attribute"; imported only when the command runs (or for its --help).
COMMANDS: dict[str, str] = {
    "triage": "logsift.cli.triage:triage",
    "report": "logsift.cli.report:report",
    "patterns": "logsift.cli.patterns:patterns",
    "explain": "logsift.cli.explain:explain",
    "eval": "logsift.cli.eval:eval_command",
    "train": "logsift.cli.train:train",
    "schema": "logsift.cli.schema:schema_command",
    "completion": "logsift.cli.completion:completion",
    "watch": "logsift.cli.watch:watch",
}


class LogsiftGroup(click.Group):
    """A group whose first argument, when it is not a command name, is triage's."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in COMMANDS and args[0] not in ("--help", "-h", "--version"):
            _refuse_mistyped_command(args[0])
        if not args or (args[0] not in COMMANDS and args[0] not in ("--help", "-h", "--version")):
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Triage is the default command: its options are the ones people look for first.
        triage = self.get_command(ctx, DEFAULT_COMMAND)
        assert triage is not None
        with click.Context(triage, info_name="logsift", parent=None) as triage_ctx:
            records = [record for param in triage.get_params(triage_ctx)
                       if (record := param.get_help_record(triage_ctx)) is not None]
        with formatter.section("Options (of triage, the default command)"):
            formatter.write_dl(records)
        self.format_commands(ctx, formatter)
        formatter.write_paragraph()
        formatter.write_text("`logsift COMMAND --help` shows a command's own options; "
                             "`logsift completion bash|zsh|fish` prints shell completion.")

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, _SUMMARIES.get(name, "")) for name in sorted(COMMANDS)])


def _refuse_mistyped_command(word: str) -> None:
    """`logsift pattern list`: a word that is no file but close to a command name is a typo."""
    if word.startswith("-") or "/" in word or "." in word or os.path.exists(word):
        return
    close = difflib.get_close_matches(word, list(COMMANDS), n=1, cutoff=0.6)
    if close:
        raise click.UsageError(f"no such command or file {word!r}; did you mean `logsift {close[0]}`?")


_SUMMARIES = {
    "triage": "Diagnose failed runs in logs (the default: `logsift FILE...`).",
    "report": "Write the post-mortem of an incident: Markdown, or one HTML page.",
    "patterns": "The rule library: list, check, test a rule on a log.",
    "explain": "Why an event got its class: rules tried, matched, excluded.",
    "eval": "Measure accuracy on a labelled corpus (manifest.tsv).",
    "train": "Train and cache the model that names failures no rule matches.",
    "schema": "Print the JSON Schema of `-o json` (the contract, version 1).",
    "completion": "Print the shell completion script: logsift completion bash|zsh|fish.",
    "watch": "Follow the journal and alert once per incident (the sidecar): sinks, metrics, resume.",
}


@click.group(cls=LogsiftGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="logsift")
def main() -> None:
    """Find the line that explains why a service keeps dying, and what to do about it.

    \b
      journalctl -u sglang-k26 | logsift
      logsift app.log other.log
      logsift -u sglang-k26 -b
      logsift -o json < journal.txt

    Exit status: 0 no incident, 1 incidents found, 2 usage or input error.
    """


def run(argv: list[str] | None = None) -> int:
    """Entry point: never lets a traceback reach the user for input they gave."""
    try:
        result: Any = main.main(args=argv, prog_name="logsift", standalone_mode=False)
        return int(result or 0)
    except LogsiftError as error:
        # Messages quote file names and log text: one line, nothing a terminal would obey.
        click.echo(f"logsift: error: {one_line(str(error))}", err=True)
        return 2
    except click.exceptions.Exit as exit_:
        return exit_.exit_code
    except click.ClickException as error:
        error.show()
        return 2
    except click.Abort:
        click.echo("logsift: aborted", err=True)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`| head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # noqa: BLE001 - last line of defence: one line, not a traceback
        if os.environ.get("LOGSIFT_DEBUG"):
            raise
        click.echo(
            f"logsift: internal error: {type(error).__name__}: {one_line(str(error))[:500]} "
            "(set LOGSIFT_DEBUG=1 for the traceback, and please report it)",
            err=True,
        )
        return 2


# The cycle collector's passes over what a run keeps (a run per unit, the records of open
# events) cost a fifth to a third of a unit flood's time, and a run makes next to no reference
# cycles (about 500 objects collected over 100,000 units): the young generation is collected
# every 200,000 allocations instead of every 700, which still bounds what cycles can hold.
GC_THRESHOLD = (200_000, 10, 10)


def entry() -> None:
    """The `logsift` command (a process of its own: the collector's settings are its own too)."""
    gc.set_threshold(*GC_THRESHOLD)
    sys.exit(run())
