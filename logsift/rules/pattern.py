"""One regex of a rule or fact file, compiled, with the literal text the prefilter looks for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex

from logsift.exceptions import RuleError
from logsift.rules.literals import required_literals


@dataclass(frozen=True, slots=True)
class Pattern:
    """One `[[match]]` or `[[context]]` entry: a regex and the literals that must occur for it."""

    index: int
    source: str
    compiled: Any
    literals: tuple[str, ...]
    line: int
    # Tried only when no other [[match]] of the rule matched in the event: weaker evidence, such
    # as the frames of a traceback whose last lines were cut off.
    fallback: bool = False



def compile_pattern(source: str, given: Any, where: str, index: int, line: int, fallback: bool = False) -> Pattern:
    """A regex of a rule (or fact) file, compiled, with the literals the prefilter looks for:
    `given` (a list from the file) or derived from the regex."""
    try:
        compiled = regex.compile(source, regex.VERSION0)
    except regex.error as error:
        raise RuleError(f"regex does not compile: {error}", where) from None
    if given is not None:
        if not isinstance(given, list) or not all(isinstance(item, str) and len(item) >= 3 for item in given):
            raise RuleError("literals must be a list of strings of 3 or more characters", where)
        literals = tuple(item.lower() for item in given)
    else:
        derived = required_literals(source)
        if not derived:
            raise RuleError(
                "no literal text of 3+ characters is required by this regex, so the "
                "prefilter cannot select lines for it; add literals = [...]",
                where,
            )
        literals = tuple(derived)
    return Pattern(index=index, source=source, compiled=compiled, literals=literals, line=line, fallback=fallback)
