"""`logsift eval --model-only`: what the learned fallback adds, and how honest it is.

Rendering only; the measuring is logsift.learn.evaluation.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click
from tabulate import tabulate

from logsift.check.corpus import Case
from logsift.learn.evaluation import ClassResult, ModelEvaluation, evaluate_model
from logsift.rules import RuleSet

GENERALISATION_BAR = 0.70
HONESTY_BAR = 0.90


def run(cases: Sequence[Case], rules: RuleSet, output: str, leave_one_class_out: bool) -> int:
    """Measure and print; progress of the slow leave-one-class-out runs goes to stderr."""

    def progress(message: str) -> None:
        if sys.stderr.isatty():
            click.echo(f"logsift: {message}", err=True)

    evaluation = evaluate_model(cases, rules, leave_one_class_out=leave_one_class_out, progress=progress)
    if output == "json":
        click.echo(json.dumps(as_dict(evaluation), indent=2))
    else:
        click.echo(render(evaluation, markdown=output == "markdown"), nl=False)
    return 0


def render(evaluation: ModelEvaluation, markdown: bool = False) -> str:
    fmt = "github" if markdown else "simple"
    lines: list[str] = []

    def heading(text: str) -> None:
        lines.extend(["", f"## {text}", ""] if markdown else ["", f"{text}:"])

    plain, with_model = evaluation.rules_only, evaluation.with_model
    if markdown:
        lines.append("# Model evaluation")
    if plain is not None and with_model is not None:
        heading("What the model adds to the rules")
        rows = [("rules only", f"{plain.accuracy:.3f}", f"{plain.correct}/{plain.total}", plain.unknown),
                ("rules + model", f"{with_model.accuracy:.3f}", f"{with_model.correct}/{with_model.total}",
                 with_model.unknown)]
        lines.append(tabulate(rows, headers=("", "top-1 accuracy", "correct", "unknown"), tablefmt=fmt,
                              disable_numparse=True))
        changed = [(a.case.name, a.case.expected, a.predicted, b.predicted, f"{b.prediction.confidence:.2f}")
                   for a, b in zip(plain.outcomes, with_model.outcomes, strict=True) if a.predicted != b.predicted]
        if changed:
            lines.append("")
            lines.append(tabulate(changed, headers=("case", "expected", "rules", "rules + model", "confidence"),
                                  tablefmt=fmt, disable_numparse=True))
    if evaluation.generalisation:
        heading("Rules off, samples kept: cases the model names right "
                f"(bar: mean >= {GENERALISATION_BAR:.0%})")
        lines.append(_table(evaluation.generalisation, fmt, generalisation=True))
        lines.append("")
        lines.append(f"Mean over {len(evaluation.generalisation)} classes: {evaluation.generalisation_mean:.3f}"
                     f" ({'meets' if evaluation.generalisation_mean >= GENERALISATION_BAR else 'misses'} the bar)")
    if evaluation.honesty:
        heading("Class removed entirely (rules and samples): cases not named wrongly by the model "
                f"(bar: mean >= {HONESTY_BAR:.0%})")
        lines.append(_table(evaluation.honesty, fmt, generalisation=False))
        lines.append("")
        lines.append(f"Mean over {len(evaluation.honesty)} classes: {evaluation.honesty_mean:.3f}"
                     f" ({'meets' if evaluation.honesty_mean >= HONESTY_BAR else 'misses'} the bar); pooled over "
                     f"cases: {evaluation.honesty_pooled:.3f}; cases that came out unknown: {evaluation.unknown_pooled:.3f}")
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(rows: tuple[ClassResult, ...], fmt: str, generalisation: bool) -> str:
    body: list[tuple[object, ...]]
    headers: tuple[str, ...]
    if generalisation:
        body = [(row.label, row.cases, row.right, row.by_model, row.baseline_right, row.unknown, row.model_wrong,
                 row.rule_wrong, f"{row.rate:.2f}") for row in rows]
        headers = ("class", "cases", "right", "by model", "right without model", "unknown", "model wrong",
                   "rules wrong", "rate")
    else:
        body = [(row.label, row.cases, row.unknown, row.right, row.model_wrong, row.rule_wrong, f"{row.honest:.2f}")
                for row in rows]
        headers = ("class", "cases", "unknown", "accepted other class", "model wrong", "rules wrong", "honest")
    return str(tabulate(body, headers=headers, tablefmt=fmt, disable_numparse=True))


def as_dict(evaluation: ModelEvaluation) -> dict[str, Any]:
    def rows(results: tuple[ClassResult, ...]) -> list[dict[str, Any]]:
        return [{"class": row.label, "cases": row.cases, "right": row.right, "by_model": row.by_model,
                 "right_without_model": row.baseline_right, "unknown": row.unknown,
                 "model_wrong": row.model_wrong, "rule_wrong": row.rule_wrong} for row in results]

    plain, with_model = evaluation.rules_only, evaluation.with_model
    return {
        "version": 1,
        "rules_only": {"accuracy": round(plain.accuracy, 4), "correct": plain.correct, "cases": plain.total}
        if plain else None,
        "rules_and_model": {"accuracy": round(with_model.accuracy, 4), "correct": with_model.correct,
                            "cases": with_model.total} if with_model else None,
        "generalisation": {"mean": round(evaluation.generalisation_mean, 4), "bar": GENERALISATION_BAR,
                           "classes": rows(evaluation.generalisation)} if evaluation.generalisation else None,
        "honesty": {"mean": round(evaluation.honesty_mean, 4), "pooled": round(evaluation.honesty_pooled, 4),
                    "unknown": round(evaluation.unknown_pooled, 4), "bar": HONESTY_BAR,
                    "classes": rows(evaluation.honesty)} if evaluation.honesty else None,
    }
