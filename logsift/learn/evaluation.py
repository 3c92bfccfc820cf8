"""What the learned fallback adds to the rules, and how it behaves on classes it never saw.

Three measurements on a labelled corpus (logsift.check.corpus's manifest and predictor parts):

- **added**: top-1 accuracy of the rules alone, and of the rules with the model fallback.
- **generalisation** (leave one class out, rules off, samples kept): for each class with a rule
  and corpus cases, switch its rule off but keep the model trained on the whole library (its
  samples included), and count the class's cases diagnosed right; averaged over classes.
- **honesty** (leave one class out entirely): switch the rule off *and* train the model without
  the class (its samples, and any line its rule matches elsewhere); each of its cases should come
  out unknown, not confidently as another class. A case counts as honest unless the *model*
  names a class that the case does not accept; what the remaining rules say is reported apart.

The corpus is only ever read here, to measure: nothing in it reaches the training data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from logsift import read as readers
from logsift.check.corpus import UNKNOWN, Case, Outcome, Prediction, Predictor, Report, evaluate, predict
from logsift.learn.classifier import ModelFallback, load_or_train
from logsift.learn.training import weak
from logsift.match import Matcher
from logsift.pipeline import analyze_source
from logsift.rules import RuleSet

Progress = Callable[[str], None]


def model_predictor(active: RuleSet, catalogue: RuleSet, fallback: ModelFallback | None) -> Predictor:
    """Predict with the `active` rules and the fallback; `catalogue` describes every class
    (a class whose rule is switched off can still be named by the model)."""
    matcher = Matcher(active, near=fallback is not None)

    def predictor(path: Path) -> Prediction:
        stream = readers.open_input(str(path))
        try:
            return predict(analyze_source(lambda skipping: readers.read(stream, str(path), skipping=skipping),
                                          catalogue, matcher, fallback))
        finally:
            stream.close()

    return predictor


def verdict(outcome: Outcome, rules: RuleSet) -> str:
    """right, unknown (nothing, or only a catch-all/wrapper/generic class), model-wrong, rule-wrong."""
    if outcome.correct:
        return "right"
    prediction = outcome.prediction
    if prediction.label == UNKNOWN or outcome.error is not None or weak(rules.by_id.get(prediction.label)):
        return "unknown"
    return "model-wrong" if prediction.source == "model" else "rule-wrong"


@dataclass(frozen=True)
class ClassResult:
    label: str
    cases: int
    right: int  # diagnosed right (the expected class or an accepted one)
    by_model: int  # of those, named by the model
    unknown: int
    model_wrong: int
    rule_wrong: int
    baseline_right: int = 0  # the same rules without the model

    @property
    def rate(self) -> float:
        return self.right / self.cases if self.cases else 0.0

    @property
    def honest(self) -> float:
        return 1 - self.model_wrong / self.cases if self.cases else 0.0

    @property
    def unknown_rate(self) -> float:
        return self.unknown / self.cases if self.cases else 0.0


@dataclass(frozen=True)
class ModelEvaluation:
    rules_only: Report | None
    with_model: Report | None
    generalisation: tuple[ClassResult, ...]
    honesty: tuple[ClassResult, ...]

    @property
    def generalisation_mean(self) -> float:
        rows = self.generalisation
        return sum(row.rate for row in rows) / len(rows) if rows else 0.0

    @property
    def honesty_mean(self) -> float:
        rows = self.honesty
        return sum(row.honest for row in rows) / len(rows) if rows else 0.0

    @property
    def honesty_pooled(self) -> float:
        cases = sum(row.cases for row in self.honesty)
        return 1 - sum(row.model_wrong for row in self.honesty) / cases if cases else 0.0

    @property
    def unknown_pooled(self) -> float:
        cases = sum(row.cases for row in self.honesty)
        return sum(row.unknown for row in self.honesty) / cases if cases else 0.0


def measurable(cases: Sequence[Case], rules: RuleSet) -> list[str]:
    """Classes the leave-one-class-out runs can measure: a class rule in the library and cases."""
    labelled = {case.expected for case in cases}
    return sorted(label for label in labelled if label in rules.by_id and not weak(rules.by_id[label]))


def added(cases: Sequence[Case], rules: RuleSet, fixture_dirs: Sequence[Path] | None = None,
          cache: Path | None = None) -> tuple[Report, Report]:
    """(rules alone, rules with the model) on every case."""
    model, _, _ = load_or_train(rules, fixture_dirs, cache)
    plain = evaluate(cases, model_predictor(rules, rules, None))
    fallback = ModelFallback(rules, fixture_dirs=fixture_dirs, model=model)
    return plain, evaluate(cases, model_predictor(rules, rules, fallback))


def generalisation(cases: Sequence[Case], rules: RuleSet, classes: Iterable[str],
                   fixture_dirs: Sequence[Path] | None = None, cache: Path | None = None,
                   progress: Progress | None = None) -> list[ClassResult]:
    model, _, _ = load_or_train(rules, fixture_dirs, cache)
    results = []
    for label in classes:
        mine = [case for case in cases if case.expected == label]
        active = rules.without([label])
        fallback = ModelFallback(rules, fixture_dirs=fixture_dirs, model=model)
        report = evaluate(mine, model_predictor(active, rules, fallback))
        baseline = evaluate(mine, model_predictor(active, rules, None))
        results.append(_result(label, report, rules, baseline))
        if progress is not None:
            progress(f"rules off, samples kept: {label}: {results[-1].right}/{len(mine)}")
    return results


def honesty(cases: Sequence[Case], rules: RuleSet, classes: Iterable[str],
            fixture_dirs: Sequence[Path] | None = None, cache: Path | None = None,
            progress: Progress | None = None) -> list[ClassResult]:
    results = []
    for label in classes:
        mine = [case for case in cases if case.expected == label]
        active = rules.without([label])
        model, _, _ = load_or_train(rules, fixture_dirs, cache, exclude=[label])
        fallback = ModelFallback(active, fixture_dirs=fixture_dirs, model=model)
        report = evaluate(mine, model_predictor(active, active, fallback))
        results.append(_result(label, report, rules))
        if progress is not None:
            progress(f"class removed: {label}: {results[-1].unknown}/{len(mine)} unknown, "
                     f"{results[-1].model_wrong} named wrongly by the model")
    return results


def _result(label: str, report: Report, rules: RuleSet, baseline: Report | None = None) -> ClassResult:
    verdicts = [verdict(outcome, rules) for outcome in report.outcomes]
    return ClassResult(
        label=label, cases=report.total, right=verdicts.count("right"),
        by_model=sum(1 for outcome, seen in zip(report.outcomes, verdicts, strict=True)
                     if seen == "right" and outcome.prediction.source == "model"),
        unknown=verdicts.count("unknown"), model_wrong=verdicts.count("model-wrong"),
        rule_wrong=verdicts.count("rule-wrong"), baseline_right=baseline.correct if baseline else 0,
    )


def evaluate_model(cases: Sequence[Case], rules: RuleSet, fixture_dirs: Sequence[Path] | None = None,
                   cache: Path | None = None, leave_one_class_out: bool = True,
                   progress: Progress | None = None) -> ModelEvaluation:
    plain, with_model = added(cases, rules, fixture_dirs, cache)
    if not leave_one_class_out:
        return ModelEvaluation(plain, with_model, (), ())
    classes = measurable(cases, rules)
    return ModelEvaluation(
        plain, with_model,
        tuple(generalisation(cases, rules, classes, fixture_dirs, cache, progress)),
        tuple(honesty(cases, rules, classes, fixture_dirs, cache, progress)),
    )


__all__ = [
    "ClassResult", "ModelEvaluation", "added", "evaluate_model", "generalisation", "honesty", "measurable",
    "model_predictor", "verdict",
]
