"""`logsift schema`: the JSON Schema of `-o json` (the contract, version 1)."""

from __future__ import annotations

import json

import click

from logsift.report.schema import schema


@click.command("schema", context_settings={"help_option_names": ["-h", "--help"]})
def schema_command() -> int:
    """Print the JSON Schema (draft 2020-12) that `logsift -o json` output follows.

    \b
      logsift schema > logsift-report.schema.json
      logsift -o json journal.txt | check-jsonschema --schemafile logsift-report.schema.json -
    """
    click.echo(json.dumps(schema(), indent=2))
    return 0
