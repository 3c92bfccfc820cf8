"""Regexes compiled when first used, not when their module is imported.

logsift's start-up is mostly imports, and a module-level `re.compile` costs its compile at
import whether or not a line ever needs it (an empty input, `--help`, a run that never sees a
relay prefix). `compile_lazily` gives an object that stands in for the compiled pattern: the
first use compiles it and puts the pattern's own bound methods in its slots, so every later
call is as fast as on the pattern itself.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

_ATTRIBUTES = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split",
               "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    __slots__ = ("_source", "_flags", *_ATTRIBUTES)

    def __init__(self, source: str | bytes, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # Reached only while the slots are empty, i.e. on first use.
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"compile_lazily({self._source!r})"


def compile_lazily(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(source, flags)`, done on first use."""
    return cast("re.Pattern[AnyStr]", LazyPattern(source, flags))
