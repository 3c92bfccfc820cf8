r"""Regex constructs at risk of catastrophic backtracking, found statically for `patterns check`.

The matcher runs every regex with a timeout, so a bad regex cannot stall the stream; but a
regex that times out misses its line, so the library should not contain one. Three shapes are
flagged, each only where backtracking can really split the same text in many ways:

- a quantified group whose body holds an unbounded quantifier that nothing mandatory delimits
  from the next iteration: `(a+)+`, `(.*)*`, `(\w+\s?)+` (exponential). `([A-Za-z_]\w*\.)*`
  is not flagged: the `\.` that ends each iteration is a character `\w` cannot take.
- unbounded quantifiers next to each other (only optional parts between) that can both take
  the text at their border, when something after them can fail: `\s*\s*`, `.*.*x`,
  `\w+[^)]*?\)` (polynomial). `\d+(?:\.\d+)*` and `\w+\b[^)]*?` are not flagged.
- an alternation under a quantifier whose branches can match the same text: `(a|aa)+`,
  `(?:\d|\w\w)+` (exponential). Single-character branches like `(\w|\d)` are one character
  class to both engines, and are not flagged.

Works on the parse tree of Python's `re` (the rule regexes use the common subset of `re` and
`regex`); a regex that only `regex` can parse is not analysed. Character classes are compared
on a sample alphabet (ASCII plus a few non-ASCII letters, digits and spaces), which is enough to
tell `\w` from `\.` or `\S` from `\s`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

try:  # Python 3.11+
    import re._constants as constants  # type: ignore[import-not-found]
    import re._parser as parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as constants  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

# A repeat that may run this often (or without bound) is what backtracking multiplies.
LARGE = 16
ALPHABET = frozenset([chr(code) for code in range(1, 128)] + ["é", "ß", "Ж", "中", "٣", "\u00a0", "\u2003"])
_MAX_TEXT = 60
_CATEGORIES = {
    constants.CATEGORY_DIGIT: r"\d", constants.CATEGORY_NOT_DIGIT: r"\D",
    constants.CATEGORY_SPACE: r"\s", constants.CATEGORY_NOT_SPACE: r"\S",
    constants.CATEGORY_WORD: r"\w", constants.CATEGORY_NOT_WORD: r"\W",
}
_CATEGORY_CHARS = {
    code: frozenset(char for char in ALPHABET if re.fullmatch(text, char)) for code, text in _CATEGORIES.items()
}
_WORD = _CATEGORY_CHARS[constants.CATEGORY_WORD]
_AT = {
    constants.AT_BEGINNING: "^", constants.AT_BEGINNING_STRING: r"\A", constants.AT_END: "$",
    constants.AT_END_STRING: r"\Z", constants.AT_BOUNDARY: r"\b", constants.AT_NON_BOUNDARY: r"\B",
}
_REPEATS = {constants.MAX_REPEAT: "", constants.MIN_REPEAT: "?"}
_POSSESSIVE = getattr(constants, "POSSESSIVE_REPEAT", None)
_ATOMIC = getattr(constants, "ATOMIC_GROUP", None)


@dataclass(frozen=True, slots=True)
class Risk:
    """One construct at risk, in words a rule author can act on."""

    construct: str
    reason: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.construct}"


# -- a small tree of what matters for backtracking ----------------------------------------------


@dataclass(frozen=True, slots=True)
class Chars:
    chars: frozenset[str]
    text: str


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Alt:
    branches: tuple[Node, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Repeat:
    low: int
    high: int | None  # None: unbounded
    body: Node
    text: str
    possessive: bool = False

    @property
    def large(self) -> bool:
        return not self.possessive and (self.high is None or self.high >= LARGE)


@dataclass(frozen=True, slots=True)
class Opaque:
    """Text the engine never backtracks into (atomic group) or that we cannot see (backreference)."""

    body: Node | None
    text: str
    zero_width: bool = False


Node = Chars | Seq | Alt | Repeat | Opaque


# Unicode properties only `regex` knows, read as the nearest class `re` knows: what matters here
# is which characters a quantifier can take, and `\p{L}` takes letters, as `\w` does.
_PROPERTY = re.compile(r"\\([pP])\{[^}]*\}|\\([pP])([A-Za-z])")
_REGEX_ONLY_FLAGS = re.compile(r"\(\?[a-zA-Z]*V[01][a-zA-Z]*\)")
POLYNOMIAL = 3  # a bounded repeat of this many or more of an ambiguous body is slow (n^count)


def _portable(source: str) -> str:
    source = _REGEX_ONLY_FLAGS.sub("", source)
    return _PROPERTY.sub(lambda match: "\\w" if (match.group(1) or match.group(2)) == "p" else "\\W", source)


def risks(source: str) -> list[Risk]:
    """The risky constructs of one regex; [] when none, or when even its portable reading
    (`\\p{..}` as `\\w`) does not parse."""
    try:
        tree = parser.parse(_portable(source))
    except Exception:  # noqa: BLE001 - syntax only `regex` knows (\p{..}, fuzzy): not analysed
        return []
    names = {number: name for name, number in tree.state.groupdict.items()}
    root = _Builder(names).sequence(list(tree), bool(tree.state.flags & constants.SRE_FLAG_IGNORECASE),
                                    bool(tree.state.flags & constants.SRE_FLAG_DOTALL))
    found: list[Risk] = []
    for risk in _check(root, tail=False):
        if risk not in found:
            found.append(risk)
    return found


# -- building the tree --------------------------------------------------------------------------


class _Builder:
    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def sequence(self, items: list[Any], ignore_case: bool, dotall: bool) -> Seq:
        nodes = [self.node(op, value, ignore_case, dotall) for op, value in items]
        return Seq(tuple(nodes), "".join(node.text for node in nodes))

    def node(self, op: Any, value: Any, ignore_case: bool, dotall: bool) -> Node:
        if op is constants.LITERAL:
            return Chars(_fold(frozenset(chr(value)), ignore_case), _escape(chr(value)))
        if op is constants.NOT_LITERAL:
            return Chars(ALPHABET - _fold(frozenset(chr(value)), ignore_case), f"[^{_escape(chr(value))}]")
        if op is constants.ANY:
            return Chars(ALPHABET if dotall else ALPHABET - {"\n"}, ".")
        if op is constants.IN:
            return self.char_class(value, ignore_case)
        if op is constants.CATEGORY:
            return Chars(_CATEGORY_CHARS.get(value, ALPHABET), _CATEGORIES.get(value, "?"))
        if op in _REPEATS or op is _POSSESSIVE:
            low, high, body = value
            inner = self.sequence(list(body), ignore_case, dotall)
            bound = None if high is constants.MAXREPEAT else int(high)
            suffix = _quantifier(low, bound) + (_REPEATS.get(op, "+"))
            return Repeat(low, bound, _single(inner), _group(inner) + suffix, possessive=op is _POSSESSIVE)
        if op is constants.SUBPATTERN:
            group, add_flags, del_flags, body = value
            case = (ignore_case or bool(add_flags & constants.SRE_FLAG_IGNORECASE)) and not (
                del_flags & constants.SRE_FLAG_IGNORECASE)
            dot = (dotall or bool(add_flags & constants.SRE_FLAG_DOTALL)) and not (del_flags & constants.SRE_FLAG_DOTALL)
            inner = self.sequence(list(body), case, dot)
            if group is None:
                return inner if len(inner.items) != 1 else inner.items[0]
            name = self.names.get(group)
            opening = f"(?P<{name}>" if name else "("
            return Seq(inner.items, opening + inner.text + ")") if len(inner.items) != 1 else _retext(
                inner.items[0], opening + inner.text + ")")
        if op is constants.BRANCH:
            branches = tuple(_single(self.sequence(list(branch), ignore_case, dotall)) for branch in value[1])
            return Alt(branches, "(?:" + "|".join(branch.text for branch in branches) + ")")
        if op is constants.AT:
            return Seq((), _AT.get(value, ""))
        if op in (constants.ASSERT, constants.ASSERT_NOT):
            direction, body = value
            inner = self.sequence(list(body), ignore_case, dotall)
            opening = {(1, True): "(?=", (1, False): "(?!", (-1, True): "(?<=", (-1, False): "(?<!"}[
                (1 if direction >= 0 else -1, op is constants.ASSERT)]
            # Zero-width: consumes nothing here, but its own body is checked.
            return Opaque(inner, opening + inner.text + ")", zero_width=True)
        if op is _ATOMIC:
            inner = self.sequence(list(value), ignore_case, dotall)
            return Opaque(inner, "(?>" + inner.text + ")")
        return Opaque(None, f"\\{value}" if op is constants.GROUPREF else "(?...)")

    def char_class(self, items: list[Any], ignore_case: bool) -> Chars:
        chars: set[str] = set()
        negate = False
        parts: list[str] = []
        for op, value in items:
            if op is constants.NEGATE:
                negate = True
            elif op is constants.LITERAL:
                chars.add(chr(value))
                parts.append(_escape(chr(value), in_class=True))
            elif op is constants.RANGE:
                low, high = value
                chars.update(char for char in ALPHABET if low <= ord(char) <= high)
                parts.append(f"{_escape(chr(low), True)}-{_escape(chr(high), True)}")
            elif op is constants.CATEGORY:
                chars |= _CATEGORY_CHARS.get(value, ALPHABET)
                parts.append(_CATEGORIES.get(value, "?"))
        folded = _fold(frozenset(chars), ignore_case)
        if len(parts) == 1 and not negate and parts[0].startswith("\\") and len(parts[0]) == 2 and parts[0][1].isalpha():
            text = parts[0]
        else:
            text = "[" + ("^" if negate else "") + "".join(parts) + "]"
        return Chars(ALPHABET - folded if negate else folded, text)


def _fold(chars: frozenset[str], ignore_case: bool) -> frozenset[str]:
    if not ignore_case:
        return chars
    return chars | {char.lower() for char in chars} | {char.upper() for char in chars if len(char.upper()) == 1}


def _escape(char: str, in_class: bool = False) -> str:
    if char == " ":
        return " "
    if not char.isprintable():
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\x{ord(char):02x}" if ord(char) < 256 else char)
    if in_class:
        return "\\" + char if char in "]\\^-" else char
    return re.escape(char)


def _quantifier(low: int, high: int | None) -> str:
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    if high is None:
        return f"{{{low},}}"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _single(seq: Seq) -> Node:
    return seq.items[0] if len(seq.items) == 1 else seq


def _group(seq: Seq) -> str:
    if len(seq.items) == 1 and (seq.text.startswith("(") or isinstance(seq.items[0], Chars)):
        return seq.text
    return "(?:" + seq.text + ")"


def _retext(node: Node, text: str) -> Node:
    if isinstance(node, Chars):
        return Chars(node.chars, text)
    if isinstance(node, Repeat):
        return Repeat(node.low, node.high, node.body, text, node.possessive)
    if isinstance(node, Alt):
        return Alt(node.branches, text)
    if isinstance(node, Opaque):
        return Opaque(node.body, text)
    return Seq(node.items, text)


# -- properties of nodes ---------------------------------------------------------------------


def consumed(node: Node) -> frozenset[str]:
    """Every character the node may consume."""
    if isinstance(node, Chars):
        return node.chars
    if isinstance(node, Seq):
        return frozenset().union(*(consumed(item) for item in node.items))
    if isinstance(node, Alt):
        return frozenset().union(*(consumed(branch) for branch in node.branches))
    if isinstance(node, Repeat):
        return consumed(node.body) if node.high != 0 else frozenset()
    if node.zero_width:
        return frozenset()
    return consumed(node.body) if node.body is not None else ALPHABET


def nullable(node: Node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Seq):
        return all(nullable(item) for item in node.items)
    if isinstance(node, Alt):
        return any(nullable(branch) for branch in node.branches)
    if isinstance(node, Repeat):
        return node.low == 0 or nullable(node.body)
    if node.zero_width:
        return True
    return nullable(node.body) if node.body is not None else True


def first(node: Node) -> frozenset[str]:
    """The characters a match of the node may start with."""
    if isinstance(node, Chars):
        return node.chars
    if isinstance(node, Seq):
        found: frozenset[str] = frozenset()
        for item in node.items:
            found |= first(item)
            if not nullable(item):
                break
        return found
    if isinstance(node, Alt):
        return frozenset().union(*(first(branch) for branch in node.branches))
    if isinstance(node, Repeat):
        return first(node.body) if node.high != 0 else frozenset()
    if node.zero_width:
        return frozenset()
    return first(node.body) if node.body is not None else ALPHABET


def last(node: Node) -> frozenset[str]:
    """The characters a match of the node may end with."""
    if isinstance(node, Seq):
        found: frozenset[str] = frozenset()
        for item in reversed(node.items):
            found |= last(item)
            if not nullable(item):
                break
        return found
    if isinstance(node, Alt):
        return frozenset().union(*(last(branch) for branch in node.branches))
    if isinstance(node, Repeat):
        return last(node.body) if node.high != 0 else frozenset()
    if isinstance(node, Opaque) and node.body is not None and not node.zero_width:
        return last(node.body)
    return first(node)


def blocks(node: Node, chars: frozenset[str]) -> bool:
    """True when every match of the node holds a character outside `chars`: a quantifier over
    `chars` cannot run across it."""
    if isinstance(node, Chars):
        return not node.chars & chars
    if isinstance(node, Seq):
        if not node.items and node.text == "\\b":
            # After a run of word characters a word boundary means a non-word character next.
            return bool(chars) and chars <= _WORD
        return any(blocks(item, chars) for item in node.items)
    if isinstance(node, Alt):
        return all(blocks(branch, chars) for branch in node.branches)
    if isinstance(node, Repeat):
        return node.low >= 1 and blocks(node.body, chars)
    if node.zero_width or node.body is None:
        return False
    return blocks(node.body, chars)


# -- the checks ------------------------------------------------------------------------------


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Seq):
        return node.items
    if isinstance(node, Alt):
        return node.branches
    if isinstance(node, Repeat):
        return (node.body,)
    if isinstance(node, Opaque) and node.body is not None:
        return (node.body,)
    return ()


def _check(node: Node, tail: bool) -> Iterator[Risk]:
    """`tail`: whether something that can fail follows the node (else a greedy match just ends)."""
    if isinstance(node, Repeat) and node.large:
        yield from _repeated(node)
    elif isinstance(node, Repeat) and not node.possessive and node.high is not None and node.high >= POLYNOMIAL:
        # `(.*?,){11}P`: a bounded count of a body that can split the text many ways costs
        # n**count on a line that fails; alternations multiply only by the count, so pass.
        yield from (risk for risk in _repeated(node) if risk.reason.startswith("nested"))
    if isinstance(node, Seq):
        yield from _adjacent(node, tail)
        for index, item in enumerate(node.items):
            yield from _check(item, tail or _fails_after(node.items[index + 1:]))
        return
    for child in _children(node):
        # A repeated body is followed by its next repetition; a lookaround's by the rest.
        yield from _check(child, tail if isinstance(node, Alt) else True)


def _fails_after(items: Sequence[Node]) -> bool:
    return any(not nullable(item) or item.text in ("$", "\\Z") for item in items)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


Trail = tuple[tuple[Seq, int], ...]


def _repeated(outer: Repeat) -> Iterator[Risk]:
    """Choices inside a repeated body that let two paths match the same text."""
    start = first(outer.body)
    for choice, trail in _choices(outer.body, ()):
        if isinstance(choice, Repeat):
            chars = consumed(choice)
            delimited = any(blocks(item, chars) for seq, index in trail for item in seq.items[index + 1:])
            if not delimited and chars & start:
                yield Risk(
                    _clip(outer.text),
                    f"nested quantifier: {_clip(choice.text)} inside a repeated group can split the same "
                    "text in exponentially many ways (catastrophic backtracking); end each repetition "
                    "with a character the inner part cannot match, or use a possessive quantifier or "
                    "atomic group",
                )
        else:
            pair = _ambiguous(choice, _follow(trail, start))
            if pair is not None:
                yield Risk(
                    _clip(outer.text),
                    "alternation under a quantifier whose branches can match the same text "
                    f"({_clip(pair[0].text) or '(empty)'} vs {_clip(pair[1].text) or '(empty)'}, after any "
                    "common prefix): each repetition may take either, so a failing match tries "
                    "exponentially many combinations; make the branches start differently",
                )


def _choices(node: Node, trail: Trail) -> Iterator[tuple[Repeat | Alt, Trail]]:
    """Unbounded quantifiers and alternations inside a repeated body, with the sequences that
    lead to each (what follows a choice decides whether it is ambiguous)."""
    if isinstance(node, Repeat):
        if node.large:
            yield node, trail
        elif not node.possessive:
            yield from _choices(node.body, trail)
    elif isinstance(node, Seq):
        for index, item in enumerate(node.items):
            yield from _choices(item, (*trail, (node, index)))
    elif isinstance(node, Alt):
        yield node, trail
        for branch in node.branches:
            yield from _choices(branch, trail)


def _follow(trail: Trail, start: frozenset[str]) -> frozenset[str]:
    """What may come right after a choice: the rest of its sequences, else the next repetition."""
    found: frozenset[str] = frozenset()
    for seq, index in reversed(trail):
        for item in seq.items[index + 1:]:
            found |= first(item)
            if not nullable(item):
                return found
    return found | start


def _ambiguous(alt: Alt, follow: frozenset[str]) -> tuple[Node, Node] | None:
    """Two branches that can match the same text, counting what follows the alternation.

    The `re` parser factors common prefixes (`a|aa` reads as `a(?:|a)`), so a shorter branch
    that is a prefix of a longer one is ambiguous only when what follows can take the rest."""
    branches = alt.branches
    for index, one in enumerate(branches):
        for other in branches[index + 1:]:
            left, right = _fixed(one), _fixed(other)
            if left is not None and right is not None:
                short, long = (left, right) if len(left) <= len(right) else (right, left)
                if not all(a & b for a, b in zip(short, long, strict=False)):
                    continue
                if len(short) == len(long) or long[len(short)] & follow:
                    return one, other
            elif (left == [] and first(other) & follow) or (right == [] and first(one) & follow):
                return one, other
            elif first(one) & first(other) or (nullable(one) and first(other) & follow) or (
                    nullable(other) and first(one) & follow):
                # A branch of variable length (`a?`, `\w+`) that can start like the other: both
                # can take the same text, as in `(a|a?)+`.
                return one, other
    return None


def _flat(seq: Seq) -> list[Node]:
    """A sequence with its groups opened: `(\\w+)(\\w+)` is two adjacent quantifiers."""
    items: list[Node] = []
    for item in seq.items:
        items.extend(_flat(item) if isinstance(item, Seq) and item.items else [item])
    return items


def _unbounded(node: Node) -> bool:
    # Bounded neighbours (`\w*[^:]{0,80}`) only multiply the work by their bound.
    return isinstance(node, Repeat) and node.high is None and not node.possessive


def _adjacent(seq: Seq, tail: bool) -> Iterator[Risk]:
    items = _flat(seq)
    for index, item in enumerate(items):
        if not _unbounded(item):
            continue
        for later in range(index + 1, len(items)):
            other = items[later]
            if _unbounded(other):
                # Ambiguous when the text at the split could go to either: the second can start
                # with what the first takes, and take what the first ends with (`(?:\w+/)*\w+`
                # is not: only the first takes "/"). It costs when a failure after them makes
                # the engine try every split; a second that only takes what the first does
                # (`\s*\s*`) is flagged anyway, as it is never needed.
                taken = consumed(item)
                redundant = consumed(other) <= taken
                ambiguous = bool(first(other) & taken) and bool(last(item) & consumed(other))
                if ambiguous and (redundant or tail or _fails_after(items[later + 1:])):
                    between = "".join(part.text for part in items[index:later + 1])
                    yield Risk(
                        _clip(between),
                        f"adjacent quantifiers {_clip(item.text)} and {_clip(other.text)} can both match "
                        "the same characters, so a failing match retries every split between them; "
                        "merge them or separate them by a character only one can match",
                    )
                break
            if not nullable(other) or blocks(other, consumed(item)):
                break


def _fixed(node: Node) -> list[frozenset[str]] | None:
    """The character sets of a fixed-length node, position by position; None when variable."""
    if isinstance(node, Chars):
        return [node.chars]
    if isinstance(node, Seq):
        sets: list[frozenset[str]] = []
        for item in node.items:
            if isinstance(item, Seq) and not item.items:
                continue
            part = _fixed(item)
            if part is None:
                return None
            sets.extend(part)
        return sets
    return None


__all__ = ["LARGE", "Risk", "risks"]
