"""Mask the variable parts of a log line, and fingerprint what is left.

Shared by the learned fallback (features that generalise across machines) and by the grouping of
unclassified failures (forty copies of one error on three hosts are one entry). The masks are
data, in the order they apply (Drain3's `masking.py`): an earlier mask takes its text before a
later one sees it, so a UUID is not read as hex runs and numbers, nor an IP as a version.

A fingerprint records every part of the line and whether it counted (Sentry's grouping): masked
parts never count, with the reason ("masked: uuid"), so `explain()` can say why two lines group.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

__all__ = ["MASKS", "Fingerprint", "Mask", "Part", "fingerprint", "mask", "strip_prefix"]


@dataclass(frozen=True, slots=True)
class Mask:
    """One named masking instruction: text matching `pattern` becomes `replacement`."""

    name: str
    pattern: str
    replacement: str
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern))


# Order matters; see the module docstring. Every replacement is one whitespace-free token so that
# token-position clustering (Drain) sees one token where the value was.
MASKS: tuple[Mask, ...] = (
    Mask("timestamp",
         r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\b"
         r"|\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b",
         "<TIME>"),
    Mask("uuid", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "<UUID>"),
    Mask("url", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>)\]]+", "<URL>"),
    Mask("ip",
         r"(?<![\w.:])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.])"
         r"|(?<![\w:])(?:[0-9a-fA-F]{1,4}:){3,7}[0-9a-fA-F]{1,4}(?![\w:])",
         "<IP>"),
    # Unix paths with at least one component, or Windows drive paths; a slash after a word
    # character is a ratio or a unit ("tokens/s", "1/FAILURE"), not a path.
    Mask("path", r"(?<![\w.<>/-])(?:~|\.{1,2})?(?:/[\w.@+%~,=-]+)+/?|\b[A-Za-z]:\\[^\s'\":()]+", "<PATH>"),
    Mask("hex",
         r"\b0[xX][0-9a-fA-F]+\b|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}\b",
         "<HEX>"),
    # Three or more components, a "v" prefix or a local label: a version, not a decimal number.
    Mask("version",
         r"(?<![\w.])v?\d+\.\d+\.\d+(?:\.\d+)*(?:[+-][\w.]*[A-Za-z][\w.]*)?(?![\w.])"
         r"|(?<![\w.])v\d+(?:\.\d+)+(?![\w.])"
         r"|(?<![\w.])\d+(?:\.\d+)+\+[\w.]+",
         "<VERSION>"),
    # Digits not glued to a word's letters: "sm_120" -> "sm_<NUM>", "448MiB" -> "<NUM>MiB", but
    # "cu124" and "python3" stay (they name a thing, not a quantity).
    Mask("number", r"(?<![A-Za-z\d.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "<NUM>"),
)

# Application prefixes in front of the message (docker compose, vLLM/SGLang loggers, Ray actors,
# python logging): not part of what the line says.
_LEVEL = r"(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE)"
_PREFIXES = (
    re.compile(r"^[\w.-]+(?:-\d+)?\s+\|\s?"),
    re.compile(r"^\(\w+(?: rank=\d+)? pid=\d+(?:, ip=[\d.]+)?\)\s+"),
    # vLLM / SGLang: "ERROR 07-28 15:07:22 [core.py:632] ", "INFO 11-18 18:07:28 engine.py:366] "
    re.compile(r"^" + _LEVEL + r"\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+(?:\[[\w./ -]+:\d+\]|[\w./-]+:\d+\])\s?"),
    re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?(?: [A-Z]+\d*)*\]\s+"),
    # python logging: "2024-12-26 10:14:09,664 name 4247 ERROR ", "... - WARNING - name: "
    re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+(?:-\s+)?(?:[\w.]+\s+)?(?:\d+\s+)?"
               + _LEVEL + r"\b[\s:-]*"),
    # glog / c10: "E0611 12:00:00.123 1234 file.py:12] ", "[rank2]:[E1014 12:00:00.1 ProcessGroupNCCL.cpp:1] "
    re.compile(r"^(?:\[rank\d+\]:)?\[?[IWEF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)?\s+(?:\d+\s+)?[\w./-]+:\d+\]\s*"),
    # dmesg: "[ 1234.567890] ", "[Thu Jan  4 10:00:00 2024] "
    re.compile(r"^\[\s*\d+\.\d+\]\s*|^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]\s*"),
    # uvicorn and bare levels: "ERROR:    ", "WARNING:root:"
    re.compile(r"^" + _LEVEL + r":(?:[\w.]+:)?\s*"),
)


def strip_prefix(text: str) -> str:
    """The message without the application's own log prefix (several may be stacked)."""
    for _ in range(3):
        for prefix in _PREFIXES:
            found = prefix.match(text)
            if found is not None:
                text = text[found.end():]
                break
        else:
            return text
    return text


def mask(text: str, masks: tuple[Mask, ...] = MASKS) -> str:
    """The text with every masked value replaced by its placeholder (`<NUM>`, `<PATH>`...)."""
    pieces: list[str] = []
    position = 0
    for start, end, _, replacement in _masked_spans(text, masks):
        pieces.append(text[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of the line: literal text that counts, or a value that was masked and why."""

    text: str
    contributes: bool
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    key: str
    template: str
    parts: tuple[Part, ...]

    def explain(self) -> list[str]:
        lines = [f"fingerprint {self.key}: {self.template}"]
        for part in self.parts:
            if not part.contributes:
                lines.append(f"  ignored {part.text!r} ({part.hint})")
        return lines


def fingerprint(text: str, masks: tuple[Mask, ...] = MASKS) -> Fingerprint:
    """Which parts of a line identify it, and which were masked; equal keys group together."""
    body = strip_prefix(text.strip())
    parts: list[Part] = []
    if body is not text.strip() and len(body) < len(text.strip()):
        parts.append(Part(text.strip()[: len(text.strip()) - len(body)], False, "ignored: log prefix"))
    spans = _masked_spans(body, masks)
    position = 0
    pieces: list[str] = []
    for start, end, name, replacement in spans:
        if start > position:
            parts.append(Part(body[position:start], True))
            pieces.append(body[position:start])
        parts.append(Part(body[start:end], False, f"masked: {name}"))
        pieces.append(replacement)
        position = end
    if position < len(body):
        parts.append(Part(body[position:], True))
        pieces.append(body[position:])
    template = " ".join("".join(pieces).split())
    key = hashlib.sha1(template.encode("utf-8")).hexdigest()[:16]
    return Fingerprint(key, template, tuple(parts))


def _masked_spans(text: str, masks: tuple[Mask, ...]) -> list[tuple[int, int, str, str]]:
    """(start, end, mask name, placeholder) of every masked value, in text order.

    Masks apply in order and a later one must not see text an earlier one took: taken spans are
    blanked with NUL (which no mask matches) before the next mask runs.
    """
    taken: list[tuple[int, int, str, str]] = []
    work = text
    for instruction in masks:
        found = [
            (match.start(), match.end())
            for match in instruction.compiled.finditer(work)
            if match.end() > match.start() and "\0" not in match.group()
        ]
        if not found:
            continue
        pieces: list[str] = []
        position = 0
        for start, end in found:
            taken.append((start, end, instruction.name, instruction.replacement))
            pieces.append(work[position:start])
            pieces.append("\0" * (end - start))
            position = end
        pieces.append(work[position:])
        work = "".join(pieces)
    taken.sort()
    return taken
