"""The command line: exit codes, bad input and bad usage as one-line errors, colour, help."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, ROOT, invoke

SEED = str(FIXTURES / "seed-incident" / "journal.txt")
HEALTHY = str(FIXTURES / "scenarios" / "healthy-jit-build" / "journal.txt")


def _one_line_error(code: int, err: str) -> None:
    assert code == 2
    assert err.startswith("logsift: error: ") or err.startswith("Error: ") or "Usage:" in err
    assert "Traceback" not in err


def test_failure_exits_1_healthy_exits_0() -> None:
    assert invoke(SEED)[0] == 1
    assert invoke(HEALTHY)[0] == 0


def test_stdin_is_read() -> None:
    code, out, _ = invoke("--format", "table", input=Path(SEED).read_bytes())
    assert code == 1 and "cuda.header-missing" in out


def test_fail_on_critical_still_fails_for_critical_causes() -> None:
    assert invoke("--fail-on", "critical", SEED)[0] == 1
    silent = str(FIXTURES / "scenarios" / "silent-exit" / "journal.txt")
    assert invoke("--fail-on", "critical", silent)[0] == 0
    assert invoke(silent)[0] == 1


def test_missing_file(tmp_path: Path) -> None:
    code, _, err = invoke(str(tmp_path / "nope.log"))
    _one_line_error(code, err)
    assert "nope.log: no such file" in err


def test_a_directory_without_journal_files_reads_nothing_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "host-a").mkdir()
    for args in ([str(tmp_path)], ["-D", str(tmp_path)]):
        code, out, err = invoke(*args)
        assert code == 0 and "Nothing was read" in out
        assert f"logsift: note: read nothing: no journal files in {tmp_path}" in err


def test_binary_garbage(tmp_path: Path) -> None:
    garbage = tmp_path / "core.bin"
    garbage.write_bytes(bytes(range(256)) * 400)
    code, _, err = invoke(str(garbage))
    _one_line_error(code, err)
    assert "binary" in err and err.count("\n") == 1


def test_native_journal_file_gets_a_hint(tmp_path: Path) -> None:
    journal = tmp_path / "system.journal"
    journal.write_bytes(b"LPKSHHRH" + bytes(200))
    code, _, err = invoke(str(journal))
    _one_line_error(code, err)
    assert "--file" in err


def test_bad_usage() -> None:
    code, _, err = invoke("--format", "yaml", SEED)
    assert code == 2 and "Traceback" not in err
    code, _, err = invoke("--input-format", "xml", SEED)
    _one_line_error(code, err)


def test_broken_rule_directory(tmp_path: Path) -> None:
    area = tmp_path / "site"
    area.mkdir()
    (area / "broken.toml").write_text('title = "x"\nseverity = "loud"\npriority = 5\nexplanation = ""\n[[match]]\nregex = "boom"\n')
    code, out, err = invoke("--patterns", str(tmp_path), SEED)
    assert code == 1 and "Incident 1: sglang-k26.service" in out, "one bad site rule must not take triage down"
    [warning] = [line for line in err.splitlines() if "warning" in line]
    assert "skipped a site rule" in warning and "broken.toml:2" in warning and "severity" in warning
    code, _, err = invoke("--strict-patterns", "--patterns", str(tmp_path), SEED)
    _one_line_error(code, err)
    assert "broken.toml:2" in err and "severity" in err


def test_bad_regex_in_rule(tmp_path: Path) -> None:
    area = tmp_path / "site"
    area.mkdir()
    (area / "bad.toml").write_text('title = "x"\nseverity = "error"\npriority = 5\nexplanation = ""\n\n[[match]]\nregex = "(unclosed"\n')
    code, _, err = invoke("--strict-patterns", "--patterns", str(tmp_path), SEED)
    _one_line_error(code, err)
    assert "bad.toml:7" in err and "compile" in err
    code, _, err = invoke("--patterns", str(tmp_path), SEED)
    assert code == 1 and "bad.toml:7" in err and "warning" in err


def test_user_rule_directory_adds_a_class(tmp_path: Path) -> None:
    area = tmp_path / "site"
    area.mkdir()
    (area / "disk-full.toml").write_text(
        'title = "Disk full on {mount}"\nseverity = "critical"\npriority = 95\nexplanation = "The disk is full."\n'
        'remediation = ["Free space on {mount}."]\n\n[[match]]\nregex = \'No space left on device: (?P<mount>/\\S+)\'\n'
    )
    log = tmp_path / "app.log"
    log.write_text("INFO starting\nOSError: No space left on device: /var/cache\n")
    code, out, _ = invoke("--patterns", str(tmp_path), "--format", "json", str(log))
    assert code == 1 and '"class": "site.disk-full"' in out and "Free space on /var/cache." in out


def test_color_only_when_asked_or_on_a_terminal() -> None:
    _, plain, _ = invoke(SEED)
    assert "\x1b[" not in plain
    _, colored, _ = invoke("--color", "always", SEED)
    assert "\x1b[" in colored


def test_log_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    log = tmp_path / "evil.log"
    log.write_bytes(b"RuntimeError: CUDA_HOME environment variable is not set \x1b]0;pwned\x07\x1b[2J\x07 token=hf_abcdefghijklmnopqrstuvwxyz012345\n")
    _, out, _ = invoke("--color", "never", str(log))
    assert "\x1b" not in out and "\x07" not in out
    assert "hf_abcdefghijklmnopqrstuvwxyz012345" not in out


def test_help_lists_commands_and_triage_help() -> None:
    code, out, _ = invoke("--help")
    assert code == 0 and "triage" in out and "Exit status" in out
    code, out, _ = invoke("triage", "--help")
    assert code == 0 and "--format" in out and "--fail-on" in out


def test_console_script_and_module_entry_points(tmp_path: Path) -> None:
    env = {**os.environ, "TZ": "UTC", "NO_COLOR": "1"}
    module = subprocess.run([sys.executable, "-m", "logsift", "--version"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert module.returncode == 0 and "logsift, version" in module.stdout
    script = Path(sys.executable).parent / "logsift"
    if not script.exists():
        pytest.skip("console script not installed in this environment")
    piped = subprocess.run([str(script)], input=Path(SEED).read_bytes(), capture_output=True, env=env)
    assert piped.returncode == 1 and b"cuda.header-missing" in piped.stdout
    broken = subprocess.run([str(script), "/nonexistent/x.log"], capture_output=True, text=True, env=env)
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1 and "Traceback" not in broken.stderr


def test_closed_stdout_is_not_an_error() -> None:
    script = Path(sys.executable).parent / "logsift"
    if not script.exists():
        pytest.skip("console script not installed in this environment")
    result = subprocess.run(f"'{script}' '{SEED}' | head -1", shell=True, capture_output=True, text=True)
    assert "Traceback" not in result.stderr and "Error" not in result.stderr


def test_skipped_records_are_reported_in_json_and_on_stderr(tmp_path: Path) -> None:
    log = tmp_path / "journal.json"
    good = '{"__CURSOR":"s=1","__REALTIME_TIMESTAMP":"1779741457000000","_HOSTNAME":"h","SYSLOG_IDENTIFIER":"python","_PID":"7","MESSAGE":"OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."}'
    log.write_text(good + "\n" + '{"MESSAGE": "cut off\n' + good + "\n")
    code, out, err = invoke("--format", "json", str(log))
    assert code == 1
    warnings = json.loads(out)["summary"]["warnings"]
    assert len(warnings) == 1 and "skipped 1 bad record" in warnings[0]
    assert "logsift: warning: skipped 1 bad record" in err


@pytest.mark.parametrize("command", [(), ("report",)])
def test_stderr_lines_quote_a_site_rule_path_escaped(tmp_path: Path, command: tuple[str, ...]) -> None:
    # A directory name is the user's, but it ends up on an operator's terminal: as log text, escaped.
    area = tmp_path / "site\x1b]0;owned\x07"
    area.mkdir()
    (area / "broken.toml").write_text('title = "x"\nseverity = "loud"\npriority = 5\nexplanation = ""\n')
    code, _, err = invoke(*command, "--patterns", str(tmp_path), SEED)
    assert code == 1
    [warning] = [line for line in err.splitlines() if "skipped a site rule" in line]
    assert "\x1b" not in err and "\x07" not in err and "\\x1b" in warning
