"""One regex of a rule or fact file, compiled, with the literal text the prefilter looks for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logsift.exceptions import RuleError
from logsift.rules.literals import required_literals


class LazyRegex:
    """A rule regex (the `regex` module, VERSION0), compiled when first used: a run from the
    cached library (rules/library.py) compiles only the regexes that some line made it try."""

    __slots__ = ("source", "_compiled")

    def __init__(self, source: str, compiled: Any = None) -> None:
        self.source = source
        self._compiled = compiled

    def _get(self) -> Any:
        if self._compiled is None:
            import regex

            self._compiled = regex.compile(self.source, regex.VERSION0)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyRegex) and other.source == self.source

    def __hash__(self) -> int:
        return hash(self.source)


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
    import regex  # checks the regex now; a cached library compiles its regexes lazily

    try:
        compiled = LazyRegex(source, regex.compile(source, regex.VERSION0))
    except (regex.error, ValueError, OverflowError, RecursionError) as error:
        # ValueError: flags that contradict (`(?V1)` against VERSION0); OverflowError: a repeat
        # count past the engine's limit; RecursionError: nesting too deep to parse.
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
