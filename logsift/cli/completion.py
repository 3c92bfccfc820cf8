"""`logsift completion bash|zsh|fish`: the shell completion script, from click."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

SHELLS = ("bash", "zsh", "fish")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> int:
    """Print the completion script for SHELL; load it from your shell's start-up file.

    \b
      bash: echo 'eval "$(logsift completion bash)"' >> ~/.bashrc
      zsh:  echo 'eval "$(logsift completion zsh)"' >> ~/.zshrc
      fish: logsift completion fish > ~/.config/fish/completions/logsift.fish
    """
    from logsift.cli import main

    cls = get_completion_class(shell)
    assert cls is not None  # every name in SHELLS has one
    click.echo(cls(main, {}, "logsift", "_LOGSIFT_COMPLETE").source())
    return 0
