"""Facts: values that describe a run rather than a failure (CUDA_HOME, the nvcc that was used,
versions, the GPU arch built for, the model, the launch arguments, `Environment=` lines).

A post-mortem asks "what changed between attempts": a rule's `[[context]]` picks up values for its
own root cause only, so facts have their own file, `facts.toml` at the top of a pattern directory
(the bundled `patterns/`, or a site `--patterns DIR`), beside its samples in `facts.log`:

    [[fact]]
    name = "cuda_home"                      # the key in JSON (runs[].facts[].name)
    label = "CUDA_HOME"                     # what reports show; given once per name
    regex = '''(?P<value>/\\S*?)/bin/nvcc'''  # `value` is the fact; several [[fact]] may share a name
    literals = ["/bin/nvcc"]                # optional, as for [[match]]

    [[fact]]
    name = "environment"
    label = "Environment="
    regex = '''Environment=(?P<key>\\w+)=(?P<value>\\S*)'''   # `key`: one fact per key, environment.CUDA_HOME

    [[fact]]
    name = "launch_args"
    label = "launch arguments"
    kind = "arguments"                      # compared argument by argument, not as one string
    field = "_CMDLINE"                      # instead of a regex: a journal field (structured input)

Adding a fact is one entry here and one annotated sample (`# facts: {"cuda_home": "/dev/null"}`);
`tests/test_patterns.py` proves each entry on its samples, as it does rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from logsift.exceptions import RuleError
from logsift.lazy import compile_lazily
from logsift.rules.pattern import Pattern, compile_pattern

FILE = "facts.toml"
KINDS = ("value", "arguments")
MAX_VALUE = 2000  # characters kept of one value: launch arguments can be long, not unbounded
_NAME = compile_lazily(r"^[a-z][a-z0-9_]*$")
_FIELD = compile_lazily(r"^[A-Z_][A-Z0-9_]*$")
_KEYS = {"name", "label", "kind", "regex", "literals", "field"}


@dataclass(frozen=True, slots=True)
class FactRule:
    """One `[[fact]]` entry: how to read one fact from a line (or a journal field)."""

    name: str
    label: str
    kind: str
    pattern: Pattern | None
    field: str | None
    path: Path
    line: int
    index: int  # among the [[fact]] entries of its file

    def extract(self, text: str) -> Iterator[tuple[str, str, str]]:
        """(name, label, value) for every occurrence in one line of text."""
        if self.pattern is None:
            return
        for match in self.pattern.compiled.finditer(text, timeout=0.25):
            value = clean(match.group("value") or "")
            if not value:
                continue
            key = match.groupdict().get("key")
            if key:
                yield f"{self.name}.{key}", f"{self.label} {key}", value
            else:
                yield self.name, self.label, value


def clean(value: str) -> str:
    value = value.strip()
    if len(value) > MAX_VALUE:
        value = value[:MAX_VALUE] + f"... [{len(value) - MAX_VALUE} more characters]"
    return value


def load_facts(path: Path) -> tuple[FactRule, ...]:
    """The `[[fact]]` entries of one facts file, checked: every error names file:line."""
    import tomllib  # only when a file is parsed (start-up reads the cache)

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RuleError(f"not UTF-8 (byte {error.start})", str(path)) from None
    except OSError as error:
        raise RuleError(error.strerror or str(error), str(path)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RuleError(f"invalid TOML: {error}", str(path)) from None
    unknown = sorted(set(data) - {"fact"})
    if unknown:
        raise RuleError(f"unknown key {unknown[0]!r}: a facts file holds only [[fact]] entries", str(path))
    entries = data.get("fact", [])
    if not isinstance(entries, list):
        raise RuleError("fact must be an array of tables ([[fact]])", str(path))
    lines = [number for number, line in enumerate(text.splitlines(), 1) if line.strip() == "[[fact]]"]
    labels: dict[str, tuple[str, str]] = {}
    facts = []
    for index, entry in enumerate(entries):
        line = lines[index] if index < len(lines) else 1
        facts.append(_fact(path, entry, index, line, labels))
    return tuple(facts)


def _fact(path: Path, entry: Any, index: int, line: int, labels: dict[str, tuple[str, str]]) -> FactRule:
    where = f"{path}:{line}"
    if not isinstance(entry, dict):
        raise RuleError(f"[[fact]] #{index + 1} must be a table", where)
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise RuleError(f"unknown key {unknown[0]!r} in [[fact]] (known: {', '.join(sorted(_KEYS))})", where)
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise RuleError("a [[fact]] needs a name of lowercase letters, digits and _ (the JSON key)", where)
    kind = entry.get("kind", labels.get(name, ("", "value"))[1])
    if kind not in KINDS:
        raise RuleError(f"kind must be one of {', '.join(KINDS)}", where)
    label = entry.get("label", labels.get(name, ("", ""))[0])
    if not isinstance(label, str) or not label.strip():
        raise RuleError(f"the first [[fact]] named {name!r} needs a label (what reports show)", where)
    if name in labels and (label, kind) != labels[name]:
        raise RuleError(f"[[fact]] {name!r} was given another label or kind before; give them once", where)
    labels[name] = (label, kind)
    source, field = entry.get("regex"), entry.get("field")
    if (source is None) == (field is None):
        raise RuleError("a [[fact]] needs either a regex or a field (a journal field name)", where)
    pattern = None
    if source is not None:
        if not isinstance(source, str):
            raise RuleError("regex must be a string", where)
        pattern = compile_pattern(source, entry.get("literals"), where, index, line)
        if "value" not in pattern.compiled.groupindex:
            raise RuleError("a [[fact]] regex needs a (?P<value>...) group", where)
    else:
        if not isinstance(field, str) or not _FIELD.match(field):
            raise RuleError("field must be a journal field name such as _CMDLINE", where)
        if "literals" in entry:
            raise RuleError("literals apply to a regex, not to a field", where)
    return FactRule(name=name, label=label.strip(), kind=kind, pattern=pattern, field=field, path=path,
                    line=line, index=index)


__all__ = ["FILE", "FactRule", "clean", "load_facts"]
