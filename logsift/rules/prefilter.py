"""Which rules could match which lines, decided for a whole batch of lines at once.

A healthy line must cost next to nothing, and a regex per rule per line costs 30x grep. So the
literals that each rule requires are searched in one pass over a batch of messages joined into
one text: with a hyperscan database when the `hyperscan` wheel is installed, else with
`str.find` per literal over the lowercased batch (C speed, one pass per literal).
Only lines with a hit go on to the rule regexes.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from types import ModuleType
from typing import Iterable, Protocol, Sequence

hyperscan: ModuleType | None
try:
    import hyperscan
except ImportError:  # pragma: no cover - depends on the machine
    hyperscan = None

EMPTY: frozenset[int] = frozenset()


class Prefilter(Protocol):
    engine: str

    def scan(self, messages: Sequence[str]) -> list[frozenset[int]]:
        """For each message, the ids of the literals' owners (rules) that occur in it."""


def build_prefilter(literals: Iterable[tuple[str, int]], engine: str = "auto") -> Prefilter:
    """`literals` pairs a lowercase literal with the id of the rule that needs it."""
    pairs = sorted(set(literals))
    if engine in ("auto", "hyperscan") and hyperscan is not None and pairs:
        return HyperscanPrefilter(pairs)
    if engine == "hyperscan":
        raise RuntimeError("the hyperscan prefilter needs `pip install hyperscan`")
    return FindPrefilter(pairs)


def _starts(messages: Sequence[str], sizes: Iterable[int]) -> list[int]:
    # Offsets of each message in "\n".join(messages).
    return [0, *accumulate(size + 1 for size in sizes)][: len(messages)]


class FindPrefilter:
    engine = "find"

    def __init__(self, pairs: Sequence[tuple[str, int]]) -> None:
        owners: dict[str, set[int]] = {}
        for literal, owner in pairs:
            owners.setdefault(literal, set()).add(owner)
        self.owners = {literal: frozenset(ids) for literal, ids in owners.items()}

    def scan(self, messages: Sequence[str]) -> list[frozenset[int]]:
        text = "\n".join(messages).lower()
        starts: list[int] | None = None
        hits: dict[int, set[int]] = {}
        for literal, owners in self.owners.items():
            position = text.find(literal)
            while position >= 0:
                if starts is None:
                    starts = _starts(messages, map(len, messages))
                index = bisect_right(starts, position) - 1
                hits.setdefault(index, set()).update(owners)
                # Skip to the next message: one hit per literal per message is enough.
                next_start = starts[index + 1] if index + 1 < len(starts) else len(text)
                position = text.find(literal, next_start)
        result = [EMPTY] * len(messages)
        for index, owners_found in hits.items():
            result[index] = frozenset(owners_found)
        return result


class HyperscanPrefilter:
    engine = "hyperscan"

    def __init__(self, pairs: Sequence[tuple[str, int]]) -> None:
        literals = sorted({literal for literal, _ in pairs})
        index = {literal: number for number, literal in enumerate(literals)}
        owners: dict[int, set[int]] = {}
        for literal, owner in pairs:
            owners.setdefault(index[literal], set()).add(owner)
        self.owners = {number: frozenset(ids) for number, ids in owners.items()}
        assert hyperscan is not None
        self.database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        flags = hyperscan.HS_FLAG_CASELESS
        self.database.compile(
            expressions=[_hs_literal(literal) for literal in literals],
            ids=list(range(len(literals))),
            elements=len(literals),
            flags=[flags] * len(literals),
        )
        self.scratch = hyperscan.Scratch(self.database)

    def scan(self, messages: Sequence[str]) -> list[frozenset[int]]:
        text = "\n".join(messages)
        ascii_only = text.isascii()
        data = text.encode("ascii") if ascii_only else text.encode("utf-8", "surrogateescape")
        found: list[tuple[int, int]] = []

        def on_match(literal: int, start: int, end: int, flags: int, context: object) -> None:
            found.append((end, literal))

        self.database.scan(data, match_event_handler=on_match, scratch=self.scratch)
        result = [EMPTY] * len(messages)
        if not found:
            return result
        starts = _starts(messages, map(len, messages))  # in characters
        hits: dict[int, set[int]] = {}
        byte_at = char_at = 0
        for end, literal in sorted(found):
            if ascii_only:
                char_end = end
            else:
                # Hits are rare: turn byte offsets into character offsets by decoding only the
                # stretch since the previous hit (a literal always ends on a character boundary).
                char_at += len(data[byte_at:end].decode("utf-8", "surrogateescape"))
                byte_at, char_end = end, char_at
            line = bisect_right(starts, char_end - 1) - 1
            hits.setdefault(line, set()).update(self.owners[literal])
        for line, owners in hits.items():
            result[line] = frozenset(owners)
        return result


def _hs_literal(literal: str) -> bytes:
    return "".join(f"\\x{byte:02x}" for byte in literal.encode("utf-8")).encode("ascii")
