"""Drain-style templates: copies of one unknown error are one entry, across runs and hosts."""

from __future__ import annotations

from logsift.learn.clustering import WILDCARD, TemplateMiner
from logsift.match import Matcher
from logsift.pipeline import analyze
from logsift.read.text import TextReader
from logsift.report.document import Report
from logsift.rules import load_rules


def test_forty_copies_are_one_entry() -> None:
    miner = TemplateMiner()
    for number in range(40):
        miner.add(f"ERROR 05-25 20:{number % 60:02d}:00 [engine.py:{100 + number}] RuntimeError: worker {number} "
                  f"lost its lease on /srv/lease/{number}.lock after {number * 1.5} s",
                  line=10 + number, host=f"gpu-node-{number % 3}")
    miner.add("RuntimeError: tokenizer config has no chat template", line=99)
    clusters = miner.clusters()
    assert [cluster.count for cluster in clusters] == [40, 1]
    first = clusters[0]
    assert first.template == "RuntimeError: worker <NUM> lost its lease on <PATH> after <NUM> s"
    assert first.example.startswith("ERROR 05-25 20:00:00 [engine.py:100]")
    assert first.line == 10
    assert first.hosts == {"gpu-node-0", "gpu-node-1", "gpu-node-2"}


def test_differing_tokens_become_wildcards() -> None:
    miner = TemplateMiner()
    miner.add("KeyError: 'rope_scaling' in model config")
    cluster = miner.add("KeyError: 'max_position' in model config")
    assert cluster.count == 2
    assert cluster.tokens == ["KeyError:", WILDCARD, "in", "model", "config"]
    # Too different (one of five tokens in common) is a new template.
    assert miner.add("ValueError: bad value for this option").count == 1


def test_memory_is_bounded() -> None:
    miner = TemplateMiner(max_clusters=10, max_tokens=200)
    for number in range(100):
        miner.add("boom " * (number + 1))  # a new length is a new template
    assert len(miner.clusters()) == 10
    assert miner.evicted == 90
    # The survivors are the most recently seen; the tree holds no evicted cluster.
    assert sorted(len(cluster.tokens) for cluster in miner.clusters()) == list(range(91, 101))
    assert len(TemplateMiner(max_tokens=8).add("word " * 50).tokens) == 8
    held: list[int] = []
    nodes = [miner.root]
    while nodes:
        node = nodes.pop()
        held.extend(node.clusters)
        nodes.extend(node.children.values())
    assert sorted(held) == sorted(miner.by_id)


def _journal(runs: int, hosts: list[str]) -> list[str]:
    lines = []
    second = 0
    for run in range(runs):
        host = hosts[run % len(hosts)]
        pid = 4000 + run
        stamp = f"2026-05-25T20:{run:02d}"
        lines += [
            f"{stamp}:{second:02d}+0000 {host} systemd[1]: Started demo.service - Demo.",
            f"{stamp}:05+0000 {host} python3[{pid}]: Traceback (most recent call last):",
            f'{stamp}:05+0000 {host} python3[{pid}]:   File "/srv/app/main.py", line {10 + run}, in <module>',
            f"{stamp}:05+0000 {host} python3[{pid}]:     load()",
            f"{stamp}:05+0000 {host} python3[{pid}]: KeyError: 'shard_{run}'",
            f"{stamp}:06+0000 {host} systemd[1]: demo.service: Main process exited, code=exited, status=1/FAILURE",
            f"{stamp}:06+0000 {host} systemd[1]: demo.service: Failed with result 'exit-code'.",
        ]
    return lines


def test_json_unclassified_groups_runs_and_hosts() -> None:
    rules = load_rules()
    records = TextReader("test", year=2026).read(_journal(6, ["gpu-node-1", "gpu-node-2"]))
    analysis = analyze(records, rules, Matcher(rules))
    unclassified = Report.from_analysis(analysis).to_dict()["unclassified"]
    assert len(unclassified) == 1
    entry = unclassified[0]
    assert set(entry) >= {"template", "count", "example", "line"}
    assert entry["count"] == 6
    assert entry["template"] == "KeyError: 'shard_<NUM>'"
    assert entry["example"] == "KeyError: 'shard_0'"
    assert entry["line"] == 5
    assert entry["hosts"] == ["gpu-node-1", "gpu-node-2"]
