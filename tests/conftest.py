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
    """CLI runs that meet an unclaimed failure train the model once per session, into a
    temporary cache: tests never write to the user's ~/.cache."""
    import os

    directory = tmp_path_factory.mktemp("model-cache")
    previous = os.environ.get("LOGSIFT_CACHE_DIR")
    os.environ["LOGSIFT_CACHE_DIR"] = str(directory)
    yield directory
    if previous is None:
        os.environ.pop("LOGSIFT_CACHE_DIR", None)
    else:
        os.environ["LOGSIFT_CACHE_DIR"] = previous
