"""Shared pytest fixtures."""

from __future__ import annotations

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
