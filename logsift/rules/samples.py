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


def parse_samples(path: Path) -> tuple[list[Block], list[Problem]]:
    blocks: list[Block] = []
    problems: list[Problem] = []
    current: Block | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        for kind in ("ruleid", "ok"):
            prefix = f"# {kind}:"
            if stripped.startswith(prefix):
                rest = stripped[len(prefix):].strip()
                rule_id, _, raw = rest.partition(" ")
                fields: dict[str, str] = {}
                if raw.strip():
                    try:
                        fields = json.loads(raw)
                    except json.JSONDecodeError as error:
                        problems.append(Problem(f"{path}:{number}", f"annotation fields are not JSON: {error}"))
                current = Block(kind, rule_id, fields, number)
                blocks.append(current)
                break
        else:
            if stripped.startswith("#"):
                continue
            if current is None:
                if stripped:
                    problems.append(Problem(f"{path}:{number}", "sample line before any annotation"))
                continue
            current.lines.append(line)
    for block in blocks:
        while block.lines and not block.lines[-1].strip():
            block.lines.pop()
        if not block.lines:
            problems.append(Problem(f"{path}:{block.line}", "annotation with no sample lines after it"))
    return blocks, problems


__all__ = ["Block", "Problem", "parse_samples"]
