"""Both prefilter engines find the same lines, whatever the characters around the literals."""

from __future__ import annotations

import pytest

from logsift.rules.prefilter import FindPrefilter, HyperscanPrefilter, hyperscan

PAIRS = [("not found", 1), ("error", 2), ("ünïcode", 3), ("nvcc", 1)]
MESSAGES = [
    "all is well",
    "/bin/sh: 1: /dev/null/bin/nvcc: not found",
    "queue_time=\u00b5s 450 \u2014 nothing here",
    # hyperscan folds only ASCII case, so a non-ASCII literal is written as the rule has it.
    "ünïcode ERROR after a wide char \u4e2d\u6587",
    "",
    "multi\nline message with an error inside",
    "\u00b5\u00b5\u00b5 ünïcode",
    "surrogate \udcff byte, then nvcc",
]
EXPECTED = [set(), {1}, set(), {2, 3}, set(), {2}, {3}, {1}]


def test_find_engine() -> None:
    assert [set(hits) for hits in FindPrefilter(PAIRS).scan(MESSAGES)] == EXPECTED


@pytest.mark.skipif(hyperscan is None, reason="hyperscan is not installed")
def test_hyperscan_engine_agrees() -> None:
    assert [set(hits) for hits in HyperscanPrefilter(PAIRS).scan(MESSAGES)] == EXPECTED
    assert [set(hits) for hits in HyperscanPrefilter(PAIRS).scan(MESSAGES[:3])] == EXPECTED[:3]
