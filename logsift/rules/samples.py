"""Annotated sample logs beside each rule: the file format (the check is check/samples.py).

A sample file `<name>.log` holds real-looking log lines. An annotation line applies to the
lines after it, up to the next annotation (one event, as the engine groups it):

    # ruleid: cuda.nvcc-not-found {"nvcc_path": "/dev/null/bin/nvcc"}
    /bin/sh: 1: /dev/null/bin/nvcc: not found
    # ok: cuda.nvcc-not-found
    nvcc found at /usr/local/cuda/bin/nvcc

`ruleid: X {fields}`: the block's winning finding is X and its captures include the fields.
`ok: X`: X finds nothing in the block. Other lines starting with `#` are comments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Block:
    kind: str  # "ruleid" or "ok"
    rule_id: str
    fields: dict[str, str]
    line: int  # of the annotation
    lines: list[str] = field(default_factory=list)


@dataclass
class Problem:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class Annotated:
    """One annotation of a sample file and the lines it applies to."""

    line: int  # of the annotation
    prefix: str  # the one of the parser's prefixes it starts with
    text: str  # after the prefix
    lines: list[str] = field(default_factory=list)


def annotated_blocks(path: Path, prefixes: tuple[str, ...]) -> tuple[list[Annotated], list[Problem]]:
    """The blocks of an annotated sample file (rule samples, facts.log): each line starting with
    one of `prefixes` and the lines after it up to the next annotation, trailing blank lines
    dropped. Other `#` lines are comments."""
    blocks: list[Annotated] = []
    problems: list[Problem] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        prefix = next((prefix for prefix in prefixes if stripped.startswith(prefix)), None)
        if prefix is not None:
            blocks.append(Annotated(number, prefix, stripped[len(prefix):].strip()))
        elif stripped.startswith("#"):
            continue
        elif not blocks:
            if stripped:
                problems.append(Problem(f"{path}:{number}", "sample line before any annotation"))
        else:
            blocks[-1].lines.append(line)
    for block in blocks:
        while block.lines and not block.lines[-1].strip():
            block.lines.pop()
        if not block.lines:
            problems.append(Problem(f"{path}:{block.line}", "annotation with no sample lines after it"))
    return blocks, problems


def parse_samples(path: Path) -> tuple[list[Block], list[Problem]]:
    kinds = {f"# {kind}:": kind for kind in ("ruleid", "ok")}
    found, problems = annotated_blocks(path, tuple(kinds))
    blocks: list[Block] = []
    for block in found:
        rule_id, _, raw = block.text.partition(" ")
        fields: dict[str, str] = {}
        if raw.strip():
            try:
                fields = json.loads(raw)
            except json.JSONDecodeError as error:
                problems.append(Problem(f"{path}:{block.line}", f"annotation fields are not JSON: {error}"))
        blocks.append(Block(kinds[block.prefix], rule_id, fields, block.line, block.lines))
    return blocks, problems


__all__ = ["Annotated", "Block", "Problem", "annotated_blocks", "parse_samples"]
