"""`logsift patterns list|check|test`: the rule library, its validation, one rule tried on a log."""

from __future__ import annotations

import os
from pathlib import Path

import click

from logsift import read as readers
from logsift.check import catalogue
from logsift.check.library import Trial, check_library, rule_id_for, trial
from logsift.cli.options import patterns_option, rules_from
from logsift.exceptions import UsageError
from logsift.report.common import clip
from logsift.rules import Rule, default_pattern_dirs, load_rule
from logsift.sanitize import clean

CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT)
def patterns() -> None:
    """The rule library: list it, check it, try one rule on a log.

    \b
      logsift patterns list
      logsift patterns check --patterns ./my-rules
      logsift patterns test cuda.nvcc-not-found journal.txt --missed
    """


@patterns.command("list", context_settings=CONTEXT)
@click.option("--markdown", is_flag=True, help="Print the Markdown catalogue (docs/patterns.md) instead of a table.")
@patterns_option
def list_command(markdown: bool, pattern_dirs: tuple[Path, ...]) -> int:
    """List the failure classes: id, severity, priority, regexes, samples, title.

    \b
      logsift patterns list
      logsift patterns list --markdown > docs/patterns.md
    """
    rules = rules_from(pattern_dirs)
    if markdown:
        click.echo(catalogue.markdown(rules), nl=False)
    else:
        click.echo(catalogue.table(rules))
        click.echo(f"{len(rules)} classes")
    return 0


@patterns.command("check", context_settings=CONTEXT)
@patterns_option
def check_command(pattern_dirs: tuple[Path, ...]) -> int:
    """Validate the library: one problem per line as PATH:LINE: REASON.

    Checks the schema of every rule file, that regexes compile and do not risk catastrophic
    backtracking, that ids follow from paths (area/kebab-name.toml), that `explains` names
    existing classes, and that every rule is proven by its annotated samples. Exit status 1
    when there are problems, 0 when the library is clean.
    """
    result = check_library(extra=pattern_dirs)
    for problem in result.problems:
        click.echo(f"{_display(problem.path)}:{problem.line}: {problem.message}")
    files = result.files
    count = len(result.problems)
    summary = f"{files} rule file{'s' if files != 1 else ''}, {count} problem{'s' if count != 1 else ''}"
    click.echo(summary, err=True)
    return 1 if result.problems else 0


@patterns.command("test", context_settings=CONTEXT)
@click.argument("rule_name", metavar="RULE")
@click.argument("log", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--missed", is_flag=True, help="List the lines the prefilter selected for the rule that no regex matched.")
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="Lines shown per regex (0: all).")
@click.option("-i", "--input-format", default="auto", show_default=True, metavar="NAME",
              help="Input format of LOG; auto-detected by default.")
@patterns_option
def test_command(rule_name: str, log: Path, missed: bool, limit: int, input_format: str,
                 pattern_dirs: tuple[Path, ...]) -> int:
    """Try RULE (an id or a .toml file) on LOG: hits per regex, with captures, like fail2ban-regex.

    Exit status 0 when some [[match]] regex matched a line, 1 when none did.

    \b
      logsift patterns test cuda.nvcc-not-found journal.txt
      logsift patterns test ./rules/app/my-error.toml app.log --missed
    """
    rule = _resolve(rule_name, pattern_dirs)
    stream = readers.open_input(str(log))
    try:
        result = trial(rule, readers.read(stream, str(log), input_format))
    finally:
        stream.close()
    click.echo("\n".join(_trial_lines(result, log, missed, limit)))
    return 0 if result.matched else 1


def _resolve(name: str, pattern_dirs: tuple[Path, ...]) -> Rule:
    """The rule file alone: a rule being written may explain classes that do not exist yet."""
    if name.endswith(".toml"):
        path = Path(name)
        if not path.is_file():
            raise UsageError("no such rule file", name)
        return load_rule(path, rule_id_for(path.resolve()))
    area, _, stem = name.partition(".")
    for directory in reversed([*default_pattern_dirs(), *pattern_dirs]):
        path = directory / area / f"{stem}.toml"
        if stem and path.is_file():
            return load_rule(path, name)
    known = sorted({rule_id_for(path) for directory in [*default_pattern_dirs(), *pattern_dirs]
                    if directory.is_dir() for path in directory.glob("*/*.toml")})
    close = [rule_id for rule_id in known if (stem or area) in rule_id]
    hint = f"; did you mean {', '.join(close[:3])}?" if close else "; see `logsift patterns list`"
    raise UsageError(f"no rule {name!r}{hint}")


def _trial_lines(result: Trial, log: Path, missed: bool, limit: int) -> list[str]:
    rule = result.rule
    lines = [f"Rule: {rule.id} ({_display(str(rule.path))})", f"Log:  {log}", ""]
    for entry in result.patterns:
        count = len(entry.hits)
        lines.append(f"[[{entry.kind}]] #{entry.pattern.index + 1} (line {entry.pattern.line}): "
                     f"{count} hit{'s' if count != 1 else ''}")
        lines.append(f"  {entry.pattern.source}")
        shown = entry.hits if limit == 0 else entry.hits[:limit]
        width = max((len(str(hit.line)) for hit in shown), default=1)
        for hit in shown:
            lines.append(f"  {str(hit.line).rjust(width)} | {clip(clean(hit.text))}")
            if hit.fields:
                captures = " ".join(f"{key}={clean(value)!r}" for key, value in sorted(hit.fields.items()))
                lines.append(f"  {' ' * width} | {captures}")
            if not hit.selected:
                lines.append(f"  {' ' * width} | (the prefilter would skip this line: none of its literals "
                             f"{', '.join(repr(literal) for literal in entry.pattern.literals)} occur in it)")
        if len(shown) < count:
            lines.append(f"  ... {count - len(shown)} more (--limit 0 shows all)")
    if missed and result.missed:
        lines.extend(["", "Missed: lines the prefilter selected for this rule that no [[match]] regex matched"])
        width = max(len(str(number)) for number, _ in result.missed)
        lines.extend(f"  {str(number).rjust(width)} | {clip(clean(text))}" for number, text in result.missed)
    if result.timeouts:
        lines.extend(["", f"Regex timeouts: {result.timeouts} (a regex ran over its time limit on a line)"])
    lines.extend(["", f"Lines: {result.lines}, matched: {result.matched}, missed: {len(result.missed)}"])
    return lines


def _display(path: str) -> str:
    """A path relative to the working directory when it lies below it: shorter and clickable."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith("..") else relative


__all__ = ["patterns"]
