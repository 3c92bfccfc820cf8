"""Log text is untrusted: what every output does to it before a person or a program sees it.

One function for every reporter, sink and alert: `clean(text)` (and `clean(text, lines=True)`
for prose that may keep its line breaks). It

1. strips terminal escape sequences (colours, cursor movement, titles) and their paste remnants,
2. redacts secrets (`redact`: the shapes in `secrets.toml`, each with samples, then a catch for
   long random tokens by their entropy),
3. escapes visibly every character that could move the cursor, reset or reprogram a terminal,
   reorder the text around it or hide in it: C0 and C1 controls, DEL, bidirectional controls
   (U+202E, U+2066-U+2069, U+200F, ...), zero-width and other format characters, line and
   paragraph separators, lone surrogates; in one-line fields (the default) newlines, carriage
   returns and tabs as well, so a value cannot forge a report line or a table row.

JSON output goes through `dumps`, which escapes the same characters as `\\uXXXX` (JSON already
escapes C0). HTML reporters escape markup after `clean` (Jinja2's autoescape). Readers use only
`strip_ansi` and `scrub` (no lone surrogates in a Record).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Sequence

from logsift.lazy import compile_lazily

# CSI (colours, cursor movement), OSC (titles, hyperlinks) and two-character ESC sequences.
_ANSI = compile_lazily(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# Remnants left when a paste dropped the ESC byte: "[36m(RayWorker pid=1)[0m". Digits required:
# a bare "[m" is far more often text ("pip install 'logsift[ml]'") than a reset that lost its ESC.
# Not before "]": "[5m]" is five minutes.
_ANSI_REMNANT = compile_lazily(r"\[\d{1,3}(?:;\d{1,3})*m(?!\])")

# Unicode's control (Cc), format (Cf), surrogate (Cs) and line/paragraph separator (Zl, Zp)
# characters; tests/test_sanitize.py checks this list against unicodedata.
_INVISIBLE = (
    "\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE_LINES = compile_lazily("[\x00-\x08\x0b-\x1f" + _INVISIBLE + "]")
_UNSAFE_FIELD = compile_lazily("[\x00-\x1f" + _INVISIBLE + "]")
_UNSAFE_JSON = compile_lazily("[" + _INVISIBLE + "]")
_SURROGATE = compile_lazily("[\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

REDACTED = "[REDACTED]"


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (and their paste remnants) from log text."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "m" in text and "[" in text:
        text = _ANSI_REMNANT.sub("", text)
    return text


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escape(text: str, lines: bool = False) -> str:
    """Every character that could act on a terminal or hide in the text, written out visibly
    (`\\x1b`, `\\u202e`); newlines too unless `lines`. Tabs stay in `lines` text."""
    return (_UNSAFE_LINES if lines else _UNSAFE_FIELD).sub(_visible, text)


def one_line(text: str) -> str:
    """Text for a single line (error messages, file names): escaped, not redacted."""
    return escape(strip_ansi(text))


def printable(text: str) -> str:
    """Text that cannot move a terminal's cursor or change its state; line breaks kept."""
    return escape(strip_ansi(text), lines=True)


def clean(text: str, lines: bool = False) -> str:
    """What every output shows of log text: escape sequences stripped, secrets redacted, and
    control, bidi and invisible characters escaped visibly (line breaks too, unless `lines`)."""
    return escape(redact(strip_ansi(text)), lines)


def clean_block(lines: Sequence[str]) -> list[str]:
    """`clean` of each of consecutive lines (an event's, a record's), redacted as one text: a
    secret that spans lines (a PEM private key printed line by line) is hidden on every line."""
    stripped = [strip_ansi(line) for line in lines]
    redacted = redact("\n".join(stripped)).split("\n")
    if len(redacted) != len(stripped):  # a shape took a line break with it: line by line, then
        redacted = [redact(line) for line in stripped]
    return [escape(line) for line in redacted]


def redact_block(texts: Sequence[str]) -> list[str]:
    """`redact` of consecutive texts (messages, which may hold line breaks) as one text (see
    clean_block), for JSON output."""
    redacted = redact("\n".join(texts)).split("\n")
    sizes = [text.count("\n") + 1 for text in texts]
    if len(redacted) != sum(sizes):
        return [redact(text) for text in texts]
    out, at = [], 0
    for size in sizes:
        out.append("\n".join(redacted[at:at + size]))
        at += size
    return out


def safe(text: str) -> str:
    """`clean` that keeps line breaks (the name earlier reporters use)."""
    return clean(text, lines=True)


def scrub(text: str) -> str:
    """No lone surrogates (from JSON `\\ud800` escapes): they cannot be encoded for output."""
    return _SURROGATE.sub("\ufffd", text) if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def dumps(value: Any, indent: int | None = 2) -> str:
    """JSON whose text has no raw control, bidi or invisible character and no lone surrogate
    (all written as `\\uXXXX`), so any terminal or parser can take it; other non-ASCII stays."""
    return _UNSAFE_JSON.sub(_json_escape, json.dumps(value, indent=indent, ensure_ascii=False))


# -- secrets -------------------------------------------------------------------------------------

SHAPES_FILE = Path(__file__).with_name("secrets.toml")


@dataclass(frozen=True, slots=True)
class Shape:
    """One kind of secret: a regex whose group `secret` is replaced, with samples that must be
    redacted and near misses that must not (tests/test_sanitize.py runs every one)."""

    name: str
    what: str
    pattern: re.Pattern[str]
    literals: tuple[str, ...]
    samples: tuple[str, ...]
    ok: tuple[str, ...]


@cache
def shapes() -> tuple[Shape, ...]:
    """The secret shapes of `secrets.toml`, in order."""
    import tomllib  # only when a file is parsed (start-up reads the cache)

    data = tomllib.loads(SHAPES_FILE.read_text(encoding="utf-8"))
    found = []
    for entry in data["secret"]:
        pattern = re.compile(entry["regex"])
        if "secret" not in pattern.groupindex:
            raise ValueError(f"{SHAPES_FILE}: secret shape {entry['name']!r} has no (?P<secret>...) group")
        found.append(Shape(entry["name"], entry["what"], pattern,
                           tuple(literal.lower() for literal in entry.get("literals", ())),
                           tuple(entry["samples"]), tuple(entry.get("ok", ()))))
    return tuple(found)


def _replace(match: re.Match[str]) -> str:
    """The match with its `secret` group (or `secret_bare`, the unquoted form) replaced; a secret
    over several lines (a PEM block) by one REDACTED a line, so that lines stay lines."""
    whole = match.group()
    for name in ("secret", "secret_bare"):
        if name in match.re.groupindex and match.start(name) >= 0:
            offset = match.start(name) - match.start()
            secret = match.group(name)
            hidden = "\n".join(REDACTED for _ in range(secret.count("\n") + 1))
            return whole[:offset] + hidden + whole[offset + len(secret):]
    return whole


# A token after `=` or `:` (or standing alone, when long) that looks random: base64 and
# URL-safe alphabets. Hex cannot reach the entropy asked for (at most 4 bits a character), so
# digests, boot ids and cursors are left alone; so are paths (a `/` or `.` first).
_TOKEN_AFTER = compile_lazily(r"(?<=[=:])[ \t]*[\"']?(?P<secret>[A-Za-z0-9+/_~.=-]{20,})")
_TOKEN_ALONE = compile_lazily(r"(?<![\w+/=.-])(?P<secret>[A-Za-z0-9+/_-]{40,}={0,2})(?![\w+/=.-])")
ENTROPY_AFTER = 4.0  # bits a character for a 20+ character token after = or :
ENTROPY_ALONE = 4.5  # for a 40+ character token on its own


def entropy(text: str) -> float:
    """Shannon entropy of the characters of `text`, in bits a character."""
    counts = Counter(text)
    size = len(text)
    return -sum(count / size * math.log2(count / size) for count in counts.values())


_SEGMENTS = compile_lazily(r"[^A-Za-z0-9]+")
_WORD = compile_lazily(r"[A-Z]?[a-z]{4,}")


def _random(token: str, threshold: float) -> bool:
    if token[:1] in "/." or REDACTED[1:-1] in token:
        return False
    # Names built of words (Qwen2.5-72B-Instruct, a path's folders) are not keys, however mixed.
    if any(_WORD.fullmatch(segment) for segment in _SEGMENTS.split(token)):
        return False
    classes = sum((any(c.islower() for c in token), any(c.isupper() for c in token), any(c.isdigit() for c in token)))
    return classes == 3 and entropy(token) >= threshold


def _entropy_replace(threshold: float) -> Any:
    def replace(match: re.Match[str]) -> str:
        token = match.group("secret")
        if not _random(token, threshold):
            return match.group()
        return _replace(match)

    return replace


_AFTER = _entropy_replace(ENTROPY_AFTER)
_ALONE = _entropy_replace(ENTROPY_ALONE)


def redact(text: str) -> str:
    """Replace tokens, keys and passwords with [REDACTED]: every shape of `secrets.toml`, then
    long random-looking tokens. Idempotent: redacting twice changes nothing more."""
    lowered = text.lower()
    for shape in shapes():
        if shape.literals and not any(literal in lowered for literal in shape.literals):
            continue
        text = shape.pattern.sub(_replace, text)
    if len(text) >= 20:
        if "=" in text or ":" in text:
            text = _TOKEN_AFTER.sub(_AFTER, text)
        if len(text) >= 40:
            text = _TOKEN_ALONE.sub(_ALONE, text)
    return text
