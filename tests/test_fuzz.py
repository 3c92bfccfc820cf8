"""Bounded fuzzing: hypothesis grammars for text, JSON, export and verbose input, and mutations of
the fixtures. Whatever the bytes, a diagnosis either comes back or raises a LogsiftError (a one-line
error, exit 2), and no output mode writes a raw control or bidi character. About a minute in all.

A failing example found here is kept under fixtures/fuzz/ (its README says where each came from)
and replayed by test_fuzz_regressions, so it stays fixed.
"""

from __future__ import annotations

import io
import json
import random
import re
import struct
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import logsift  # noqa: E402
from logsift.exceptions import LogsiftError  # noqa: E402
from logsift.report import REGISTRY as REPORTERS  # noqa: E402
from logsift.report.common import RenderOptions  # noqa: E402
from logsift.rules import load_rules  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RULES = load_rules()
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
FUZZ = settings(max_examples=40, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Words that steer the input into the code that matters: systemd's lifecycle, tracebacks,
# build output, NCCL, rule literals, secrets, and hostile characters.
WORDS = [
    "Started x.service - X.", "x.service: Main process exited, code=exited, status=1/FAILURE",
    "x.service: Failed with result 'exit-code'.", "Traceback (most recent call last):",
    '  File "/srv/app.py", line 8, in f', "RuntimeError: CUDA error: out of memory", "NCCL WARN",
    "fatal error: curand.h: No such file or directory", "/dev/null/bin/nvcc: not found", "[1/3] nvcc",
    "SM 12.x requires CUDA >= 12.9", "password=hunter2", "Bearer abcdef0123456789", "\x1b[31m", "\x1bc",
    "\u202e", "\u2066", "\r", "\x00", "\x9b", "\ud800", "\n", " ", "[99999999999999999999.0]", "-- Boot ",
]
MESSAGE = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=12)), max_size=8).map("".join)
PREFIX = st.sampled_from([
    "May 25 20:00:0{s} h python[1{p}]: ", "2026-05-25T20:00:0{s}+0000 h systemd[1]: ", "[  10{s}.5] h python[{p}]: ",
    "1779739862.{s} h python[{p}]: ", "Mon 2026-05-25 20:00:0{s} UTC h python[{p}]: ", "", "(Worker pid={p}) ",
])


def _render_all(report: logsift.Report) -> None:
    for name, render in REPORTERS.items():
        out = io.StringIO()
        render(report, out, RenderOptions(color=name == "terminal"))
        text = out.getvalue()
        if name == "terminal":
            text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # logsift's own colours
        assert RAW.search(text) is None, (name, RAW.search(text))
        text.encode("utf-8")


def _diagnose(data: bytes, **options: object) -> None:
    try:
        report = logsift.diagnose(io.BytesIO(data), model="off", rules=RULES, **options)  # type: ignore[arg-type]
    except LogsiftError as error:
        assert "\n" not in str(error).strip()
        return
    _render_all(report)


@FUZZ
@given(st.lists(st.tuples(PREFIX, st.integers(0, 9), st.integers(0, 99), MESSAGE), max_size=30))
def test_text_grammar(lines: list[tuple[str, int, int, str]]) -> None:
    text = "\n".join(prefix.format(s=second, p=pid) + message for prefix, second, pid, message in lines)
    _diagnose(text.encode("utf-8", "surrogatepass"))


JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-300, 300), MESSAGE),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10,
)
FIELD = st.sampled_from(["MESSAGE", "_PID", "_HOSTNAME", "_SYSTEMD_UNIT", "UNIT", "SYSLOG_IDENTIFIER", "PRIORITY",
                         "__REALTIME_TIMESTAMP", "__CURSOR", "_SYSTEMD_INVOCATION_ID", "X"])


@FUZZ
@given(st.lists(st.dictionaries(FIELD, JSON_VALUE, max_size=8), max_size=15),
       st.sampled_from(["", "\x1e", "data: "]), st.booleans())
def test_json_grammar(entries: list[dict[str, object]], lead: str, pretty: bool) -> None:
    if pretty:
        text = "\n".join(json.dumps(entry, indent=1) for entry in entries)
    else:
        text = "\n".join(lead + json.dumps(entry) for entry in entries)
    _diagnose(text.encode("utf-8", "surrogatepass"))


EXPORT_VALUE = st.binary(max_size=40) | MESSAGE.map(lambda text: text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(st.lists(st.lists(st.tuples(FIELD, EXPORT_VALUE, st.one_of(st.none(), st.integers(0, 1 << 40))),
                         max_size=6), max_size=12))
def test_export_grammar(entries: list[list[tuple[str, bytes, int | None]]]) -> None:
    out = bytearray()
    for entry in entries:
        for name, value, claim in entry:
            if claim is None and b"\n" not in value:
                out += name.encode() + b"=" + value + b"\n"
            else:  # binary form, sometimes with a length that lies
                size = len(value) if claim is None or claim % 3 else claim
                out += name.encode() + b"\n" + struct.pack("<Q", size) + value + b"\n"
        out += b"\n"
    _diagnose(bytes(out), input_format="export")
    _diagnose(bytes(out))


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 9), st.lists(st.tuples(FIELD, MESSAGE), max_size=6)), max_size=10))
def test_verbose_grammar(entries: list[tuple[int, list[tuple[str, str]]]]) -> None:
    lines = []
    for second, fields in entries:
        lines.append(f"Mon 2026-05-25 20:00:0{second}.000000 UTC [s=1;i={second};b=2;m=3;t=652a9fa53a3c0;x=4]")
        for name, value in fields:
            first, *rest = value.split("\n")
            lines.append(f"    {name}={first}")
            lines.extend(" " * (len(name) + 5) + more for more in rest)
    _diagnose("\n".join(lines).encode("utf-8", "surrogatepass"))


FIXTURES = [ROOT / "fixtures" / "seed-incident" / "journal.txt", ROOT / "fixtures" / "seed-incident" / "journal.export",
            *sorted((ROOT / "fixtures" / "scenarios").glob("*/journal.txt"))[:6]]


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIXTURES), st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_mutated_fixtures(path: Path, seed: int, count: int) -> None:
    data = bytearray(path.read_bytes())
    chance = random.Random(seed)
    for _ in range(count):
        where = chance.randrange(len(data) + 1)
        action = chance.choice(["flip", "insert", "delete", "cut", "noise-line"])
        if action == "flip" and where < len(data):
            data[where] ^= 1 << chance.randrange(8)
        elif action == "insert":
            data[where:where] = bytes(chance.randrange(256) for _ in range(chance.randrange(1, 9)))
        elif action == "delete":
            del data[where:where + chance.randrange(1, 64)]
        elif action == "cut":
            del data[where:]
        else:
            data[where:where] = chance.choice([b"garbage\n", b"\0" * 16 + b"\n", b"\xef\xbb\xbf", b"\r", b"\x1b]0;x\x07"])
    _diagnose(bytes(data))


REGRESSIONS = sorted((ROOT / "fixtures" / "fuzz").glob("*.bin"))


@pytest.mark.parametrize("path", REGRESSIONS, ids=[path.name for path in REGRESSIONS])
def test_fuzz_regressions(path: Path) -> None:
    _diagnose(path.read_bytes())
