"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.journal_tools import SEED, build_journal, have_journal_remote


@pytest.fixture(scope="session")
def seed_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real .journal file of the seed scenario, built by systemd-journal-remote from the
    committed export capture (fixtures/seed-incident/journal.export)."""
    if not have_journal_remote():
        pytest.skip("needs systemd-journal-remote and journalctl: apt-get install systemd-journal-remote "
                    "(make test installs it)")
    directory = tmp_path_factory.mktemp("seed-journal")
    return build_journal((SEED / "journal.export").read_bytes(), directory / "seed.journal")


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temporary model cache for the session (tests never write to the user's ~/.cache),
    holding the model of the bundled rules when the ml extra is installed: triage only reads
    the cache, as it does after `make` setup has run `logsift train`."""
    import os

    directory = tmp_path_factory.mktemp("model-cache")
    previous = os.environ.get("LOGSIFT_CACHE_DIR")
    os.environ["LOGSIFT_CACHE_DIR"] = str(directory)
    _train_into(directory)
    yield directory
    if previous is None:
        os.environ.pop("LOGSIFT_CACHE_DIR", None)
    else:
        os.environ["LOGSIFT_CACHE_DIR"] = previous


def _train_into(directory: Path) -> None:
    """The model into `directory`: copied from the user's cache when the setup trained it there,
    else trained now (a few seconds); nothing without scikit-learn."""
    import importlib.util
    import shutil

    from logsift.cache import user_cache
    from logsift.learn import classifier
    from logsift.learn.training import default_fixture_dirs
    from logsift.rules import load_rules

    rules, fixtures = load_rules(), default_fixture_dirs()
    model, path = classifier.cached_model(rules, fixtures, user_cache())
    if model is not None:
        shutil.copy(path, directory / path.name)
    elif importlib.util.find_spec("sklearn") is not None:
        classifier.load_or_train(rules, fixtures, directory)
