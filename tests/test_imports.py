"""Heavy imports stay out of runs that do not need them: `logsift --help` and rule-only runs never
import scikit-learn (1 s, 120 MiB), and a run that finds its model in the cache needs numpy only."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, ROOT

HEAVY = ("sklearn", "scipy", "numpy")
# Runs the CLI in a fresh interpreter and reports which heavy packages got imported.
_PROBE = """
import json, sys
from logsift.cli import run
code = run(sys.argv[1:])
loaded = sorted({name.split(".")[0] for name in sys.modules} & {"sklearn", "scipy", "numpy"})
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""
_UNKNOWN_FAILURE = [
    "2026-05-25T20:11:02+0000 gpu-node-07 systemd[1]: Started demo.service - Demo.",
    "2026-05-25T20:11:05+0000 gpu-node-07 python3[4242]: Traceback (most recent call last):",
    '2026-05-25T20:11:05+0000 gpu-node-07 python3[4242]:   File "/srv/app/batching.py", line 88, in split',
    "2026-05-25T20:11:05+0000 gpu-node-07 python3[4242]:     per_worker = total // workers",
    "2026-05-25T20:11:05+0000 gpu-node-07 python3[4242]: ZeroDivisionError: integer division or modulo by zero",
    "2026-05-25T20:11:06+0000 gpu-node-07 systemd[1]: demo.service: Main process exited, code=exited, status=1/FAILURE",
    "2026-05-25T20:11:06+0000 gpu-node-07 systemd[1]: demo.service: Failed with result 'exit-code'.",
]


def _loaded(*args: str, cache: Path) -> tuple[int, list[str]]:
    env = {**os.environ, "LOGSIFT_CACHE_DIR": str(cache), "TZ": "UTC"}
    result = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=env,
                            cwd=ROOT, stdin=subprocess.DEVNULL)
    probe = json.loads(result.stderr.strip().splitlines()[-1])
    return probe["code"], probe["loaded"]


@pytest.fixture()
def unknown_failure(tmp_path: Path) -> Path:
    path = tmp_path / "journal.txt"
    path.write_text("\n".join(_UNKNOWN_FAILURE) + "\n")
    return path


def test_help_imports_nothing_heavy(tmp_path: Path) -> None:
    assert _loaded("--help", cache=tmp_path) == (0, [])


def test_rule_only_triage_imports_nothing_heavy(tmp_path: Path) -> None:
    # The seed incident: every failure in it has a rule, so the fallback is never consulted,
    # even though it is on by default.
    seed = str(FIXTURES / "seed-incident" / "journal.txt")
    assert _loaded(seed, cache=tmp_path) == (1, [])
    assert _loaded("--format", "json", seed, cache=tmp_path) == (1, [])


def test_no_model_imports_nothing_heavy(tmp_path: Path, unknown_failure: Path) -> None:
    assert _loaded("--no-model", str(unknown_failure), cache=tmp_path) == (1, [])


def test_cached_model_needs_numpy_not_scikit_learn(tmp_path_factory: pytest.TempPathFactory,
                                                   unknown_failure: Path) -> None:
    pytest.importorskip("sklearn", reason="training the model to cache needs the ml extra")
    from logsift.learn.classifier import load_or_train
    from logsift.learn.training import default_fixture_dirs
    from logsift.rules import load_rules

    cache = tmp_path_factory.getbasetemp() / "model-cache"  # shared with test_classifier
    _, _, path = load_or_train(load_rules(), default_fixture_dirs(), cache)
    assert path is not None and path.exists()
    code, loaded = _loaded(str(unknown_failure), cache=cache)
    assert code == 1
    assert "numpy" in loaded, "the fallback was not consulted: the test no longer tests anything"
    assert "sklearn" not in loaded and "scipy" not in loaded


def test_the_cli_names_every_backend_and_output_without_importing_them() -> None:
    """`logsift --help` does not import the pipeline, so the CLI spells the choices out."""
    from logsift.cli import triage
    from logsift.read import sources
    from logsift.report import REGISTRY

    assert triage.BACKENDS == sources.BACKENDS
    assert tuple(sorted(REGISTRY)) == triage.OUTPUTS


_HELP_PROBE = """
import sys
from logsift.cli import run
run(["--help"])
print(sorted(name for name in sys.modules if name.startswith("logsift.")), file=sys.stderr)
"""


def test_help_imports_no_stage(tmp_path: Path) -> None:
    """`logsift --help` is click and the command table: no reader, rule library or report."""
    env = {**os.environ, "LOGSIFT_CACHE_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", _HELP_PROBE], capture_output=True, text=True, env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL)
    loaded = ast.literal_eval(result.stderr.strip().splitlines()[-1])
    assert [name for name in loaded if name.split(".")[1] in ("read", "rules", "report", "pipeline", "diagnosis")] == []


def test_lazy_patterns_compile_on_first_use_and_behave_as_compiled() -> None:
    import re

    from logsift.lazy import LazyPattern, compile_lazily

    lazy = compile_lazily(r"(?P<word>\w+) (\d+)")
    assert isinstance(lazy, LazyPattern)
    with pytest.raises(AttributeError):
        object.__getattribute__(lazy, "match")  # nothing compiled yet
    compiled = re.compile(r"(?P<word>\w+) (\d+)")
    for text in ("port 8000", "no digits", "a 1 b 2"):
        first, expected = lazy.match(text), compiled.match(text)
        assert (first and first.groups()) == (expected and expected.groups())
        assert bool(lazy.search(text)) == bool(compiled.search(text))
        assert lazy.findall(text) == compiled.findall(text)
        assert lazy.sub("-", text) == compiled.sub("-", text)
    assert (lazy.pattern, lazy.groups, lazy.groupindex) == (compiled.pattern, compiled.groups, compiled.groupindex)
    assert object.__getattribute__(lazy, "match") == compiled.match  # the pattern's own method now
    assert compile_lazily(b"\\d+").findall(b"a1b22") == [b"1", b"22"]


def test_empty_input_compiles_no_regex_and_prints_no_table(tmp_path: Path) -> None:
    # Start-up (issue 12): the rule regexes and match.py's own shapes compile when a line first
    # needs them (the `regex` module is 9 ms to import), tabulate (40 ms with wcwidth) comes
    # with the first table a report prints, and the scan engine (hyperscan or the portable one)
    # with its database is loaded for the first block of input (match.Matcher.prefilter).
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    probe = ("import json, sys\nfrom logsift.cli import run\ncode = run(sys.argv[1:])\n"
             "print(json.dumps([code, sorted({'regex', 'tabulate', 'hyperscan', 'ahocorasick_rs'} & set(sys.modules))]),"
             " file=sys.stderr)\n")
    env = {**os.environ, "LOGSIFT_CACHE_DIR": str(tmp_path / "cache"), "TZ": "UTC"}
    for args in (["--no-model", str(empty)], ["--no-model", "--format", "json", str(empty)]):
        # The first run fills the rule cache (it parses the rule files, regexes and all).
        subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, env=env, cwd=ROOT, check=False)
        result = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env, cwd=ROOT)
        assert json.loads(result.stderr.strip().splitlines()[-1]) == [0, []], args
