"""`logsift report` (Markdown): the golden post-mortem of each report fixture, the story it must
tell, the command's options and errors, and log text that must not become Markdown or HTML.

Golden files: fixtures/seed-incident/expected.md and fixtures/reports/<name>/expected.md. After a
deliberate change of wording, `LOGSIFT_BLESS=1 make test` rewrites them; review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from logsift import __version__
from tests.helpers import FIXTURES, ROOT, invoke

REPORTS = FIXTURES / "reports"
GOLDEN = {
    "seed-incident": FIXTURES / "seed-incident",
    **{name: REPORTS / name for name in ("still-failing", "crash-loop", "two-hosts", "healthy-warning")},
}


def _markdown(*args: str, input: bytes | None = None) -> tuple[int, str, str]:
    return invoke("report", "--utc", *args, input=input)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_markdown(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the report names the file as given: keep it relative
    folder = GOLDEN[name]
    code, out, err = _markdown(str((folder / "journal.txt").relative_to(ROOT)))
    assert code == 1, err
    actual = out.replace(f"logsift {__version__}", "logsift <version>")
    path = folder / "expected.md"
    if os.environ.get("LOGSIFT_BLESS"):
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8"), f"{path} differs; re-bless with LOGSIFT_BLESS=1 if intended"


def test_seed_story() -> None:
    _, out, _ = _markdown(str(FIXTURES / "seed-incident" / "journal.txt"))
    assert "resolved at 2026-05-25 21:08:22 UTC, down 1h 06m" in out
    timeline = _section(out, "### Timeline")
    causes = re.findall(r"^\| (\d) \| .*?\| `([a-z.-]+)`", timeline, re.M)
    assert causes == [("1", "cuda.toolkit-too-old-for-arch"), ("2", "cuda.nvcc-not-found"), ("3", "cuda.header-missing")]
    assert "| 4 | 2026-05-25 21:08:22 UTC (after a daemon-reload) | - | healthy (ready after 8m 47s)" in timeline
    changed = _section(out, "### What changed between attempts")
    rows = {line.split(" | ")[0].strip("| "): line for line in changed.splitlines() if re.match(r"\| \d ", line)}
    assert "**`/dev/null`** (first shown)" in rows["2"]
    assert "**`/usr/local/cuda-13.0`** (was `/dev/null`)" in rows["3"]
    assert "(not shown)" in rows["1"]
    assert "- Run 2: CUDA\\_HOME `/dev/null` first shown (line 224)" in changed
    assert "- Run 3: CUDA\\_HOME changed from `/dev/null` to `/usr/local/cuda-13.0` (line 333)" in changed
    fix = _section(out, "### The fix")
    assert "systemd reloaded its unit files before it (2026-05-25 21:08:13 UTC, line 348)" in fix
    symptoms = _section(out, "### Symptoms, not causes")
    assert "`systemd.unit-failed` | 1, 2, 3 |" in symptoms
    assert "a consequence of cuda.toolkit-too-old-for-arch" in symptoms


def test_crash_loop_folds_into_one_row() -> None:
    _, out, _ = _markdown(str(REPORTS / "crash-loop" / "journal.txt"))
    timeline = _section(out, "### Timeline")
    rows = [line for line in timeline.splitlines() if line.startswith("| 1")]
    assert len(rows) == 1 and rows[0].startswith("| 1-40 (40 runs) |")
    assert "#### Runs 1-40 (40 runs alike): `python.module-missing`" in out
    assert out.count("**What it means.**") == 1
    assert "failed 40 times" in out and "still failing" in out


def test_two_hosts_same_cause() -> None:
    _, out, _ = _markdown(str(REPORTS / "two-hosts" / "journal.txt"))
    assert "- The same cause, `cuda.nvcc-not-found`, took jit-ext.service down on 2 hosts: h200-a, h200-b." in out
    assert "## Incident 1: jit-ext.service on h200-a" in out and "## Incident 2: jit-ext.service on h200-b" in out
    # The explanation is given once; the second host's section points back to it.
    assert out.count("**What it means.**") == 1
    assert "What it means and what to do: as for incident 1, runs 1-2 above." in out
    fix = _section(out, "### The fix")
    assert "- CUDA\\_HOME `/usr/local/cuda` (line 140)" in fix


def test_warning_in_the_healthy_run_stays_a_finding() -> None:
    _, out, _ = _markdown(str(REPORTS / "healthy-warning" / "journal.txt"))
    findings = _section(out, "### Findings that did not stop the service")
    assert "| 16 | kv-server.service | `cuda.out-of-memory` | 1 |" in findings
    timeline = _section(out, "### Timeline")
    assert "| 2 | 2026-12-01 12:02:11 UTC (after a daemon-reload) | - | healthy (ready after 3s) | - | - |" in timeline
    assert "resolved at" in out
    fix = _section(out, "### The fix")
    assert "`cuda.out-of-memory` showed up in the healthy run too, as a finding that did not stop it" in fix


def test_triage_output_markdown_is_the_same_report() -> None:
    seed = str(FIXTURES / "seed-incident" / "journal.txt")
    code, triage, _ = invoke("-o", "markdown", "--utc", seed)
    assert code == 1
    assert triage == _markdown(seed)[1]


def test_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "postmortem.html"
    target.write_text("old")
    code, out, err = invoke("report", "-o", "html", "--write", str(target), str(FIXTURES / "seed-incident" / "journal.txt"))
    assert code == 1 and out == ""
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert f"wrote {target}" in err
    assert [path.name for path in tmp_path.iterdir()] == ["postmortem.html"], "no temporary file left behind"


def test_write_into_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    code, out, err = invoke("report", "--write", str(tmp_path / "nope" / "r.md"), str(FIXTURES / "seed-incident" / "journal.txt"))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "no such directory" in err


def test_missing_input_file_is_one_line() -> None:
    code, _, err = invoke("report", "/nonexistent/journal.txt")
    assert code == 2 and "Traceback" not in err and err.strip().count("\n") == 0


def test_unit_filter_and_healthy_input(tmp_path: Path) -> None:
    code, out, _ = _markdown("-u", "nothing-here", str(FIXTURES / "seed-incident" / "journal.txt"))
    assert code == 0 and "No incidents" in out
    code, out, _ = _markdown(str(FIXTURES / "healthy" / "ollama-start.txt"))
    assert code == 0 and "No incidents" in out


def test_help() -> None:
    code, out, _ = invoke("report", "--help")
    assert code == 0 and "--write FILE" in out and "[markdown|html]" in out
    code, out, _ = invoke("--help")
    assert "report" in out


# -- log text that must stay text -------------------------------------------------------------

HOSTILE = [
    "2026-05-25T20:11:02+0000 gpu<b>7</b> systemd[1]: Started evil.service - Evil.",
    "2026-05-25T20:11:05+0000 gpu<b>7</b> python3[4242]: Traceback (most recent call last):",
    '2026-05-25T20:11:05+0000 gpu<b>7</b> python3[4242]:   File "/srv/<img src=x onerror=alert(1)>.py", line 1, in <module>',
    "2026-05-25T20:11:05+0000 gpu<b>7</b> python3[4242]:     import evil  # [x](javascript:alert(2)) ``` *bold* | cell",
    "2026-05-25T20:11:05+0000 gpu<b>7</b> python3[4242]: RuntimeError: Error building extension 'evil'",
    "2026-05-25T20:11:05+0000 gpu<b>7</b> python3[4242]: /bin/sh: 1: /<script>alert(1)</script>`x`|y\u202e\x1b[31m/bin/nvcc: "
    "not found",
    "2026-05-25T20:11:06+0000 gpu<b>7</b> systemd[1]: evil.service: Main process exited, code=exited, status=1/FAILURE",
]


def test_hostile_text_renders_as_text(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    journal = tmp_path / "hostile.txt"
    journal.write_text("\n".join(HOSTILE) + "\n", encoding="utf-8")
    code, out, _ = _markdown(str(journal))
    assert code == 1
    assert "\x1b" not in out and "\u202e" not in out and "\\u202e" in out  # stripped, the override shown
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(out)
    assert re.search(r"<(?:script|img|b)\b", html) is None, "log text became HTML"
    assert "<a " not in html.split("References:")[0], "no link but the rule's references"
    assert "<em>bold</em>" not in html and "<strong>bold</strong>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text
    assert "gpu&lt;b&gt;7&lt;/b&gt;" in html
    # The table of runs keeps its columns although the title holds `|` and backticks.
    table = re.search(r"<h3>Timeline</h3>\s*<table>(.*?)</table>", html, re.S)
    assert table is not None
    for row in re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S):
        assert len(re.findall(r"<t[hd]>", row)) == 6


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    level = heading.split(" ")[0]
    rest = text[start + len(heading):]
    end = re.search(rf"^#{{1,{len(level)}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


def test_only_the_html_report_imports_jinja2() -> None:
    import subprocess
    import sys

    probe = ("import sys; from logsift.cli import run; run(sys.argv[1:]); "
             "print('jinja2' in sys.modules, file=sys.stderr)")
    seed = str(FIXTURES / "seed-incident" / "journal.txt")
    loaded = {}
    for name, args in (("json", ["-o", "json", seed]), ("markdown", ["report", "-q", seed]),
                       ("html", ["report", "-q", "-o", "html", seed])):
        result = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT,
                                env={**os.environ, "TZ": "UTC"}, stdin=subprocess.DEVNULL)
        loaded[name] = result.stderr.strip().splitlines()[-1]
    assert loaded == {"json": "False", "markdown": "False", "html": "True"}


def test_stdin_and_a_native_journal_tell_the_same_story(seed_journal: Path) -> None:
    seed = FIXTURES / "seed-incident" / "journal.txt"
    code, piped, _ = _markdown(input=seed.read_bytes())
    assert code == 1 and "from `-`" in piped
    assert piped.split("---\n\nWritten by")[0] == _markdown(str(seed))[1].split("---\n\nWritten by")[0]
    code, native, err = _markdown("--file", str(seed_journal))
    assert code == 1, err
    changed = _section(native, "### What changed between attempts")
    assert "**`/dev/null`** (first shown)" in changed and "**`/usr/local/cuda-13.0`** (was `/dev/null`)" in changed
    timeline = _section(native, "### Timeline")
    assert re.findall(r"`(cuda\.[a-z-]+)`", timeline) == ["cuda.toolkit-too-old-for-arch", "cuda.nvcc-not-found",
                                                         "cuda.header-missing"]


def test_secrets_are_redacted_in_both_formats(tmp_path: Path) -> None:
    token = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3"
    key = "sk-" + "proj0123456789abcdefghijkl"
    lines = [
        "2026-05-25T20:11:02+0000 node systemd[1]: Started api.service - API.",
        f"2026-05-25T20:11:04+0000 node python3[7]: [2026-05-25 20:11:04] server_args=ServerArgs(model_path='/m', "
        f"api_key='{key}', hf_token='{token}', tp_size=2)",
        f"2026-05-25T20:11:05+0000 node python3[7]: OSError: https://user:{token}@hub.example/m is gated; token={token}",
        "2026-05-25T20:11:06+0000 node systemd[1]: api.service: Main process exited, code=exited, status=1/FAILURE",
    ]
    journal = tmp_path / "secret.txt"
    journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for output in ("markdown", "html"):
        code, out, _ = _markdown("--no-model", "-o", output, str(journal))
        assert code == 1
        assert token not in out and key not in out, output
        assert "[REDACTED]" in out
