"""Facts per run (patterns/facts.toml): loading with file:line errors, the sample check that can
fail, facts from journal fields, daemon-reloads, and what changed between runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import logsift
from logsift.check.facts import check_facts
from logsift.diagnosis.changes import arguments, changes, difference, fix
from logsift.exceptions import RuleError
from logsift.match import Matcher
from logsift.records import Run, RunFact
from logsift.rules import load_rules
from logsift.rules.facts import load_facts
from tests.helpers import FIXTURES, invoke, report

SEED = FIXTURES / "seed-incident" / "journal.txt"


def _site(tmp_path: Path, facts: str, samples: str | None = None) -> Path:
    (tmp_path / "facts.toml").write_text(facts, encoding="utf-8")
    if samples is not None:
        (tmp_path / "facts.log").write_text(samples, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("text", "message"), [
    ('[[fact]]\nname = "x"\nlabel = "X"\nregex = \'\'\'CUDA_HOME=(\\S+)\'\'\'\n', "(?P<value>...) group"),
    ('[[fact]]\nname = "x"\nregex = \'\'\'CUDA_HOME=(?P<value>\\S+)\'\'\'\n', "needs a label"),
    ('[[fact]]\nname = "Bad-Name"\nlabel = "X"\nfield = "_CMDLINE"\n', "lowercase letters"),
    ('[[fact]]\nname = "x"\nlabel = "X"\n', "either a regex or a field"),
    ('[[fact]]\nname = "x"\nlabel = "X"\nregex = \'\'\'(?P<value>\'\'\'\n', "does not compile"),
    ('[[fact]]\nname = "x"\nlabel = "X"\nfield = "_CMDLINE"\n[[fact]]\nname = "x"\nlabel = "Y"\nfield = "_EXE"\n',
     "another label"),
    ('[[fact]]\nname = "x"\nlabel = "X"\nregex = \'\'\'(?P<value>\\d+)\'\'\'\n', "no literal text"),
    ('fact = 1\n', "array of tables"),
    ('[rule]\n', "only [[fact]] entries"),
])
def test_a_broken_facts_file_says_what_and_where(tmp_path: Path, text: str, message: str) -> None:
    path = _site(tmp_path, text)
    with pytest.raises(RuleError) as raised:
        load_facts(path / "facts.toml")
    assert message in str(raised.value) and str(path / "facts.toml") in str(raised.value)


def test_a_broken_site_facts_file_is_skipped_not_fatal(tmp_path: Path) -> None:
    _site(tmp_path, '[[fact]]\nname = "x"\n')
    rules = load_rules(extra=[tmp_path], strict=False)
    assert any("facts.toml" in skipped for skipped in rules.skipped)
    assert rules.facts, "the bundled facts still load"


def test_sample_check_fails_on_a_wrong_or_missing_sample(tmp_path: Path) -> None:
    facts = ('[[fact]]\nname = "queue"\nlabel = "queue"\nregex = \'\'\'queue=(?P<value>\\w+)\'\'\'\n'
             '[[fact]]\nname = "zone"\nlabel = "zone"\nregex = \'\'\'zone=(?P<value>\\w+)\'\'\'\n')
    samples = ('# facts: {"queue": "fast"}\nstarting worker queue=slow\n'
               '# facts: {}\nstarting worker queue=fast\n')
    site = _site(tmp_path, facts, samples)
    rules = load_rules([site])
    problems = [str(problem) for problem in check_facts(site / "facts.toml", rules, Matcher(rules))]
    assert any("fact queue='slow', expected 'fast'" in problem for problem in problems)
    assert any("fact queue='fast' found, not annotated" in problem for problem in problems)
    assert any("[[fact]] zone #2 has no sample" in problem for problem in problems)


def test_patterns_check_reports_fact_problems(tmp_path: Path) -> None:
    site = _site(tmp_path, '[[fact]]\nname = "queue"\nlabel = "queue"\nregex = \'\'\'queue=(?P<value>\\w+)\'\'\'\n')
    code, out, _ = invoke("patterns", "check", "--patterns", str(site))
    assert code == 1 and "no sample file facts.log" in out


def test_seed_facts_per_run() -> None:
    [incident] = logsift.diagnose(str(SEED)).incidents
    homes = [run.fact("cuda_home").value if run.fact("cuda_home") else None for run in incident.runs]
    assert homes == [None, "/dev/null", "/usr/local/cuda-13.0", None]
    assert all(run.fact("model").value == "/models/Kimi-K2.6" for run in incident.runs)
    assert [run.reload is not None for run in incident.runs] == [False, True, True, True]
    assert incident.runs[-1].ready is not None and incident.runs[-1].ready.number == 436


def test_seed_json_has_facts_changes_and_fix() -> None:
    _, got = report(str(SEED))
    incident = got["incidents"][0]
    run2 = incident["runs"][1]
    assert {
        key: value for key, value in next(f for f in run2["facts"] if f["name"] == "cuda_home").items() if key != "text"} == {"name": "cuda_home", "label": "CUDA_HOME", "value": "/dev/null", "line": 224}
    assert run2["daemon_reload"]["line"] == 117
    first = [(change["run"], change["name"], change["before"], change["after"]) for change in incident["changes"]
             if change["name"] == "cuda_home"]
    assert first == [(2, "cuda_home", None, "/dev/null"), (3, "cuda_home", "/dev/null", "/usr/local/cuda-13.0")]
    assert incident["fix"]["run"] == 4 and incident["fix"]["daemon_reload"] is True
    assert incident["downtime_s"] == 3967.0 and incident["downtime_open"] is False


def test_json_validates_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(logsift.schema())
    for journal in [SEED, *sorted((FIXTURES / "reports").glob("*/journal.txt"))]:
        _, got = report(str(journal))
        errors = sorted(validator.iter_errors(got), key=str)
        assert not errors, f"{journal}: {errors[0].message} at {list(errors[0].absolute_path)}"


def _entry(pid: int, message: str, cmdline: str | None, at: int) -> dict[str, str]:
    entry = {"__REALTIME_TIMESTAMP": str(1_779_739_862_000_000 + at * 1_000_000), "_HOSTNAME": "node",
             "SYSLOG_IDENTIFIER": "python3", "_PID": str(pid), "_SYSTEMD_UNIT": "api.service", "MESSAGE": message,
             "PRIORITY": "3"}
    if cmdline:
        entry["_CMDLINE"] = cmdline
    return entry


def _systemd(message: str, at: int) -> dict[str, str]:
    return {"__REALTIME_TIMESTAMP": str(1_779_739_862_000_000 + at * 1_000_000), "_HOSTNAME": "node",
            "SYSLOG_IDENTIFIER": "systemd", "_PID": "1", "UNIT": "api.service", "MESSAGE": message,
            "_CMDLINE": "/sbin/init", "PRIORITY": "6"}


def test_launch_arguments_from_cmdline_compared_argument_by_argument() -> None:
    entries = []
    for run, tp in enumerate((8, 4)):
        base = run * 100
        entries += [
            _systemd("Started api.service - API.", base),
            _entry(100 + run, "ModuleNotFoundError: No module named 'sglang'",
                   f"/usr/bin/python3 -m sglang.launch_server --model-path /models/x --tp {tp} --port 30000", base + 1),
            _systemd("api.service: Main process exited, code=exited, status=1/FAILURE", base + 2),
            _systemd("api.service: Failed with result 'exit-code'.", base + 2),
        ]
    lines = [json.dumps(entry) for entry in entries]
    [incident] = logsift.diagnose(lines).incidents
    facts = [run.fact("launch_args") for run in incident.runs]
    assert all(fact is not None and "/sbin/init" not in fact.value for fact in facts), "PID 1's command line is no fact"
    [change] = [change for change in changes(incident.runs) if change.name == "launch_args"]
    assert (change.run, change.before, change.after) == (2, "--tp=8", "--tp=4")


def _fact(name: str, value: str, kind: str = "value") -> RunFact:
    return RunFact(name, name, value, 1, value, kind)


def _run(*facts: RunFact, outcome: str = "failed") -> Run:
    start = datetime(2026, 5, 25, tzinfo=UTC)
    return Run(host="h", unit="u.service", started=start, ended=start + timedelta(seconds=5), first_line=1,
               last_line=2, outcome=outcome, exit=None, result=None, findings=(), root_cause=None, symptoms=(),
               facts=facts)


def test_changes_know_not_shown_from_changed() -> None:
    runs = [_run(), _run(_fact("cuda_home", "/dev/null")), _run(), _run(_fact("cuda_home", "/dev/null")),
            _run(_fact("cuda_home", "/usr/local/cuda"))]
    found = [(change.run, change.before, change.after, change.before_run) for change in changes(runs)]
    # Run 3 did not show it: unknown there, so run 4 showing the same value again is no change.
    assert found == [(2, None, "/dev/null", None), (5, "/dev/null", "/usr/local/cuda", 4)]


def test_arguments_of_every_shape() -> None:
    assert arguments("model_path='/m', tp_size=8, dist=['a', 'b']") == {"model_path": "'/m'", "tp_size": "8",
                                                                         "dist": "['a', 'b']"}
    assert arguments("'model': 'Qwen/Qwen3-8B', 'port': 8000") == {"model": "'Qwen/Qwen3-8B'", "port": "8000"}
    assert arguments("python3 -m x --tp 8 --trust-remote-code --port=1") == {
        "#0": "python3", "-m": "x", "--tp": "8", "--trust-remote-code": "", "--port": "1"}
    old, new = _fact("a", "tp_size=8, port=1, x=1", "arguments"), _fact("a", "tp_size=4, port=1, y=2", "arguments")
    assert difference(old, new) == ("tp_size=8, x=1, y (not given)", "tp_size=4, x (not given), y=2")


def test_fix_names_what_only_the_healthy_run_had() -> None:
    from logsift.records import Incident

    runs = (_run(_fact("cuda_home", "/dev/null")), _run(_fact("cuda_home", "/dev/null"), _fact("torch_version", "2.9")),
            _run(_fact("cuda_home", "/usr/local/cuda"), _fact("nccl_version", "2.27"), _fact("torch_version", "2.9"),
                 outcome="healthy"))
    found = fix(Incident("h", "u.service", runs, True, runs[-1].started))
    assert found is not None
    assert [fact.value for fact in found.differs] == ["/usr/local/cuda"]
    assert [fact.value for fact in found.only_healthy] == ["2.27"]
    assert fix(Incident("h", "u.service", runs[:2], False)) is None


def test_an_old_daemon_reload_is_not_blamed_on_the_first_run() -> None:
    lines = ["2026-05-25T08:00:00+0000 node systemd[1]: Reloading.",
             "2026-05-25T20:00:00+0000 node systemd[1]: Started api.service - API.",
             "2026-05-25T20:00:05+0000 node python3[7]: ModuleNotFoundError: No module named 'sglang'",
             "2026-05-25T20:00:06+0000 node systemd[1]: api.service: Main process exited, code=exited, status=1/FAILURE",
             "2026-05-25T20:10:00+0000 node systemd[1]: Reloading.",
             "2026-05-25T20:10:01+0000 node systemd[1]: Started api.service - API.",
             "2026-05-25T20:10:05+0000 node python3[8]: ModuleNotFoundError: No module named 'sglang'",
             "2026-05-25T20:10:06+0000 node systemd[1]: api.service: Main process exited, code=exited, status=1/FAILURE"]
    [incident] = logsift.diagnose(lines).incidents
    assert [run.reload is not None for run in incident.runs] == [False, True]
    assert incident.runs[1].reload is not None and incident.runs[1].reload.line == 5
