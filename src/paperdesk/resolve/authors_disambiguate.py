"""Author disambiguation as pure functions over signatures: block, score, cluster.

`disambiguate(sigs)` is everything between "signatures" and "clusters": the store
orchestration (`paperdesk.resolve.authors`) and the benchmark both call it, so the figures
in docs/benchmarks.md measure exactly the code that runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from paperdesk.resolve.authors_cluster import UnionFind, cluster_block
from paperdesk.resolve.authors_features import (
    Signature,
    hard_cannot,
    pair_features,
    text_vectors,
)
from paperdesk.resolve.authors_model import PairModel, default_model

MAX_SUBBLOCK = 400
"""Blocks larger than this ("wang y" on a million records) are cut by full given name so
the O(n²) pair scoring stays bounded; initial-only signatures form their own sub-block."""


@dataclass
class Constraints:
    """Fixed decisions the clustering must respect.

    `must` groups of signature ids are one person; each `apart` entry is a list of groups
    that must stay pairwise apart; `fixed` maps signature ids to an existing profile (an
    incremental run keeps those profiles and only attaches new signatures to them)."""

    must: list[list[str]] = field(default_factory=list)
    apart: list[list[list[str]]] = field(default_factory=list)
    fixed: dict[str, str] = field(default_factory=dict)


def block_groups(sigs: Sequence[Signature], must: Iterable[Sequence[str]]) -> list[list[int]]:
    """Indices grouped by blocking key; blocks joined by a must-link (a curation across
    spellings, e.g. a changed surname) are clustered together."""
    by_block: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(sigs):
        by_block[s.block].append(i)
    names = list(by_block)
    index = {b: k for k, b in enumerate(names)}
    where = {s.sig_id: s.block for s in sigs}
    uf = UnionFind(len(names))
    for group in must:
        blocks = [where[g] for g in group if g in where]
        for b in blocks[1:]:
            uf.union(index[blocks[0]], index[b])
    joined: dict[int, list[int]] = defaultdict(list)
    for b, members in by_block.items():
        joined[uf.find(index[b])].extend(members)
    out: list[list[int]] = []
    for members in joined.values():
        out.extend(_subblocks(sigs, members))
    return out


def _subblocks(sigs: Sequence[Signature], members: list[int]) -> list[list[int]]:
    if len(members) <= MAX_SUBBLOCK:
        return [members]
    by_first: dict[str, list[int]] = defaultdict(list)
    for i in members:
        g = sigs[i].given
        by_first[g.joined if g.full else "~initial"].append(i)
    out: list[list[int]] = []
    for group in by_first.values():
        for start in range(0, len(group), MAX_SUBBLOCK):
            out.append(group[start : start + MAX_SUBBLOCK])
    return out


def score_block(
    sigs: Sequence[Signature],
    vectors: sparse.csr_matrix,
    model: PairModel,
    fixed: Mapping[str, str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(distance, cannot) matrices for one block. Pairs of two fixed signatures are not
    scored (their profiles are settled), nor are hard cannot-link pairs."""
    n = len(sigs)
    fixed = fixed or {}
    dist = np.ones((n, n))
    cannot = np.zeros((n, n), dtype=bool)
    pairs: list[tuple[int, int]] = []
    for i in range(n):
        fi = fixed.get(sigs[i].sig_id)
        for j in range(i + 1, n):
            fj = fixed.get(sigs[j].sig_id)
            if fi is not None and fj is not None:
                if fi != fj:
                    cannot[i, j] = cannot[j, i] = True
                continue
            if hard_cannot(sigs[i], sigs[j]):
                cannot[i, j] = cannot[j, i] = True
            else:
                pairs.append((i, j))
    if pairs:
        p = model.predict_proba(pair_features(sigs, vectors, pairs))
        idx = np.asarray(pairs)
        dist[idx[:, 0], idx[:, 1]] = 1.0 - p
        dist[idx[:, 1], idx[:, 0]] = 1.0 - p
    np.fill_diagonal(dist, 0.0)
    return dist, cannot


@dataclass
class BlockProblem:
    """One scored block, ready to cluster at any threshold."""

    members: list[int]
    dist: np.ndarray
    cannot: np.ndarray
    must: list[list[int]]
    fixed_profile: list[str | None]


def prepare(
    sigs: Sequence[Signature],
    *,
    model: PairModel | None = None,
    constraints: Constraints | None = None,
    vectors: sparse.csr_matrix | None = None,
) -> list[BlockProblem]:
    """Block and score every signature (the expensive part), constraints applied."""
    model = model or default_model()
    cons = constraints or Constraints()
    vecs = text_vectors(sigs) if vectors is None else vectors
    problems = []
    for members in block_groups(sigs, cons.must):
        local = {sigs[i].sig_id: k for k, i in enumerate(members)}
        sub = [sigs[i] for i in members]
        dist, cannot = score_block(sub, vecs[members], model, cons.fixed)
        groups: list[list[int]] = [[local[x] for x in g if x in local] for g in cons.must]
        by_profile: dict[str, list[int]] = defaultdict(list)
        for k, s in enumerate(sub):
            if s.sig_id in cons.fixed:
                by_profile[cons.fixed[s.sig_id]].append(k)
        groups.extend(by_profile.values())
        for apart in cons.apart:
            idx = [[local[x] for x in g if x in local] for g in apart]
            for a in range(len(idx)):
                for b in range(a + 1, len(idx)):
                    for x in idx[a]:
                        cannot[x, idx[b]] = True
                        cannot[idx[b], x] = True
        problems.append(
            BlockProblem(
                members=members,
                dist=dist,
                cannot=cannot,
                must=[g for g in groups if len(g) > 1],
                fixed_profile=[cons.fixed.get(s.sig_id) for s in sub],
            )
        )
    return problems


def solve(
    sigs: Sequence[Signature], problems: Sequence[BlockProblem], threshold: float
) -> list[str]:
    """A cluster label per signature: the fixed profile id for clusters holding fixed
    signatures, else `BLOCK/FIRST_INDEX/k`."""
    labels = [""] * len(sigs)
    for prob in problems:
        lab = cluster_block(prob.dist, prob.cannot, threshold, prob.must)
        profile_of: dict[int, str] = {}
        for k, fp in enumerate(prob.fixed_profile):
            if fp is not None:
                profile_of.setdefault(lab[k], fp)
        head = f"{sigs[prob.members[0]].block}/{prob.members[0]}"
        for k, i in enumerate(prob.members):
            labels[i] = profile_of.get(lab[k], f"{head}/{lab[k]}")
    return labels


def disambiguate(
    sigs: Sequence[Signature],
    *,
    model: PairModel | None = None,
    constraints: Constraints | None = None,
    threshold: float | None = None,
    vectors: sparse.csr_matrix | None = None,
) -> list[str]:
    """A cluster label per signature (see `solve`)."""
    model = model or default_model()
    problems = prepare(sigs, model=model, constraints=constraints, vectors=vectors)
    return solve(sigs, problems, model.threshold if threshold is None else threshold)
