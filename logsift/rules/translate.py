"""Rule regexes as hyperscan expressions over UTF-8 bytes that match at least what the rule does.

The rules are Python regexes (the `regex` module) over decoded text, one line at a time; the
fast path scans raw input bytes, many lines at once, with one hyperscan database. So each regex
is translated from its parse tree (Python's `re` parses every rule regex) into an expression
whose matches are a superset of the rule's, on any line:

- A character class that could match a non-ASCII character (`\\w`, `\\s`, `.`, `[^x]`) also
  matches any byte from 0x80 up, and a repeat of one such character allows four times as many
  bytes (a character is one to four bytes in UTF-8; an invalid byte, U+FFFD in Python, is one).
- No class matches a newline: a match never spans two lines, as in the rule (lines are
  searched one by one).
- What cannot be said exactly is widened: anchors, lookarounds, `\\B`, a `\\b` that is not next
  to an ASCII word character, backreferences and conditionals are dropped, since the text
  before the message (a journal prefix) or a multi-byte character could change them.
- The tail after the last required character is cut (`error: \\S+` becomes `error: \\S`), so
  that hyperscan reports one end offset per match rather than one per byte of the tail.

Every hit is then confirmed by the rule's own regex in Python (logsift.rules.prefilter), so a
wider expression costs only the lines it lets through; `exact` tells whether anything was
widened beyond cutting the tail (reported by `logsift patterns check` and the bench).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

try:  # Python 3.11+
    import re._constants as constants  # type: ignore[import-not-found]
    import re._parser as parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as constants  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

MAXREPEAT = constants.MAXREPEAT
_REPEATS = {constants.MAX_REPEAT, constants.MIN_REPEAT}
if hasattr(constants, "POSSESSIVE_REPEAT"):
    _REPEATS.add(constants.POSSESSIVE_REPEAT)
_ATOMIC = getattr(constants, "ATOMIC_GROUP", None)
# Byte sets of the `regex` module's ASCII classes (as it reads a str pattern on ASCII text).
_DIGIT = frozenset(range(0x30, 0x3A))
_WORD = frozenset([*range(0x30, 0x3A), *range(0x41, 0x5B), 0x5F, *range(0x61, 0x7B)])
_SPACE = frozenset([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20])
_ASCII = frozenset(range(0x80))
_HIGH = frozenset(range(0x80, 0x100))
_NEWLINE = 0x0A
# A repeat bound above this is left open: hyperscan compiles huge bounded repeats slowly.
_BOUND_CAP = 1000


class Untranslatable(Exception):
    """The regex uses something that has no byte-level superset here (the caller falls back)."""


@dataclass(frozen=True, slots=True)
class Translation:
    expression: bytes  # for hyperscan, no flags needed
    exact: bool  # nothing but the tail was widened


def translate(source: str) -> Translation:
    """The hyperscan expression for a rule regex; Untranslatable when there is none."""
    try:
        tree = parser.parse(source)
    except Exception as error:  # noqa: BLE001 - syntax only `regex` knows
        raise Untranslatable(f"not parsed by Python's re: {error}") from None
    if tree.state.flags & constants.SRE_FLAG_IGNORECASE:
        raise Untranslatable("case-insensitive regexes are not translated")
    state = _State()
    items = _trim(list(tree))
    text = _sequence(items, state)
    if not text or not _requires_something(items):
        raise Untranslatable("the translation could match an empty string")
    return Translation(text.encode("ascii"), exact=state.exact)


class _State:
    def __init__(self) -> None:
        self.exact = True


def _trim(items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Cut what follows the last character every match needs: a superset, with fewer ends."""
    items = list(items)
    while items:
        op, value = items[-1]
        if op in (constants.AT, constants.ASSERT, constants.ASSERT_NOT):
            items.pop()
        elif op in _REPEATS:
            low, _high, body = value
            if low == 0:
                items.pop()
                continue
            items[-1] = (constants.MAX_REPEAT, (low, low, _trim(list(body)) if low == 1 else body))
            return items
        elif op is constants.SUBPATTERN:
            inner = _trim(list(value[-1]))
            if not inner:
                items.pop()
                continue
            items[-1] = (op, (*value[:-1], inner))
            return items
        else:
            return items
    return items


def _requires_something(items: list[tuple[Any, Any]]) -> bool:
    for op, value in items:
        if op in (constants.LITERAL, constants.NOT_LITERAL, constants.ANY, constants.IN):
            return True
        if op is constants.SUBPATTERN and _requires_something(list(value[-1])):
            return True
        if op in _REPEATS and value[0] >= 1 and _requires_something(list(value[2])):
            return True
        if op is constants.BRANCH and all(_requires_something(list(branch)) for branch in value[1]):
            return True
    return False


def _byte(code: int) -> str:
    return f"\\x{code:02x}"


def _class(codes: frozenset[int]) -> str:
    """A bracket expression for a set of byte values (never empty, never the newline)."""
    ordered = sorted(codes - {_NEWLINE})
    if not ordered:
        raise Untranslatable("empty character class")
    if len(ordered) == 1:
        return _byte(ordered[0])
    parts: list[str] = []
    start = previous = ordered[0]
    for code in [*ordered[1:], None]:
        if code is not None and code == previous + 1:
            previous = code
            continue
        parts.append(_byte(start) if start == previous else f"{_byte(start)}-{_byte(previous)}")
        if code is not None:
            start = previous = code
    return "[" + "".join(parts) + "]"


def _category(category: Any) -> tuple[frozenset[int], bool]:
    """The ASCII bytes of a category and whether it can match a non-ASCII character."""
    table = {
        constants.CATEGORY_DIGIT: (_DIGIT, True),
        constants.CATEGORY_NOT_DIGIT: (_ASCII - _DIGIT, True),
        constants.CATEGORY_WORD: (_WORD, True),
        constants.CATEGORY_NOT_WORD: (_ASCII - _WORD, True),
        constants.CATEGORY_SPACE: (_SPACE, True),
        constants.CATEGORY_NOT_SPACE: (_ASCII - _SPACE, True),
    }
    if category not in table:
        raise Untranslatable(f"category {category}")
    return table[category]


def _char_set(op: Any, value: Any) -> tuple[frozenset[int], bool] | None:
    """(ASCII bytes, can match non-ASCII) for a one-character item; None for other items."""
    if op is constants.LITERAL:
        return (frozenset([value]), False) if value < 0x80 else None
    if op is constants.NOT_LITERAL:
        return _ASCII - {value}, True
    if op is constants.ANY:
        return _ASCII, True
    if op is constants.IN:
        negate = False
        codes: set[int] = set()
        high = False
        for item_op, item in value:
            if item_op is constants.NEGATE:
                negate = True
            elif item_op is constants.LITERAL:
                if item < 0x80:
                    codes.add(item)
                else:
                    high = True
            elif item_op is constants.RANGE:
                low, top = item
                codes.update(range(low, min(top, 0x7F) + 1))
                high = high or top >= 0x80
            elif item_op is constants.CATEGORY:
                ascii_part, non_ascii = _category(item)
                codes.update(ascii_part)
                high = high or non_ascii
            else:
                raise Untranslatable(f"class item {item_op}")
        if negate:
            return _ASCII - codes, True
        return frozenset(codes), high
    return None


def _atom(codes: frozenset[int], high: bool) -> str:
    """One character of the class: an ASCII byte of it, or one UTF-8 character of any kind."""
    if not high:
        return _class(codes)
    return f"(?:{_class(codes | _HIGH)}[\\x80-\\xbf]{{0,3}})" if codes else "(?:[\\x80-\\xff][\\x80-\\xbf]{0,3})"


def _sequence(items: list[tuple[Any, Any]], state: _State) -> str:
    out: list[str] = []
    for index, (op, value) in enumerate(items):
        out.append(_item(op, value, items, index, state))
    return "".join(out)


def _ascii_word_literal(item: tuple[Any, Any] | None) -> bool:
    return item is not None and item[0] is constants.LITERAL and item[1] in _WORD


def _item(op: Any, value: Any, items: list[tuple[Any, Any]], index: int, state: _State) -> str:
    single = _char_set(op, value)
    if single is not None:
        return _atom(*single)
    if op is constants.LITERAL:  # a non-ASCII character: its UTF-8 bytes
        return "".join(_byte(code) for code in chr(value).encode("utf-8"))
    if op is constants.AT:
        if value is constants.AT_BOUNDARY:
            before = items[index - 1] if index else None
            after = items[index + 1] if index + 1 < len(items) else None
            if _ascii_word_literal(before) or _ascii_word_literal(after):
                return "\\b"  # a boundary next to an ASCII letter is the same in bytes
        state.exact = False
        return ""
    if op in (constants.ASSERT, constants.ASSERT_NOT, constants.GROUPREF, constants.GROUPREF_EXISTS):
        state.exact = False
        return "[^\\n]*" if op in (constants.GROUPREF, constants.GROUPREF_EXISTS) else ""
    if op is constants.SUBPATTERN:
        if value[1] or value[2]:
            raise Untranslatable("inline flags")
        return f"(?:{_sequence(list(value[-1]), state)})"
    if _ATOMIC is not None and op is _ATOMIC:
        return f"(?:{_sequence(list(value), state)})"
    if op is constants.BRANCH:
        return "(?:" + "|".join(_sequence(list(branch), state) for branch in value[1]) + ")"
    if op in _REPEATS:
        low, high, body = value
        body_items = list(body)
        if len(body_items) == 1:
            one = _char_set(*body_items[0])
            if one is not None:
                codes, non_ascii = one
                if non_ascii:  # up to four bytes per character
                    return _class(codes | _HIGH) + _bounds(low, high * 4 if high != MAXREPEAT else high)
                return _class(codes) + _bounds(low, high)
        inner = _sequence(body_items, state)
        if not inner:
            return ""
        return f"(?:{inner}){_bounds(low, high)}"
    raise Untranslatable(f"regex construct {op}")


def _bounds(low: int, high: int) -> str:
    if high == MAXREPEAT or high > _BOUND_CAP:
        if low == 0:
            return "*"
        if low == 1:
            return "+"
        return f"{{{min(low, _BOUND_CAP)},}}"
    if low == high:
        return "" if low == 1 else f"{{{low}}}"
    if low == 0 and high == 1:
        return "?"
    return f"{{{low},{high}}}"
