"""`logsift patterns list|check|test`, the regex risk analysis, and docs/patterns.md staying true."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsift.rules import regex_risk
from tests.helpers import ROOT, invoke

# A small library of two rules, written into tmp_path so that exact output stays stable while
# the bundled library grows. Wordings are uvicorn's and CPython's.
PORT_RULE = """\
title = "Port {port} is already in use"
severity = "critical"
priority = 80
explains = ["demo.traceback"]
explanation = "Another process already listens on port {port}."
remediation = ["Find it: `ss -ltnp 'sport = :{port}'`."]
avoid = ["Killing every python process on the host."]
references = ["https://man7.org/linux/man-pages/man7/ip.7.html"]

[defaults]
port = "the port"

# uvicorn
[[match]]
regex = '''\\[Errno 98\\] error while attempting to bind on address \\('[^']*', (?P<port>\\d+)\\): address already in use'''

# CPython's socket.bind
[[match]]
regex = '''OSError: \\[Errno 98\\] Address already in use'''
"""
PORT_SAMPLES = """\
# ruleid: demo.port-in-use {"port": "8000"}
ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use

# ruleid: demo.port-in-use
OSError: [Errno 98] Address already in use

# ok: demo.port-in-use
INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)
"""
TRACEBACK_RULE = """\
title = "Unhandled {exception}"
severity = "error"
priority = 5
explanation = "The service died of an exception that no rule knows."

[[match]]
regex = '''^(?P<exception>[A-Z]\\w*Error): '''
literals = ["error: "]
"""
TRACEBACK_SAMPLES = """\
# ruleid: demo.traceback {"exception": "ValueError"}
ValueError: invalid literal for int() with base 10: 'auto'
"""


def write_library(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo library as the only library (LOGSIFT_PATTERNS replaces the bundled one)."""
    root = write_library(tmp_path / "rules", {
        "demo/port-in-use.toml": PORT_RULE, "demo/port-in-use.log": PORT_SAMPLES,
        "demo/traceback.toml": TRACEBACK_RULE, "demo/traceback.log": TRACEBACK_SAMPLES,
    })
    monkeypatch.setenv("LOGSIFT_PATTERNS", str(root))
    return root


# -- help and the lazy command registry -----------------------------------------------------------


@pytest.mark.parametrize("args", [
    ("patterns", "--help"), ("patterns", "list", "--help"), ("patterns", "check", "--help"),
    ("patterns", "test", "--help"),
])
def test_help(args: tuple[str, ...]) -> None:
    code, out, _ = invoke(*args)
    assert code == 0
    assert out.startswith("Usage: logsift " + " ".join(args[:-1]))


def test_top_level_help_lists_commands_without_importing_them() -> None:
    code = (
        "import sys; from logsift.cli import run; run(['--help']);"
        "mods = [m for m in ('logsift.cli.patterns', 'logsift.cli.explain', 'logsift.cli.eval',"
        " 'logsift.check.library', 'logsift.check.corpus') if m in sys.modules];"
        "sys.stderr.write(repr(mods))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stderr == "[]"
    for name in ("patterns", "explain", "eval"):
        assert f"\n  {name} " in result.stdout


# -- list ------------------------------------------------------------------------------------------


def test_list_table(library: Path) -> None:
    code, out, _ = invoke("patterns", "list")
    assert code == 0
    assert out == (
        "id                severity      priority    regexes    samples  title\n"
        "----------------  ----------  ----------  ---------  ---------  -----------------------------\n"
        "demo.port-in-use  critical            80          2          2  Port {port} is already in use\n"
        "demo.traceback    error                5          1          1  Unhandled {exception}\n"
        "2 classes\n"
    )


def test_list_markdown(library: Path) -> None:
    code, out, _ = invoke("patterns", "list", "--markdown")
    assert code == 0
    assert out.startswith("# Failure classes\n")
    assert "| [`demo.port-in-use`](#demo-port-in-use) | critical   |         80 | Port {port} is already in use |" in out
    section = out[out.index('<a id="demo-port-in-use"></a>'):out.index("### `demo.traceback`")]
    assert section == (
        '<a id="demo-port-in-use"></a>\n\n'
        "### `demo.port-in-use`: Port {port} is already in use\n\n"
        "Severity **critical**, priority **80**. Rule file `rules/demo/port-in-use.toml`, 2 samples.\n\n"
        "Explains (these become symptoms when this class is found): [`demo.traceback`](#demo-traceback)\n\n"
        "**What it means**\n\nAnother process already listens on port {port}.\n\n"
        "**Matches**\n\n"
        "```regex\n\\[Errno 98\\] error while attempting to bind on address \\('[^']*', (?P<port>\\d+)\\): "
        "address already in use\n```\n"
        "```regex\nOSError: \\[Errno 98\\] Address already in use\n```\n\n"
        "**What to do**\n\n1. Find it: `ss -ltnp 'sport = :{port}'`.\n\n"
        "**Avoid**\n\n- Killing every python process on the host.\n\n"
        "**References**\n\n- <https://man7.org/linux/man-pages/man7/ip.7.html>\n\n"
        '<a id="demo-traceback"></a>\n\n'
    )


def test_list_honours_patterns_option(library: Path, tmp_path: Path) -> None:
    extra = write_library(tmp_path / "mine", {"demo/traceback.toml": TRACEBACK_RULE.replace("priority = 5", "priority = 7")})
    code, out, _ = invoke("patterns", "list", "--patterns", str(extra))
    assert code == 0
    assert "demo.traceback    error                7" in out


def test_docs_catalogue_is_up_to_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOGSIFT_PATTERNS", raising=False)
    code, out, err = invoke("patterns", "list", "--markdown")
    assert code == 0, err
    docs = ROOT / "docs" / "patterns.md"
    assert docs.exists() and docs.read_text(encoding="utf-8") == out, (
        "docs/patterns.md is out of date: run `.venv/bin/logsift patterns list --markdown > docs/patterns.md`"
    )


# -- check -----------------------------------------------------------------------------------------


def test_check_clean_library(library: Path) -> None:
    code, out, err = invoke("patterns", "check")
    assert (code, out, err) == (0, "", "2 rule files, 0 problems\n")


def test_check_bundled_library_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOGSIFT_PATTERNS", raising=False)
    code, out, err = invoke("patterns", "check")
    assert code == 0, out + err


VALID_HEAD = 'title = "t"\nseverity = "error"\npriority = 50\nexplanation = "e"\n'


def test_check_reports_every_broken_file(library: Path, tmp_path: Path) -> None:
    kernel_line = ("Out of memory: Killed process 2171 (python3) total-vm:81234567kB, anon-rss:61234567kB, "
                   "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:123456kB oom_score_adj:0")
    bad = write_library(tmp_path / "bad", {
        # line 2: a value is missing
        "broken/toml.toml": 'title = "t"\nseverity =\n',
        # line 6: an unbalanced group
        "broken/regex.toml": VALID_HEAD + "[[match]]\nregex = '''\\[Errno 98\\] (Address already in use'''\n",
        "broken/no-sample.toml": VALID_HEAD + "[[match]]\nregex = '''Address already in use'''\n",
        # line 6: (\w+\s?)+ can split "python3" in many ways
        "broken/nested.toml": VALID_HEAD + "[[match]]\nregex = '''Killed process \\d+ \\((?P<name>(?:\\w+\\s?)+)\\)'''\n",
        "broken/nested.log": f"# ruleid: broken.nested\n{kernel_line}\n",
        "broken/unknown-explains.toml": VALID_HEAD + 'explains = ["broken.nowhere"]\n'
        "[[match]]\nregex = '''Killed process \\d+'''\n",
        "broken/unknown-explains.log": f"# ruleid: broken.unknown-explains\n{kernel_line}\n",
        "broken/Camel.toml": VALID_HEAD + "[[match]]\nregex = '''Killed process'''\n",
        "broken/missed.toml": VALID_HEAD + "[[match]]\nregex = '''Killed process \\d+ \\(python\\)'''\n",
        "broken/missed.log": f"# ruleid: broken.missed\n{kernel_line}\n",
        "broken/capture.toml": VALID_HEAD + "[[match]]\nregex = '''Killed process (?P<pid>\\d+)'''\n",
        "broken/capture.log": f'# ruleid: broken.capture {{"pid": "2172"}}\n{kernel_line}\n',
        "broken/unused-match.toml": VALID_HEAD + "[[match]]\nregex = '''Killed process \\d+'''\n"
        "[[match]]\nregex = '''oom-kill:constraint=CONSTRAINT_NONE'''\n",
        "broken/unused-match.log": f"# ruleid: broken.unused-match\n{kernel_line}\n",
        # demo.port-in-use (priority 80) wins on this sample line
        "broken/loser.toml": VALID_HEAD.replace("50", "1") + "[[match]]\nregex = '''Address already in use'''\n",
        "broken/loser.log": "# ruleid: broken.loser\nOSError: [Errno 98] Address already in use\n",
        "broken/orphan.log": f"# ruleid: broken.orphan\n{kernel_line}\n",
    })
    code, out, err = invoke("patterns", "check", "--patterns", str(bad))
    assert code == 1
    lines = out.splitlines()
    b = f"{bad}/broken"

    def has(prefix: str, *parts: str) -> None:
        found = [line for line in lines if line.startswith(prefix)]
        assert found, f"no line starting with {prefix!r} in:\n{out}"
        assert any(all(part in line for part in parts) for line in found), found

    has(f"{b}/toml.toml:2: ", "invalid TOML")
    has(f"{b}/regex.toml:6: ", "regex does not compile")
    has(f"{b}/no-sample.toml:1: ", "no sample file no-sample.log beside the rule")
    has(f"{b}/nested.toml:6: ", "[[match]] #1: nested quantifier: \\w+", "(?P<name>(?:\\w+\\s?)+)")
    has(f"{b}/unknown-explains.toml:5: ", "explains unknown class 'broken.nowhere'")
    has(f"{b}/Camel.toml:1: ", "name 'Camel' of id 'broken.Camel' is not kebab-case")
    has(f"{b}/missed.log:1: ", "broken.missed missed this sample")
    has(f"{b}/capture.log:1: ", "capture pid='2171', expected '2172'")
    has(f"{b}/unused-match.toml:8: ", "[[match]] #2 has no sample that it matches")
    has(f"{b}/loser.log:1: ", "demo.port-in-use wins over broken.loser")
    has(f"{b}/orphan.log:1: ", "sample file with no rule orphan.toml beside it")
    assert all(line.startswith(f"{b}/") for line in lines), out
    assert err == f"12 rule files, {len(lines)} problems\n"


def test_check_usage_error_for_a_missing_directory(library: Path, tmp_path: Path) -> None:
    code, out, err = invoke("patterns", "check", "--patterns", str(tmp_path / "nowhere"))
    assert code == 2 and out == ""
    assert err == f"logsift: error: {tmp_path / 'nowhere'}: rule directory does not exist\n"


# -- test ------------------------------------------------------------------------------------------


LOG = """\
INFO:     Started server process [4242]
INFO:     Waiting for application startup.
ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use
ERROR:    [Errno 98] error while attempting to bind on address ('::', 8000, 0, 0): address already in use
INFO:     Waiting for application shutdown.
"""


def test_test_shows_hits_per_regex(library: Path, tmp_path: Path) -> None:
    log = tmp_path / "uvicorn.log"
    log.write_text(LOG, encoding="utf-8")
    code, out, _ = invoke("patterns", "test", "demo.port-in-use", str(log), "--missed")
    assert code == 0
    assert out == (
        f"Rule: demo.port-in-use ({library}/demo/port-in-use.toml)\n"
        f"Log:  {log}\n"
        "\n"
        "[[match]] #1 (line 15): 1 hit\n"
        "  \\[Errno 98\\] error while attempting to bind on address \\('[^']*', (?P<port>\\d+)\\): address already in use\n"
        "  3 | [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n"
        "    | port='8000'\n"
        "[[match]] #2 (line 19): 0 hits\n"
        "  OSError: \\[Errno 98\\] Address already in use\n"
        "\n"
        "Missed: lines the prefilter selected for this rule that no [[match]] regex matched\n"
        "  4 | [Errno 98] error while attempting to bind on address ('::', 8000, 0, 0): address already in use\n"
        "\n"
        "Lines: 5, matched: 1, missed: 1\n"
    )
    # Without --missed the missed lines are counted, not listed.
    code, out, _ = invoke("patterns", "test", "demo.port-in-use", str(log))
    assert code == 0 and "('::', 8000, 0, 0)" not in out and out.endswith("Lines: 5, matched: 1, missed: 1\n")


def test_test_takes_a_rule_file_and_exits_1_without_hits(library: Path, tmp_path: Path) -> None:
    log = tmp_path / "quiet.log"
    log.write_text("INFO:     Application startup complete.\n", encoding="utf-8")
    code, out, _ = invoke("patterns", "test", str(library / "demo" / "traceback.toml"), str(log))
    assert code == 1
    assert out.endswith("Lines: 1, matched: 0, missed: 0\n")
    assert out.startswith("Rule: demo.traceback (")


def test_test_flags_lines_the_prefilter_would_skip(library: Path, tmp_path: Path) -> None:
    # Literals that the regex does not need: the matcher would never see this line.
    rule = library / "demo" / "odd.toml"
    rule.write_text(TRACEBACK_RULE.replace('literals = ["error: "]', 'literals = ["exception"]'), encoding="utf-8")
    log = tmp_path / "app.log"
    log.write_text("KeyError: 'model'\n", encoding="utf-8")
    code, out, _ = invoke("patterns", "test", str(rule), str(log))
    assert code == 0
    assert "(the prefilter would skip this line: none of its literals 'exception' occur in it)" in out


def test_test_unknown_rule_is_a_usage_error(library: Path, tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("x\n", encoding="utf-8")
    code, out, err = invoke("patterns", "test", "demo.port", str(log))
    assert (code, out) == (2, "")
    assert err == "logsift: error: no rule 'demo.port'; did you mean demo.port-in-use?\n"
    code, _, err = invoke("patterns", "test", "demo.port-in-use", str(tmp_path / "missing.log"))
    assert code == 2 and "missing.log: no such file" in err


# -- the regex risk analysis -------------------------------------------------------------------------


@pytest.mark.parametrize("source", [
    r"(a+)+", r"(.*)*", r"(\w+\s?)+", r"(\s*\w+)+$", r"(?:.+,)+", r"((a+)+)+",
    r"\s*\s*", r".*.*", r"x(?P<a>\w+)(?P<b>\w+)y", r"\w+_?\w+",
    r"(a|aa)+", r"(a|a)+", r"(?:\d\w|\w\d)+", r"(?:\d|\w\w)+",
])
def test_risky_constructs_are_flagged(source: str) -> None:
    assert regex_risk.risks(source), source


@pytest.mark.parametrize("source", [
    # each repetition ends with a character the inner quantifier cannot take
    r"([A-Za-z_]\w*\.)*", r"(?:\d+\.)+", r"(?:\S+\s+)+", r"(;\w+a)+",
    # branches that cannot match the same text
    r"(?:foo|bar)+", r"(?:ab|ac)+", r"(?:ab|a)+", r"(foo|fo)+",
    # atomic and possessive: no backtracking into them
    r"(?>a+)+", r"a++a",
    # bounded or separated neighbours
    r".*foo.*", r"\w+\s+\w+", r"cudaMalloc\w*[^:\n]{0,80}: out of memory", r"[^\s:]*/bin/nvcc",
    r"^(?:[\w ]*\| )?(?P<exception>(?:[A-Za-z_]\w*\.)*[A-Z]\w*Error)(?:: (?P<detail>.{0,300}))?$",
    # syntax only `regex` knows is not analysed
    r"\p{L}+",
])
def test_safe_constructs_are_not_flagged(source: str) -> None:
    assert regex_risk.risks(source) == [], source


def test_risk_names_the_construct_and_the_reason() -> None:
    [risk] = regex_risk.risks(r"Killed process \d+ \((?P<name>(?:\w+\s?)+)\)")
    assert risk.construct == r"(?P<name>(?:\w+\s?)+)"
    assert str(risk).startswith(r"nested quantifier: \w+ inside a repeated group")
    [risk] = regex_risk.risks(r"error:\s*\s*(?P<detail>.*)")
    assert risk.construct == r"\s*\s*"
    assert risk.reason.startswith(r"adjacent quantifiers \s* and \s* can both match")
