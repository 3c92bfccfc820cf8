"""Group unclassified failure lines into templates (Drain), so forty copies are one entry.

Drain (He et al., ICWS 2017; the Drain3 library) walks a fixed-depth tree: first by the number
of tokens, then by the first few tokens, to a short list of clusters (here only the first token
leads the way by default: in an error line it is the exception's type, and the second is often
its varying subject, "KeyError: 'rope_scaling'"); the most similar cluster
takes the line when enough tokens agree position by position, and the tokens that differ
become `<*>`. Lines are masked first (logsift.learn.masking), so numbers, paths and ids never split
a group. Memory is bounded: at most `max_clusters` clusters (the least recently matched one
is dropped), `max_children` branches per tree node, and long lines are cut to `max_tokens`.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from logsift.learn.masking import mask, strip_prefix

WILDCARD = "<*>"


@dataclass
class Cluster:
    """One template and what was seen of it: how often, the first example, where and on which hosts."""

    id: int
    tokens: list[str]
    count: int
    example: str
    line: int
    hosts: set[str] = field(default_factory=set)

    @property
    def template(self) -> str:
        return " ".join(self.tokens)


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    clusters: list[int] = field(default_factory=list)


class TemplateMiner:
    """Feed lines with `add`; read `clusters()` in the order their first line appeared."""

    def __init__(
        self,
        depth: int = 3,
        similarity: float = 0.5,
        max_children: int = 100,
        max_clusters: int = 1000,
        max_tokens: int = 80,
        max_hosts: int = 20,
    ) -> None:
        if depth < 3:
            raise ValueError("depth must be at least 3 (root, length, one token)")
        self.prefix_tokens = depth - 2
        self.similarity = similarity
        self.max_children = max_children
        self.max_clusters = max_clusters
        self.max_tokens = max_tokens
        self.max_hosts = max_hosts
        self.root = _Node()
        self.by_id: OrderedDict[int, Cluster] = OrderedDict()  # least recently matched first
        self.leaf_of: dict[int, _Node] = {}
        self.next_id = 1
        self.evicted = 0

    def tokens(self, text: str) -> list[str]:
        return mask(strip_prefix(text.strip())).split()[: self.max_tokens]

    def add(self, text: str, line: int = 0, host: str | None = None) -> Cluster:
        tokens = self.tokens(text) or [""]
        leaf = self._leaf(tokens)
        cluster = self._best(leaf, tokens)
        if cluster is None:
            cluster = Cluster(self.next_id, tokens, 0, text, line)
            self.next_id += 1
            self.by_id[cluster.id] = cluster
            self.leaf_of[cluster.id] = leaf
            leaf.clusters.append(cluster.id)
            self._evict()
        else:
            cluster.tokens = [a if a == b else WILDCARD for a, b in zip(cluster.tokens, tokens, strict=True)]
            self.by_id.move_to_end(cluster.id)
        cluster.count += 1
        if host is not None and len(cluster.hosts) < self.max_hosts:
            cluster.hosts.add(host)
        return cluster

    def clusters(self) -> list[Cluster]:
        return sorted(self.by_id.values(), key=lambda cluster: (cluster.line, cluster.id))

    # -- the tree -------------------------------------------------------------------------

    def _leaf(self, tokens: list[str]) -> _Node:
        node = self.root.children.setdefault(str(len(tokens)), _Node())
        for token in tokens[: self.prefix_tokens]:
            # A token holding a placeholder or a digit is a value: it must not open a branch.
            key = WILDCARD if ("<" in token or any(char.isdigit() for char in token)) else token
            child = node.children.get(key)
            if child is None:
                if len(node.children) >= self.max_children:
                    key = WILDCARD
                    child = node.children.get(key)
                if child is None:
                    child = node.children[key] = _Node()
            node = child
        return node

    def _best(self, leaf: _Node, tokens: list[str]) -> Cluster | None:
        best: Cluster | None = None
        best_rank = (-1.0, -1)
        for cluster_id in leaf.clusters:
            cluster = self.by_id[cluster_id]
            score, wildcards = _similarity(cluster.tokens, tokens)
            if (score, wildcards) > best_rank:
                best, best_rank = cluster, (score, wildcards)
        if best is not None and best_rank[0] >= self.similarity:
            return best
        return None

    def _evict(self) -> None:
        while len(self.by_id) > self.max_clusters:
            cluster_id, _ = self.by_id.popitem(last=False)
            self.leaf_of.pop(cluster_id).clusters.remove(cluster_id)
            self.evicted += 1


def _similarity(template: list[str], tokens: list[str]) -> tuple[float, int]:
    """Share of positions where the tokens agree (a wildcard agrees with anything, but does not
    count as agreement: Drain's rule, so that a template of only wildcards does not swallow all),
    and the number of wildcards as the tie-break."""
    if not template:
        return 1.0, 0
    same = 0
    wildcards = 0
    for a, b in zip(template, tokens, strict=False):
        if a == WILDCARD:
            wildcards += 1
        elif a == b:
            same += 1
    return same / len(template), wildcards


__all__ = ["WILDCARD", "Cluster", "TemplateMiner"]
