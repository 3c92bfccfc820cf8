"""`logsift train`: fit the learned fallback on the rule library's samples and cache it."""

from __future__ import annotations

import json
from pathlib import Path

import click

from logsift.cli.options import patterns_option, rules_from


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the model is cached (default: $LOGSIFT_CACHE_DIR, else $XDG_CACHE_HOME/logsift).")
@click.option("--force", is_flag=True, help="Train even when a model of this rule library is cached.")
@click.option("-f", "--format", "output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@patterns_option
def train(cache_dir: Path | None, force: bool, output: str, pattern_dirs: tuple[Path, ...]) -> int:
    """Train the model that names failures no rule matches, from the rules' annotated samples
    and the scenario fixtures (never from logs you analyse), and cache it.

    Triage never trains: it reads this cache, and says that the fallback is unavailable when
    the cache has no model of the current rule library (`make` setup runs this command). The
    cache is keyed by the rule library's contents: after editing a rule or sample, train again.

    \b
      logsift train
      logsift train --patterns /etc/logsift/patterns --format json
    """
    from logsift.learn.classifier import cache_dir as default_cache_dir
    from logsift.learn.classifier import load_or_train

    rules = rules_from(pattern_dirs)
    model, report, path = load_or_train(rules, directory=cache_dir, retrain=force)
    where = str(path) if path is not None else f"not cached ({(cache_dir or default_cache_dir())} is not writable)"
    if output == "json":
        data = {
            "trained": report is not None, "path": str(path) if path else None,
            "classes": [name for name in model.classes if name != "none"],
            "threshold": model.threshold, "similarity_threshold": model.similarity_threshold,
            "temperature": round(model.temperature, 4), "features": len(model.vocabulary),
            "examples": model.meta.get("examples"), "seconds": round(report.seconds, 2) if report else None,
            "cross_validation": {key: round(value, 4) for key, value in model.meta.get("cross_validation", {}).items()},
        }
        click.echo(json.dumps(data, indent=2))
        return 0
    if report is None:
        click.echo(f"Model of this rule library already cached: {where} (--force to train again)")
    else:
        click.echo(f"Trained in {report.seconds:.1f}s: {report.examples} example lines, {report.classes} classes, "
                   f"{report.features} features")
        click.echo(f"Cached: {where}")
    scores = model.meta.get("cross_validation", {})
    click.echo(f"Abstains below confidence {model.threshold:.2f} or similarity {model.similarity_threshold:.2f} "
               f"(temperature {model.temperature:.2f}); chosen by cross-validation on the samples:")
    if scores:
        click.echo(f"  held-out sample lines named right {scores['named_right']:.0%}, wrongly {scores['named_wrong']:.0%}; "
                   f"lines of held-out classes named {scores['held_out_class_named']:.1%}; "
                   f"'ok' near-miss lines named {scores['none_named']:.0%}")
    return 0
