"""`logsift eval MANIFEST`: top-1 accuracy of the diagnosis on a labelled corpus of log files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from tabulate import tabulate

from logsift.check.corpus import Outcome, Report, evaluate, load_manifest, rule_predictor
from logsift.cli.options import patterns_option, rules_from
from logsift.report.common import clip
from logsift.rules import RuleSet
from logsift.sanitize import clean, dumps, redact

EVIDENCE_WIDTH = 100
CONFUSIONS = 10


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--cases-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory the manifest's file paths are relative to (default: the manifest's own).")
@click.option("-f", "--format", "output", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Report format.")
@click.option("--min-accuracy", type=click.FloatRange(0.0, 1.0), default=None, metavar="X",
              help="Exit 1 when top-1 accuracy is below X (0 to 1), for CI.")
@click.option("--model-only", is_flag=True,
              help="Measure the learned fallback instead: accuracy of the rules alone and with the model.")
@click.option("--leave-one-class-out", "leave_one_class_out", is_flag=True,
              help="With --model-only: per class, switch its rule off (the model keeps its samples), then remove "
              "it entirely (the model retrained without it). Slow: one training per class.")
@click.option("--split", "splits", multiple=True, metavar="NAME",
              help="Only the cases of this split (the manifest's `split` column, e.g. dev or holdout); repeatable.")
@click.option("--batch", "batches", multiple=True, metavar="N",
              help="Only the cases of this batch (the manifest's `batch` column); repeatable.")
@patterns_option
def eval_command(manifest: Path, cases_dir: Path | None, output: str, min_accuracy: float | None,
                 model_only: bool, leave_one_class_out: bool, splits: tuple[str, ...], batches: tuple[str, ...],
                 pattern_dirs: tuple[Path, ...]) -> int:
    """Run the diagnosis on every case of MANIFEST and measure it against the labels.

    MANIFEST is a TSV with the columns file, class, accept (other fair answers, |-separated),
    and optionally split. The prediction for a case is the root cause of its incident with the
    highest (severity, priority), the latest on a tie; "unknown" when no incident has a root
    cause, "healthy" when there is no incident. A case labelled `unknown` (a cause no class
    covers) or `healthy` is right when that is the answer.

    \b
      logsift eval ../shared/corpus/issues/manifest.tsv
      logsift eval manifest.tsv --format markdown --min-accuracy 0.9
      logsift eval manifest.tsv --model-only --leave-one-class-out
    """
    cases = load_manifest(manifest, cases_dir)
    if splits:
        cases = [case for case in cases if case.split in splits]
    if batches:
        cases = [case for case in cases if case.batch in batches]
    rules = rules_from(pattern_dirs)
    if model_only or leave_one_class_out:
        from logsift.cli import model_report

        return model_report.run(cases, rules, output, leave_one_class_out)
    report = evaluate(cases, rule_predictor(rules))
    if output == "json":
        click.echo(dumps(as_dict(report, rules)))
    else:
        click.echo(render(report, rules, markdown=output == "markdown"), nl=False)
    if min_accuracy is not None and report.accuracy < min_accuracy:
        click.echo(f"logsift: accuracy {report.accuracy:.3f} is below --min-accuracy {min_accuracy}", err=True)
        return 1
    return 0


def render(report: Report, rules: RuleSet, markdown: bool = False) -> str:
    fmt = "github" if markdown else "simple"
    lines: list[str] = []

    def heading(text: str) -> None:
        lines.extend(["", f"## {text}", ""] if markdown else ["", f"{text}:"])

    total = report.total
    summary = [
        f"Cases: {total}",
        f"Top-1 accuracy: {report.accuracy:.3f} ({report.correct}/{total})",
        f"Unknown rate: {report.unknown_rate:.3f} ({report.unknown}/{total})",
        f"No incident found: {report.no_incident}/{total}",
        f"Crashes: {len(report.crashes)}",
    ]
    card = report.scorecard(rules)
    summary += [
        f"Known classes named: {card.rate(card.known)}",
        f"Unseen causes said unknown: {card.rate(card.unseen)}",
        f"Healthy logs left alone: {card.rate(card.healthy)}",
        f"Confidently wrong: {len(card.confidently_wrong)}",
    ]
    if markdown:
        lines.extend(["# Evaluation", "", *(f"- {line}" for line in summary)])
    else:
        lines.extend(summary)
    heading("Per class")
    rows = [_metrics_row(row) for row in report.per_class()]
    rows.append(_metrics_row(report.macro()))
    lines.append(tabulate(rows, headers=("class", "precision", "recall", "f1", "support", "predicted"),
                          tablefmt=fmt, disable_numparse=True, colalign=("left", "right", "right", "right", "right", "right")))
    confusions = report.confusions(CONFUSIONS)
    if confusions:
        heading("Most frequent confusions")
        lines.append(tabulate([(count, expected, predicted) for expected, predicted, count in confusions],
                              headers=("count", "expected", "predicted"), tablefmt=fmt))
    if report.misses:
        heading("Misses")
        lines.append(tabulate([_miss_row(outcome, markdown) for outcome in report.misses],
                              headers=("file", "expected", "predicted", "evidence"), tablefmt=fmt))
    if report.crashes:
        heading("Crashes")
        lines.extend(f"{'- ' if markdown else '  '}{outcome.case.name}: {clean(outcome.error or '')}"
                     for outcome in report.crashes)
    return "\n".join(lines) + "\n"


def _metrics_row(row: Any) -> tuple[str, str, str, str, int, int]:
    return (row.label, f"{row.precision:.2f}", f"{row.recall:.2f}", f"{row.f1:.2f}", row.support, row.predicted)


def _miss_row(outcome: Outcome, markdown: bool) -> tuple[str, str, str, str]:
    prediction = outcome.prediction
    if outcome.error is not None:
        evidence = outcome.error
    elif prediction.line is not None:
        evidence = f"{prediction.line}: {' '.join(prediction.text.split())}"
    else:
        evidence = "-"
    evidence = clean(evidence)
    if len(evidence) > EVIDENCE_WIDTH:
        evidence = evidence[: EVIDENCE_WIDTH - 3] + "..."
    if markdown:
        evidence = evidence.replace("|", "\\|")
    return (outcome.case.name, outcome.case.expected, outcome.predicted, evidence)


def as_dict(report: Report, rules: RuleSet) -> dict[str, Any]:
    card = report.scorecard(rules)
    return {
        "version": 1,
        "cases": report.total,
        "correct": report.correct,
        "accuracy": round(report.accuracy, 4),
        "unknown": report.unknown,
        "unknown_rate": round(report.unknown_rate, 4),
        "crashes": len(report.crashes),
        "scorecard": {"known": list(card.known), "unseen": list(card.unseen), "healthy": list(card.healthy),
                      "confidently_wrong": [outcome.case.name for outcome in card.confidently_wrong]},
        "per_class": [
            {"class": row.label, "precision": round(row.precision, 4), "recall": round(row.recall, 4),
             "f1": round(row.f1, 4), "support": row.support, "predicted": row.predicted}
            for row in report.per_class()
        ],
        "confusions": [{"expected": expected, "predicted": predicted, "count": count}
                       for expected, predicted, count in report.confusions(CONFUSIONS)],
        "outcomes": [
            {
                "file": outcome.case.name, "expected": outcome.case.expected, "accept": list(outcome.case.accept),
                "predicted": outcome.predicted, "correct": outcome.correct,
                "line": outcome.prediction.line, "text": clip(redact(outcome.prediction.text)) or None,
                "source": outcome.prediction.source, "confidence": outcome.prediction.confidence,
                "error": outcome.error, "seconds": round(outcome.seconds, 4),
            }
            for outcome in report.outcomes
        ],
    }
