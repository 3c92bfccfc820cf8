"""Literal text that every match of a regex must contain: the prefilter's keys.

Works on the parse tree of Python's `re` (the rule regexes use the common subset of `re` and
`regex`). The result is a set of lowercase strings such that any match contains at least one
of them; None when no such set of strings of 3+ characters exists.
"""

from __future__ import annotations

from typing import Any

try:  # Python 3.11+
    import re._constants as constants  # type: ignore[import-not-found]
    import re._parser as parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as constants  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

MIN_LENGTH = 3
_REPEATS = {constants.MAX_REPEAT, constants.MIN_REPEAT}
if hasattr(constants, "POSSESSIVE_REPEAT"):
    _REPEATS.add(constants.POSSESSIVE_REPEAT)


def required_literals(source: str) -> list[str] | None:
    try:
        tree = parser.parse(source)
    except Exception:  # noqa: BLE001 - syntax only `regex` knows: the author must name literals
        return None
    found = _sequence(list(tree))
    if not found:
        return None
    return sorted(found)


def _better(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    """The more selective of two alternative requirements."""
    if not a:
        return b
    if not b:
        return a
    score_a = (min(map(len, a)), -len(a))
    score_b = (min(map(len, b)), -len(b))
    return a if score_a >= score_b else b


def _sequence(items: list[tuple[Any, Any]]) -> set[str] | None:
    best: set[str] | None = None
    run: list[str] = []

    def close_run() -> None:
        nonlocal best, run
        if len(run) >= MIN_LENGTH:
            best = _better(best, {"".join(run).lower()})
        run = []

    for op, value in items:
        if op is constants.LITERAL:
            run.append(chr(value))
            continue
        if op is constants.SUBPATTERN:
            sub_items = list(value[-1])
            if all(sub_op is constants.LITERAL for sub_op, _ in sub_items):
                run.extend(chr(code) for _, code in sub_items)
                continue
            close_run()
            best = _better(best, _sequence(sub_items))
            continue
        close_run()
        if op is constants.BRANCH:
            best = _better(best, _branch(value[1]))
        elif op in _REPEATS and value[0] >= 1:
            best = _better(best, _sequence(list(value[2])))
        elif op is constants.IN and len(value) == 1 and value[0][0] is constants.LITERAL:
            run.append(chr(value[0][1]))
    close_run()
    return best


def _branch(branches: list[Any]) -> set[str] | None:
    union: set[str] = set()
    for branch in branches:
        found = _sequence(list(branch))
        if not found:
            return None
        union |= found
    return union
