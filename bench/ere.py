"""Python regexes to POSIX extended regexes for `grep -E`, where that keeps their meaning.

Works on the parse tree of Python's `re` (the rule regexes use the subset of `regex` that `re`
also parses), so escapes, classes and repeats are translated rather than rewritten as text.
What ERE cannot say returns None with the reason: lookarounds, backreferences, atomic groups,
possessive repeats, inline flags. Lazy repeats become greedy ones, which match the same lines.
A `^` becomes `(^|: )`: the rules match a journal entry's message, and grep sees the whole line,
where the message follows "ident[pid]: ".
"""

from __future__ import annotations

from typing import Any

try:  # Python 3.11+
    import re._constants as constants
    import re._parser as parser
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as constants  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

SPECIAL = set(".[]()*+?{}|^$\\")
MAXREPEAT = constants.MAXREPEAT
CATEGORY_OUTSIDE = {
    constants.CATEGORY_DIGIT: "[0-9]",
    constants.CATEGORY_NOT_DIGIT: "[^0-9]",
    constants.CATEGORY_SPACE: "[[:space:]]",
    constants.CATEGORY_NOT_SPACE: "[^[:space:]]",
    constants.CATEGORY_WORD: "[[:alnum:]_]",
    constants.CATEGORY_NOT_WORD: "[^[:alnum:]_]",
}
CATEGORY_INSIDE = {
    constants.CATEGORY_DIGIT: "0-9",
    constants.CATEGORY_SPACE: "[:space:]",
    constants.CATEGORY_WORD: "[:alnum:]_",
}
CATEGORY_NEGATED = {
    constants.CATEGORY_NOT_DIGIT: "0-9",
    constants.CATEGORY_NOT_SPACE: "[:space:]",
    constants.CATEGORY_NOT_WORD: "[:alnum:]_",
}


class Unsupported(Exception):
    """The regex uses something POSIX ERE has no equivalent for."""


def to_ere(source: str) -> tuple[str | None, str]:
    """(ERE, "") or (None, why not)."""
    try:
        tree = parser.parse(source)
    except Exception as error:  # noqa: BLE001 - syntax only the `regex` package knows
        return None, f"not parsed by Python's re ({error})"
    if tree.state.flags & ~(constants.SRE_FLAG_UNICODE):
        return None, "inline flags"
    try:
        text, _ = _sequence(list(tree))
    except Unsupported as error:
        return None, str(error)
    if "\n" in text or "\r" in text:
        return None, "a newline cannot be in a grep pattern file"
    return text, ""


def _sequence(items: list[tuple[Any, Any]]) -> tuple[str, bool]:
    """ERE text for a sequence, and whether it is one atom (needs no parentheses to repeat)."""
    parts = [_item(op, value) for op, value in items]
    if len(parts) == 1:
        return parts[0]
    return "".join(text for text, _ in parts), False


def _literal(code: int) -> str:
    char = chr(code)
    return "\\" + char if char in SPECIAL else char


def _item(op: Any, value: Any) -> tuple[str, bool]:
    if op is constants.LITERAL:
        return _literal(value), True
    if op is constants.NOT_LITERAL:
        return _class([(constants.NEGATE, None), (constants.LITERAL, value)]), True
    if op is constants.ANY:
        return ".", True
    if op is constants.IN:
        return _class(value), True
    if op is constants.CATEGORY:
        return CATEGORY_OUTSIDE[value], True
    if op is constants.AT:
        if value in (constants.AT_BEGINNING, constants.AT_BEGINNING_STRING):
            return "(^|: )", True
        if value in (constants.AT_END, constants.AT_END_STRING):
            return "$", True
        if value is constants.AT_BOUNDARY:
            return "\\b", True
        if value is constants.AT_NON_BOUNDARY:
            return "\\B", True
        raise Unsupported(f"anchor {value}")
    if op is constants.SUBPATTERN:
        _group, add_flags, del_flags, sub = value
        if add_flags or del_flags:
            raise Unsupported("inline flags in a group")
        text, _ = _sequence(list(sub))
        return f"({text})", True
    if op is constants.BRANCH:
        branches = [_sequence(list(branch))[0] for branch in value[1]]
        return "(" + "|".join(branches) + ")", True
    if op in (constants.MAX_REPEAT, constants.MIN_REPEAT):
        low, high, sub = value
        text, atom = _sequence(list(sub))
        if not atom:
            text = f"({text})"
        return text + _quantifier(low, high), False
    names = {
        "ASSERT": "lookahead/lookbehind", "ASSERT_NOT": "negative lookaround", "GROUPREF": "backreference",
        "GROUPREF_EXISTS": "conditional group", "ATOMIC_GROUP": "atomic group",
        "POSSESSIVE_REPEAT": "possessive repeat",
    }
    raise Unsupported(names.get(str(op), f"operator {op}"))


def _quantifier(low: int, high: int) -> str:
    if high is MAXREPEAT or high == MAXREPEAT:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if (low, high) == (0, 1):
        return "?"
    if low == high:
        return f"{{{low}}}"
    return f"{{{low},{high}}}"


def _class(items: list[tuple[Any, Any]]) -> str:
    negate = False
    literals: list[str] = []
    ranges: list[str] = []
    classes: list[str] = []
    negated_classes: list[str] = []
    for op, value in items:
        if op is constants.NEGATE:
            negate = True
        elif op is constants.LITERAL:
            literals.append(chr(value))
        elif op is constants.RANGE:
            low, high = chr(value[0]), chr(value[1])
            if "]" in (low, high) or "-" in (low, high) or "^" in (low, high) or "[" in (low, high):
                raise Unsupported("a range bounded by a bracket metacharacter")
            ranges.append(f"{low}-{high}")
        elif op is constants.CATEGORY:
            if value in CATEGORY_INSIDE:
                classes.append(CATEGORY_INSIDE[value])
            elif value in CATEGORY_NEGATED:
                negated_classes.append(CATEGORY_NEGATED[value])
            else:
                raise Unsupported(f"class category {value}")
        else:
            raise Unsupported(f"class item {op}")
    if negated_classes:
        # [\S] alone is [^[:space:]]; mixed with other items POSIX has no way to say it.
        if negate or literals or ranges or classes or len(negated_classes) > 1:
            raise Unsupported("a negated category mixed with other class items")
        return "[^" + negated_classes[0] + "]"
    body = "".join(ranges) + "".join(classes)
    inner = _bracket_literals(literals, body)
    if inner == "^":
        return "[^^]" if negate else "\\^"
    return "[" + ("^" if negate else "") + inner + "]"


def _bracket_literals(literals: list[str], body: str = "") -> str:
    """Literal characters inside a POSIX bracket: `]` first, `[` and `^` late, `-` last;
    a backslash is an ordinary character there. Never starts with `^` (that would negate)."""
    chars = sorted(set(literals), key=literals.index)
    first = "]" if "]" in chars else ""
    late = "".join(char for char in "[^" if char in chars)
    last = "-" if "-" in chars else ""
    middle = "".join(char for char in chars if char not in "][^-")
    text = first + middle + body + late + last
    if text.startswith("^"):  # "^" alone, or "^" and "-": put the dash first, where it is literal
        text = text[1:] + "^" if text != "^" else text
    return text
