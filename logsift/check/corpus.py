"""Accuracy on a labelled corpus: a manifest of log files, each with the class a diagnosis should name.

The parts are small so that other ways to predict can reuse them (the model fallback, a
leave-one-class-out run): `load_manifest` reads the cases, a predictor maps a log file to a
`Prediction`, `evaluate(cases, predictor)` runs every case (a crash is recorded, never raised),
and `Report` computes the metrics from the outcomes alone, so reports of several runs can be
joined with `Report.join`.

The manifest is a TSV with a header: `file` (relative to the manifest's directory, or to
`cases_dir`), `class`, `accept` (other fair answers, `|`-separated), then anything (source, notes).
"""

from __future__ import annotations

import csv
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from logsift import read as readers
from logsift.exceptions import InputError
from logsift.match import Matcher
from logsift.pipeline import Analysis, Fallback, analyze_source
from logsift.records import Finding
from logsift.rules import RuleSet

UNKNOWN = "unknown"  # a failure was found, but no class named (or only a catch-all)
HEALTHY = "healthy"  # no incident at all
CRASH = "crash"
REQUIRED_COLUMNS = ("file", "class")


@dataclass(frozen=True, slots=True)
class Case:
    path: Path
    expected: str
    accept: tuple[str, ...] = ()
    name: str = ""  # as written in the manifest
    line: int = 0  # of the manifest
    notes: str = ""
    split: str = ""  # e.g. "dev" (rules may be written from it) or "holdout" (never)
    batch: str = ""  # which collection it came in (scores are reported per batch, before and after)

    def accepts(self, label: str) -> bool:
        return label == self.expected or label in self.accept


@dataclass(frozen=True, slots=True)
class Prediction:
    label: str  # a class id, or UNKNOWN
    line: int | None = None  # evidence
    text: str = ""
    source: str = "rule"  # "rule" or "model"
    confidence: float = 1.0
    weak: bool = False  # a catch-all, wrapper or generic class: it says that the run failed, not why


@dataclass(frozen=True, slots=True)
class Outcome:
    case: Case
    prediction: Prediction
    error: str | None = None  # the crash, as one line
    seconds: float = 0.0

    @property
    def predicted(self) -> str:
        return CRASH if self.error is not None else self.prediction.label

    @property
    def correct(self) -> bool:
        """The expected class or one the manifest accepts; for a cause no class covers, also a weak
        class (the catch-all quoting the exception says that the cause is unknown)."""
        if self.error is not None:
            return False
        return self.case.accepts(self.prediction.label) or (self.case.expected == UNKNOWN and self.prediction.weak)

    @property
    def credited(self) -> str:
        """The label counted in per-class metrics: an accepted answer counts as the expected class."""
        return self.case.expected if self.correct else self.predicted


@dataclass(frozen=True, slots=True)
class ClassMetrics:
    label: str
    precision: float
    recall: float
    f1: float
    support: int  # cases labelled with this class
    predicted: int  # cases credited with this class


Predictor = Callable[[Path], Prediction]


# -- manifest ---------------------------------------------------------------------------------


def load_manifest(path: Path, cases_dir: Path | None = None) -> list[Case]:
    """The cases of a manifest; InputError (with file:line) when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(error.strerror or str(error), str(path)) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte {error.start})", str(path)) from None
    rows = list(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise InputError("empty manifest; expected a header with columns file, class, accept", str(path))
    header = [column.strip().lower() for column in rows[0]]
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        raise InputError(f"manifest header lacks column {missing[0]!r} (has: {', '.join(header)})", f"{path}:1")
    base = cases_dir if cases_dir is not None else path.parent
    column = {name: index for index, name in enumerate(header)}
    cases = []
    for number, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row) or row[0].startswith("#"):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            index = column.get(name)
            return row[index].strip() if index is not None and index < len(row) else ""

        name, expected = cell("file"), cell("class")
        if not name or not expected:
            raise InputError("a case needs a file and a class", f"{path}:{number}")
        accept = tuple(part.strip() for part in cell("accept").split("|") if part.strip())
        cases.append(Case(base / name, expected, accept, name, number, cell("notes"), cell("split"), cell("batch")))
    return cases


# -- predicting -------------------------------------------------------------------------------


def predict(analysis: Analysis, rules: RuleSet | None = None) -> Prediction:
    """The root cause of the incident with the highest (severity, priority); ties: the latest.
    HEALTHY when there is no incident, UNKNOWN when no incident has a root cause. With the rules,
    the prediction says whether its class is weak (says that the run failed, not why)."""
    if not analysis.diagnosis.incidents:
        return Prediction(HEALTHY)
    best: tuple[tuple[int, int, int], Finding] | None = None
    for order, incident in enumerate(analysis.diagnosis.incidents):
        root = incident.root_cause
        if root is None:
            continue
        key = (int(root.severity), root.priority, order)
        if best is None or key > best[0]:
            best = (key, root)
    if best is None:
        return Prediction(UNKNOWN)
    root = best[1]
    rule = rules.by_id.get(root.rule_id) if rules is not None else None
    return Prediction(root.rule_id, root.line, root.text, root.source, root.confidence,
                      rule is not None and rule.weak)


def analyze_file(path: Path, rules: RuleSet, matcher: Matcher | None = None,
                 fallback: Fallback | None = None) -> Analysis:
    """The normal pipeline on one file, its format detected as `logsift FILE` does."""
    stream = readers.open_input(str(path))
    try:
        return analyze_source(lambda skipping: readers.read(stream, str(path), skipping=skipping), rules, matcher, fallback)
    finally:
        stream.close()


def rule_predictor(rules: RuleSet, fallback: Fallback | None = None) -> Predictor:
    """Predict with the rule library (one matcher shared by every case), and the learned
    fallback for events no rule claimed when one is given."""
    matcher = Matcher(rules, near=fallback is not None)

    def predictor(path: Path) -> Prediction:
        return predict(analyze_file(path, rules, matcher, fallback), rules)

    return predictor


# -- evaluating -------------------------------------------------------------------------------


def evaluate_case(case: Case, predictor: Predictor) -> Outcome:
    started = time.perf_counter()
    try:
        prediction = predictor(case.path)
    except Exception as error:  # noqa: BLE001 - a crash is a result to report, not a reason to stop
        # The manifest's name of the file is shorter than the path and the same on every machine.
        message = " ".join(str(error).replace(str(case.path), case.name or str(case.path)).split())
        return Outcome(case, Prediction(UNKNOWN), f"{type(error).__name__}: {message}".rstrip(": "),
                       time.perf_counter() - started)
    return Outcome(case, prediction, None, time.perf_counter() - started)


def evaluate(cases: Iterable[Case], predictor: Predictor) -> Report:
    return Report(tuple(evaluate_case(case, predictor) for case in cases))


@dataclass(frozen=True)
class Report:
    outcomes: tuple[Outcome, ...]

    @classmethod
    def join(cls, reports: Iterable[Report]) -> Report:
        return cls(tuple(outcome for report in reports for outcome in report.outcomes))

    @property
    def total(self) -> int:
        return len(self.outcomes)

    @property
    def correct(self) -> int:
        return sum(outcome.correct for outcome in self.outcomes)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def unknown(self) -> int:
        return sum(outcome.predicted == UNKNOWN for outcome in self.outcomes)

    @property
    def no_incident(self) -> int:
        return sum(outcome.predicted == HEALTHY for outcome in self.outcomes)

    def scorecard(self, rules: RuleSet) -> Scorecard:
        """The four ways the hidden evaluation set is scored: known classes named, unseen causes
        said to be unknown, healthy logs left alone, and confidently wrong answers (a specific
        class that is not right; catch-alls and "unknown" are not confident)."""
        known = [outcome for outcome in self.outcomes if outcome.case.expected not in (UNKNOWN, HEALTHY)]
        unseen = [outcome for outcome in self.outcomes if outcome.case.expected == UNKNOWN]
        healthy = [outcome for outcome in self.outcomes if outcome.case.expected == HEALTHY]

        def confident(outcome: Outcome) -> bool:
            label = outcome.predicted
            if label in (UNKNOWN, HEALTHY, CRASH):
                return False
            rule = rules.by_id.get(label)
            return rule is not None and not rule.weak

        wrong = tuple(outcome for outcome in self.outcomes if not outcome.correct and confident(outcome))
        return Scorecard(
            (sum(outcome.correct for outcome in known), len(known)),
            (sum(outcome.correct for outcome in unseen), len(unseen)),
            (sum(outcome.correct for outcome in healthy), len(healthy)),
            wrong,
        )

    @property
    def unknown_rate(self) -> float:
        return self.unknown / self.total if self.total else 0.0

    @property
    def crashes(self) -> tuple[Outcome, ...]:
        return tuple(outcome for outcome in self.outcomes if outcome.error is not None)

    @property
    def misses(self) -> tuple[Outcome, ...]:
        return tuple(outcome for outcome in self.outcomes if not outcome.correct)

    def per_class(self) -> list[ClassMetrics]:
        return class_metrics(self.outcomes)

    def macro(self) -> ClassMetrics:
        """Unweighted mean over the classes that have cases."""
        rows = [row for row in self.per_class() if row.support]
        count = len(rows) or 1
        return ClassMetrics(
            "macro avg",
            sum(row.precision for row in rows) / count,
            sum(row.recall for row in rows) / count,
            sum(row.f1 for row in rows) / count,
            sum(row.support for row in rows),
            sum(row.predicted for row in rows),
        )

    def confusions(self, limit: int = 10) -> list[tuple[str, str, int]]:
        """(expected, predicted, count) of the misses, most frequent first."""
        counted = Counter((outcome.case.expected, outcome.predicted) for outcome in self.misses)
        return [(expected, predicted, count)
                for (expected, predicted), count in sorted(counted.items(), key=lambda item: (-item[1], item[0]))
                ][:limit]


@dataclass(frozen=True)
class Scorecard:
    known: tuple[int, int]  # (right, cases)
    unseen: tuple[int, int]
    healthy: tuple[int, int]
    confidently_wrong: tuple[Outcome, ...]

    @staticmethod
    def rate(pair: tuple[int, int]) -> str:
        right, total = pair
        return f"{right / total:.0%} ({right}/{total})" if total else "-"


def class_metrics(outcomes: Sequence[Outcome]) -> list[ClassMetrics]:
    """Precision, recall and F1 per class; UNKNOWN and CRASH count against recall only."""
    support = Counter(outcome.case.expected for outcome in outcomes)
    credited = Counter(outcome.credited for outcome in outcomes)
    hits = Counter(outcome.case.expected for outcome in outcomes if outcome.correct)
    labels = sorted((set(support) | set(credited)) - {UNKNOWN, HEALTHY, CRASH})
    rows = []
    for label in labels:
        precision = hits[label] / credited[label] if credited[label] else 0.0
        recall = hits[label] / support[label] if support[label] else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append(ClassMetrics(label, precision, recall, f1, support[label], credited[label]))
    return rows


__all__ = [
    "CRASH", "HEALTHY", "UNKNOWN", "Case", "Scorecard", "ClassMetrics", "Outcome", "Prediction", "Predictor", "Report",
    "analyze_file", "class_metrics", "evaluate", "evaluate_case", "load_manifest", "predict", "rule_predictor",
]
