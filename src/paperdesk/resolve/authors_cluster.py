"""Constrained average-linkage clustering of one name block.

S2AND clusters each block with average-linkage agglomeration over pairwise distances
(1 − P(same person)) and a distance threshold chosen on labelled data. Here the
constraints are exact rather than large-distance tricks: must-link groups (curations,
existing profiles in an incremental run) start as one cluster, and two clusters never merge
while any cannot-link (same record, contradictory given names, curated split, two
existing profiles) stands between them — average distance alone could outvote one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np


class UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


@dataclass(frozen=True)
class Linkage:
    """When two clusters merge: their average distance is under `threshold`, or, when
    some pair between them is under `strong` (a shared group of co-authors, say), under
    `loose`. Average linkage alone lets one strong link be outvoted by a person's papers
    on other topics (a student's papers at one lab, their later ones at another); the
    strong link carries the chain of evidence across, while the looser average still
    keeps clusters apart that only one coincidence links. `strong` is at most
    `threshold`, so no merge happens without some pair under the threshold (the early
    exits rely on it); `strong = 0` is plain average linkage."""

    threshold: float
    strong: float = 0.0
    loose: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.strong <= self.threshold:
            raise ValueError(f"strong {self.strong} must be in [0, threshold {self.threshold}]")

    def effective(self, avg: np.ndarray, least: np.ndarray) -> np.ndarray:
        """The score that merges under `threshold`: the average, scaled down to the
        threshold's scale where a strong link allows the looser bound."""
        if self.strong <= 0.0 or self.loose <= self.threshold:
            return avg
        return np.where(least < self.strong, avg * (self.threshold / self.loose), avg)


def cluster_block(
    dist: np.ndarray,
    cannot: np.ndarray,
    threshold: float | Linkage,
    must_groups: Iterable[Sequence[int]] = (),
) -> list[int]:
    """Labels (0..k-1, first-seen order) for n items.

    `dist` is an n×n matrix of distances in [0, 1] (unknown pairs may hold 1.0),
    `cannot` an n×n boolean matrix of cannot-links, `must_groups` lists of indices that
    must end in one cluster. Clusters merge while their average pairwise distance is
    below the threshold (see `Linkage` for the strong-link bound); must-links win over
    cannot-links inside one group (a curation overrides the model's name rule)."""
    link = threshold if isinstance(threshold, Linkage) else Linkage(threshold)
    threshold = link.threshold
    n = dist.shape[0]
    if n <= 1:
        return [0] * n
    uf = UnionFind(n)
    for group in must_groups:
        g = list(group)
        for x in g[1:]:
            uf.union(g[0], x)
    roots = sorted({uf.find(i) for i in range(n)})
    comp_of = {r: c for c, r in enumerate(roots)}
    member = np.array([comp_of[uf.find(i)] for i in range(n)])
    close = (dist < threshold) & ~cannot & (member[:, None] != member[None, :])
    if not close.any():
        # No pair across components is close: no average can be either (most blocks).
        labels0: dict[int, int] = {}
        return [labels0.setdefault(int(c), len(labels0)) for c in member]
    m = len(roots)
    # Component-level sums of distances and cannot-link flags: O(n²), by sorting the items
    # by component and adding up contiguous row and column ranges.
    order = np.argsort(member, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(member[order]) != 0])
    d = dist[np.ix_(order, order)]
    sums = np.add.reduceat(np.add.reduceat(d, starts, axis=0), starts, axis=1)
    c = cannot[np.ix_(order, order)].astype(np.int32)
    block = np.add.reduceat(np.add.reduceat(c, starts, axis=0), starts, axis=1) > 0
    size = np.bincount(member, minlength=m).astype(float)
    strong = link.strong > 0.0 and link.loose > link.threshold
    if strong:
        least = np.minimum.reduceat(np.minimum.reduceat(d, starts, axis=0), starts, axis=1)
    else:
        least = np.zeros((m, m))
    np.fill_diagonal(block, True)
    allowed = ~block
    degree = allowed.sum(axis=1)
    hub = int(np.argmax(degree))
    if 2 * degree[hub] == degree.sum():
        # Every allowed pair involves one cluster (an incremental block: one new signature
        # beside mutually cannot-linked profiles): at most one merge, the hub's best.
        avg = link.effective(sums[hub] / (size[hub] * size), least[hub])
        avg = np.where(allowed[hub], avg, np.inf)
        best = int(np.argmin(avg))
        if avg[best] < threshold:
            member[member == max(hub, best)] = min(hub, best)
        labels1: dict[int, int] = {}
        return [labels1.setdefault(int(c), len(labels1)) for c in member]
    active = np.ones(m, dtype=bool)
    while True:
        avg = link.effective(sums / np.outer(size, size), least)
        avg[block] = np.inf
        avg[~active, :] = np.inf
        avg[:, ~active] = np.inf
        flat = int(np.argmin(avg))
        a, b = divmod(flat, m)
        if not np.isfinite(avg[a, b]) or avg[a, b] >= threshold:
            break
        if b < a:
            a, b = b, a
        sums[a, :] += sums[b, :]
        sums[:, a] += sums[:, b]
        size[a] += size[b]
        if strong:
            np.minimum(least[a, :], least[b, :], out=least[a, :])
            least[:, a] = least[a, :]
        block[a, :] |= block[b, :]
        block[:, a] |= block[:, b]
        block[a, a] = True
        active[b] = False
        member[member == b] = a
    labels: dict[int, int] = {}
    return [labels.setdefault(int(c), len(labels)) for c in member]
