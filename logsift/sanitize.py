"""Log text is untrusted: make it safe to print, and keep secrets out of reports and alerts."""

from __future__ import annotations

import re

# CSI (colours, cursor movement), OSC (titles, hyperlinks) and lone ESC sequences.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# Remnants left when a paste dropped the ESC byte: "[36m(RayWorker pid=1)[0m".
_ANSI_REMNANT = re.compile(r"\[(?:\d{1,3}(?:;\d{1,3})*)?m(?=\S|$)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters that reorder or hide text where it is shown (bidirectional overrides and isolates,
# "Trojan Source"; zero-width marks): a log line must read as it was written.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")

_SECRETS: tuple[tuple[re.Pattern[str], str], ...] = (
    # user:password@ in URLs
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), r"\1[REDACTED]@"),
    # Hugging Face, OpenAI, GitHub, Slack, AWS tokens
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), "hf_[REDACTED]"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"), "sk-[REDACTED]"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"), "gh_[REDACTED]"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"), "xox-[REDACTED]"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "AKIA[REDACTED]"),
    # Authorization headers and key=value secrets
    (re.compile(r"(?i)\b(authorization:\s*(?:bearer|basic|token)\s+)\S+"), r"\1[REDACTED]"),
    (
        re.compile(
            r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|"
            r"hf_token|hugging_face_hub_token|token)\s*[=:]\s*)(['\"]?)[^\s'\",;]{4,}\2"
        ),
        r"\1\2[REDACTED]\2",
    ),
)


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (and their paste remnants) from log text."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "m" in text and "[" in text:
        text = _ANSI_REMNANT.sub("", text)
    return text


def printable(text: str) -> str:
    """Text that cannot move a terminal's cursor or change its state."""
    text = strip_ansi(text)
    text = _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
    return _INVISIBLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def redact(text: str) -> str:
    """Replace tokens, keys and passwords with [REDACTED]."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def safe(text: str) -> str:
    """What every reporter shows of a log line: printable and redacted."""
    return redact(printable(text))
