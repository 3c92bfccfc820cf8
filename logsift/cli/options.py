"""Options shared by several commands, as stackable decorators."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click

from logsift.exceptions import LogsiftError

if TYPE_CHECKING:  # the rule library is imported when rules are loaded, not for --help
    from logsift.rules import RuleSet

F = TypeVar("F", bound=Callable[..., Any])


def patterns_option(function: F) -> F:
    return click.option(
        "--patterns",
        "pattern_dirs",
        multiple=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="Also load rules from this directory (<area>/<name>.toml); repeatable. "
        "A rule with the same id replaces the bundled one.",
    )(function)


def color_option(function: F) -> F:
    return click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        show_default=True,
        help="Colour the terminal report; auto: on a terminal (not TERM=dumb), unless NO_COLOR is set; FORCE_COLOR forces it.",
    )(function)


def use_color(choice: str, stream: Any = None) -> bool:
    """--color always/never decide; else NO_COLOR (set and not empty) turns colour off,
    FORCE_COLOR (set, not empty, not 0) on, TERM=dumb off; else colour only on a terminal."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0", "false"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def rules_from(pattern_dirs: tuple[Path, ...]) -> RuleSet:
    try:
        from logsift.rules import load_rules

        return load_rules(extra=pattern_dirs)
    except LogsiftError:
        raise
    except OSError as error:
        raise LogsiftError(f"cannot read rules: {error}") from None
