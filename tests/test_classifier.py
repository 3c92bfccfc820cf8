"""The learned fallback: training data, the numpy model against scikit-learn, safe persistence,
naming and abstaining in the pipeline, and the bars on the corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="the learned fallback needs the ml extra: pip install -e '.[ml]'")

import numpy as np  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from logsift.check.corpus import load_manifest  # noqa: E402
from logsift.cli import main  # noqa: E402
from logsift.learn.classifier import CONFIDENCE_FLOOR, Model, ModelFallback, features, load_or_train, model_key, train  # noqa: E402
from logsift.learn.evaluation import generalisation, honesty, measurable  # noqa: E402
from logsift.learn.training import NONE, default_fixture_dirs, model_text, needs_model, training_examples  # noqa: E402
from logsift.match import Matcher  # noqa: E402
from logsift.pipeline import Analysis, analyze  # noqa: E402
from logsift.read.text import TextReader  # noqa: E402
from logsift.report import terminal  # noqa: E402
from logsift.report.common import RenderOptions  # noqa: E402
from logsift.report.document import Report  # noqa: E402
from logsift.rules import RuleSet, load_rules  # noqa: E402
from tests.helpers import invoke  # noqa: E402

RULES = load_rules()
FIXTURES = default_fixture_dirs()
MANIFEST = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "issues" / "manifest.tsv"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One directory for the session: test_imports finds the model trained here, and vice versa.
    return tmp_path_factory.getbasetemp() / "model-cache"


@pytest.fixture(scope="module")
def model(cache: Path) -> Model:
    return load_or_train(RULES, FIXTURES, cache)[0]


def _service(lines: list[str], pid: int = 4242) -> list[str]:
    """A unit that starts, logs `lines` from its process and dies."""
    head = "2026-05-25T20:11:02+0000 gpu-node-07"
    return [
        f"{head} systemd[1]: Started vllm-qwen.service - vLLM Qwen.",
        *(f"{head} python3[{pid}]: {line}" for line in lines),
        f"{head} systemd[1]: vllm-qwen.service: Main process exited, code=exited, status=1/FAILURE",
        f"{head} systemd[1]: vllm-qwen.service: Failed with result 'exit-code'.",
    ]


_OOM = [
    "Traceback (most recent call last):",
    '  File "/opt/vllm/lib/python3.12/site-packages/vllm/worker/model_runner.py", line 1201, in profile_run',
    "    self.execute_model(model_input, kv_caches, intermediate_tensors)",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.11 GiB memory in use.",
]
_UNKNOWN = [
    "Traceback (most recent call last):",
    '  File "/srv/app/batching.py", line 88, in split',
    "    per_worker = total // workers",
    "ZeroDivisionError: integer division or modulo by zero",
]


def _analyze(lines: list[str], active: RuleSet, fallback: ModelFallback | None) -> Analysis:
    return analyze(TextReader("test", year=2026).read(lines), RULES, Matcher(active), fallback)


# -- what the model reads and learns from -----------------------------------------------------


def test_features_are_words_pairs_and_character_grams() -> None:
    found = features(model_text("fatal error: curand.h: No such file or directory"))
    assert {"w:fatal", "b:fatal error", "w:curand", "c: cur", "c:rand ", "c:curan"} <= set(found)
    assert "w:<num>" in features(model_text("GPU 7 has"))


def test_training_data_comes_from_samples_and_fixtures_only() -> None:
    examples = training_examples(RULES, FIXTURES)
    groups = {example.group.split(":")[0] for example in examples}
    assert any(group.endswith(".log") for group in groups)
    assert {"seed-incident", "build-output-before-wrapper"} <= groups
    labels = {example.label for example in examples}
    assert NONE in labels and "cuda.header-missing" in labels
    # Catch-alls, wrappers and systemd's generic lines are not classes the model names.
    assert not labels & {"python.unclassified-traceback", "python.extension-build-failed", "systemd.unit-failed"}
    assert all(example.text == model_text(example.text) for example in examples[:50])  # masked once, stable


def test_a_removed_class_is_never_seen() -> None:
    examples = training_examples(RULES, FIXTURES, exclude=["cuda.header-missing"])
    assert "cuda.header-missing" not in {example.label for example in examples}
    # Not even as NONE: lines its rule matches in other files (fixtures, the seed) are dropped.
    assert not [example.text for example in examples if "fatal error: curand" in example.text]


def test_needs_model_only_for_unclaimed_failures(model: Model) -> None:
    fallback = ModelFallback(RULES, model=model)
    analysis = _analyze(_service(_UNKNOWN), RULES, fallback)
    assert fallback.consulted == 1  # the traceback; not systemd's lines
    seed = (Path(__file__).resolve().parents[1] / "fixtures" / "seed-incident" / "journal.txt").read_text().splitlines()
    claimed = ModelFallback(RULES, model=model)
    _analyze(seed, RULES, claimed)
    assert claimed.consulted == 0  # every failure there has a rule
    assert analysis.diagnosis.incidents


def test_needs_model_ignores_healthy_lines() -> None:
    matcher = Matcher(RULES)
    lines = ["INFO 05-25 20:11:02 [api_server.py:1] error_rate=0 serving requests",
             "INFO:     Application startup complete."]
    from logsift.pipeline import Counts, match_events

    matched = list(match_events(matcher, TextReader("t").read(lines), Counts()))
    assert not any(needs_model(item, RULES) for item in matched)


# -- the numpy model is the scikit-learn model ------------------------------------------------


def test_vectors_and_logits_match_scikit_learn(model: Model) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    from logsift.learn.classifier import _regression

    examples = training_examples(RULES, FIXTURES)
    texts = [example.text for example in examples]
    vectorizer = TfidfVectorizer(analyzer=features, sublinear_tf=True, norm="l2")
    matrix = vectorizer.fit_transform(texts)
    regression = _regression(0).fit(matrix, [example.label for example in examples])
    probe = [model_text(line) for line in (_OOM[-1], _UNKNOWN[-1], "nvcc fatal : Unsupported gpu architecture 'compute_120'")]
    expected = vectorizer.transform(probe).toarray()
    logits = regression.decision_function(vectorizer.transform(probe))
    for row, text in enumerate(probe):
        index, values = model.vector(text)
        dense = np.zeros(len(model.vocabulary))
        dense[index] = values
        assert np.allclose(dense, expected[row])
        assert np.allclose(model.coef[:, index] @ values + model.intercept, logits[row], atol=1e-4)


def test_training_is_deterministic() -> None:
    examples = [example for example in training_examples(RULES, FIXTURES)
                if example.label in (NONE, "cuda.header-missing", "net.port-in-use", "cuda.out-of-memory",
                                     "nccl.error", "kernel.oom-kill")]
    first, report = train(examples)
    second, _ = train(examples)
    assert report.seconds < 30
    assert first.classes == second.classes
    assert np.array_equal(first.coef, second.coef)
    assert (first.threshold, first.similarity_threshold, first.temperature) == (
        second.threshold, second.similarity_threshold, second.temperature)


# -- safe persistence -------------------------------------------------------------------------


def test_cache_round_trip_and_refusals(model: Model, tmp_path: Path) -> None:
    key = model_key(RULES, FIXTURES)
    path = tmp_path / "model.npz"
    model.meta["key"] = key
    model.save(path)
    loaded = Model.load(path, key)
    assert loaded is not None
    line = model_text(_OOM[-1])
    assert loaded.predict(line) == model.predict(line)
    assert Model.load(path, "another-key") is None  # other rules: retrain, never reuse
    path.write_bytes(path.read_bytes()[:200])
    assert Model.load(path, key) is None  # truncated: retrain


class _Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch /tmp/logsift-pickle-ran",))


def test_a_pickle_in_the_cache_is_never_executed(model: Model, tmp_path: Path) -> None:
    marker = Path("/tmp/logsift-pickle-ran")
    marker.unlink(missing_ok=True)
    path = tmp_path / "evil.npz"
    key = model_key(RULES, FIXTURES)
    header = np.frombuffer(json.dumps({"format": 1, "key": key}).encode(), dtype=np.uint8)
    np.savez(path, header=header, vocabulary=np.array([_Boom()], dtype=object))
    assert Model.load(path, key) is None
    assert not marker.exists()


# -- in the pipeline --------------------------------------------------------------------------


def test_model_names_a_class_whose_rule_is_off(model: Model) -> None:
    active = RULES.without(["cuda.out-of-memory"])
    plain = _analyze(_service(_OOM), active, None)
    assert plain.diagnosis.incidents[0].root_cause.rule_id == "python.unclassified-traceback"
    analysis = _analyze(_service(_OOM), active, ModelFallback(RULES, model=model))
    root = analysis.diagnosis.incidents[0].root_cause
    assert root is not None
    assert (root.rule_id, root.source, root.line) == ("cuda.out-of-memory", "model", 5)
    assert max(model.threshold, CONFIDENCE_FLOOR) <= root.confidence <= 1.0
    described = Report.from_analysis(analysis).to_dict()["incidents"][0]["root_cause"]
    assert described["suggestion"] is True and described["source"] == "model"
    assert Report.from_analysis(analysis).to_dict()["unclassified"] == []
    import io

    out = io.StringIO()
    terminal.render(Report.from_analysis(analysis), out, RenderOptions())
    assert f"suggested by the model (confidence {root.confidence:.2f})" in out.getvalue()


def test_model_abstains_on_what_it_never_saw(model: Model) -> None:
    fallback = ModelFallback(RULES, model=model)
    analysis = _analyze(_service(_UNKNOWN), RULES, fallback)
    root = analysis.diagnosis.incidents[0].root_cause
    assert root is not None and root.rule_id == "python.unclassified-traceback" and root.source == "rule"
    assert fallback.consulted == 1 and fallback.named == 0
    assert Report.from_analysis(analysis).to_dict()["unclassified"][0]["example"] == _UNKNOWN[-1]


def test_the_model_names_nothing_under_its_confidence_floor(model: Model) -> None:
    # Cross-validation chooses a lower threshold (samples are easier than real excerpts); a class
    # named from a real line needs CONFIDENCE_FLOOR unless the user asks for another threshold.
    line = model_text("RuntimeError: CUDA driver error: out of memory")
    verdict = model.predict(line, threshold=0.5)
    assert verdict.label == "cuda.out-of-memory" and 0.5 <= verdict.confidence < CONFIDENCE_FLOOR
    assert verdict.named and model.threshold < CONFIDENCE_FLOOR
    assert not model.predict(line).named


def test_threshold_option_makes_it_abstain(model: Model) -> None:
    active = RULES.without(["cuda.out-of-memory"])
    strict = ModelFallback(RULES, model=model, threshold=1.01)
    root = _analyze(_service(_OOM), active, strict).diagnosis.incidents[0].root_cause
    assert root is not None and root.rule_id == "python.unclassified-traceback"


def test_cli_train_reports_the_cached_model(cache: Path, model: Model) -> None:
    result = CliRunner().invoke(main, ["train", "--cache-dir", str(cache), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["trained"] is False and Path(data["path"]).exists()
    assert data["threshold"] == model.threshold and "cuda.header-missing" in data["classes"]
    assert set(data["cross_validation"]) == {"named_right", "named_wrong", "none_named", "held_out_class_named"}


def test_cli_model_options(tmp_path: Path) -> None:
    log = tmp_path / "journal.txt"
    log.write_text("\n".join(_service(_UNKNOWN)) + "\n")
    code, out, _ = invoke("--no-model", "--format", "json", str(log))
    assert code == 1 and json.loads(out)["unclassified"][0]["count"] == 1
    code, _, err = invoke("--model-threshold", "2", str(log))
    assert code == 2 and "--model-threshold" in err


# -- the bars (BENCHMARKS.md): measured on the corpus, never trained on it -----------------------


@pytest.mark.skipif(not MANIFEST.exists(), reason="the evaluation corpus lives in ../shared/corpus")
def test_generalisation_bar(cache: Path) -> None:
    cases = load_manifest(MANIFEST)
    results = generalisation(cases, RULES, measurable(cases, RULES), FIXTURES, cache)
    mean = sum(result.rate for result in results) / len(results)
    assert mean >= 0.70, [(result.label, result.right, result.cases) for result in results]
    assert sum(result.model_wrong for result in results) <= 0.05 * sum(result.cases for result in results)


@pytest.mark.skipif(not MANIFEST.exists(), reason="the evaluation corpus lives in ../shared/corpus")
def test_honesty_bar_on_the_largest_classes(cache: Path) -> None:
    # The whole leave-one-class-out run trains one model per class (`logsift eval --model-only
    # --leave-one-class-out`, BENCHMARKS.md); the suite checks the three classes with most cases.
    cases = load_manifest(MANIFEST)
    counts = {label: sum(case.expected == label for case in cases) for label in measurable(cases, RULES)}
    largest = sorted(counts, key=lambda label: (-counts[label], label))[:3]
    results = honesty(cases, RULES, largest, FIXTURES, cache)
    assert sum(result.honest for result in results) / len(results) >= 0.90, results
