"""Author disambiguation as pure functions over signatures: block, score, cluster.

`disambiguate(sigs)` is everything between "signatures" and "clusters": the store
orchestration (`paperdesk.resolve.authors`) and the benchmark both call it, so the figures
in docs/benchmarks.md measure exactly the code that runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
from scipy import sparse

from paperdesk import parallel
from paperdesk.resolve.authors_cluster import Linkage, UnionFind, cluster_block
from paperdesk.resolve.authors_features import Signature, text_vectors
from paperdesk.resolve.authors_model import PairModel, default_model
from paperdesk.resolve.authors_vectors import (
    SigArrays,
    block_cannot,
    pair_cannot,
    pair_rows,
    sig_arrays,
)

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


def _candidates(
    arr: SigArrays, members: Sequence[int], prof: Sequence[str | None]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cannot-link matrix of one block and the local pairs (a < b) worth scoring:
    pairs of two fixed signatures are settled (same profile, or cannot-link between
    profiles), and hard cannot-link pairs need no score."""
    ids = {p: k for k, p in enumerate(sorted({p for p in prof if p is not None}))}
    code = np.array([ids[p] if p is not None else -1 for p in prof], dtype=np.int64)
    both = (code[:, None] >= 0) & (code[None, :] >= 0)
    if len(members) == 1:
        return np.zeros((1, 1), dtype=bool), np.empty(0, np.int64), np.empty(0, np.int64)
    hard = block_cannot(arr, np.asarray(members, dtype=np.int64), code < 0)
    cannot = (hard & ~both) | (both & (code[:, None] != code[None, :]))
    a, b = np.nonzero(np.triu(~hard & ~both, 1))
    return cannot, a, b


@dataclass
class BlockProblem:
    """One scored block, ready to cluster at any threshold."""

    members: list[int]
    dist: np.ndarray
    cannot: np.ndarray
    must: list[list[int]]
    fixed_profile: list[str | None]


SCORE_BATCH = 200_000
"""Pairs scored per model call: one call per batch, not per block (the per-call overhead
of 150 trees dominated on stores full of small blocks)."""


def prepare(
    sigs: Sequence[Signature],
    *,
    model: PairModel | None = None,
    constraints: Constraints | None = None,
    vectors: sparse.csr_matrix | None = None,
) -> list[BlockProblem]:
    """Block and score every signature (the expensive part), constraints applied."""
    return [
        p
        for chunk in iter_problems(sigs, model=model, constraints=constraints, vectors=vectors)
        for p in chunk
    ]


def iter_problems(
    sigs: Sequence[Signature],
    *,
    model: PairModel | None = None,
    constraints: Constraints | None = None,
    vectors: sparse.csr_matrix | None = None,
    blocks: list[list[int]] | None = None,
    arr: SigArrays | None = None,
) -> Iterator[list[BlockProblem]]:
    """Scored blocks, a chunk at a time (about `SCORE_BATCH` pairs each): one model call
    per chunk, and only one chunk's distance matrices in memory at once. `blocks` (from
    `block_groups`) and `arr` (from `sig_arrays`) may be given to work on a part."""
    model = model or default_model()
    cons = constraints or Constraints()
    if arr is None:
        arr = sig_arrays(
            sigs, text_vectors(sigs) if vectors is None else vectors, cons.fixed
        )
    if blocks is None:
        blocks = block_groups(sigs, cons.must)
    block_of = {sigs[i].sig_id: k for k, members in enumerate(blocks) for i in members}
    musts: dict[int, list[list[str]]] = defaultdict(list)
    for g in cons.must:
        for k in {block_of[x] for x in g if x in block_of}:
            musts[k].append(g)
    aparts: dict[int, list[list[list[str]]]] = defaultdict(list)
    for apart in cons.apart:
        for k in {block_of[x] for g in apart for x in g if x in block_of}:
            aparts[k].append(apart)

    problems: list[BlockProblem] = []
    todo: list[tuple[int, np.ndarray, np.ndarray]] = []  # (problem, local a, local b)
    n_todo = 0
    for k, members in enumerate(blocks):
        local = {sigs[i].sig_id: n for n, i in enumerate(members)}
        prof = [cons.fixed.get(sigs[i].sig_id) for i in members]
        cannot, pa, pb = _candidates(arr, members, prof)
        groups = [[local[x] for x in g if x in local] for g in musts[k]]
        by_profile: dict[str, list[int]] = defaultdict(list)
        for n, i in enumerate(members):
            if sigs[i].sig_id in cons.fixed:
                by_profile[cons.fixed[sigs[i].sig_id]].append(n)
        groups.extend(by_profile.values())
        for apart in aparts[k]:
            idx = [[local[x] for x in g if x in local] for g in apart]
            for a in range(len(idx)):
                for b in range(a + 1, len(idx)):
                    for x in idx[a]:
                        cannot[x, idx[b]] = True
                        cannot[idx[b], x] = True
        dist = np.ones((len(members), len(members)))
        np.fill_diagonal(dist, 0.0)
        problems.append(
            BlockProblem(
                members=list(members),
                dist=dist,
                cannot=cannot,
                must=[g for g in groups if len(g) > 1],
                fixed_profile=prof,
            )
        )
        if len(pa):
            todo.append((len(problems) - 1, pa, pb))
            n_todo += len(pa)
        if n_todo >= SCORE_BATCH or k == len(blocks) - 1:
            _score(arr, model, problems, todo)
            yield problems
            problems, todo, n_todo = [], [], 0


def _score(
    arr: SigArrays,
    model: PairModel,
    problems: list[BlockProblem],
    todo: list[tuple[int, np.ndarray, np.ndarray]],
) -> None:
    if not todo:
        return
    left = np.concatenate([np.asarray(problems[p].members)[a] for p, a, _ in todo])
    right = np.concatenate([np.asarray(problems[p].members)[b] for p, _, b in todo])
    dist = 1.0 - model.predict_proba(pair_rows(arr, left, right))
    start = 0
    for p, a, b in todo:
        d = dist[start : start + len(a)]
        problems[p].dist[a, b] = d
        problems[p].dist[b, a] = d
        start += len(a)


def solve(
    sigs: Sequence[Signature], problems: Sequence[BlockProblem], threshold: float | Linkage
) -> list[str]:
    """A cluster label per signature: the fixed profile id for clusters holding fixed
    signatures, else `BLOCK/FIRST_INDEX/k`."""
    labels = [""] * len(sigs)
    _solve_into(labels, sigs, problems, threshold)
    return labels


def _solve_into(
    labels: list[str] | dict[int, str],
    sigs: Sequence[Signature],
    problems: Sequence[BlockProblem],
    threshold: float | Linkage,
    index: np.ndarray | None = None,
) -> None:
    """Cluster each problem into `labels`; `index` maps the indices of `sigs` (a part of
    the run's signatures) to the run's, which the labels name."""
    for prob in problems:
        lab = cluster_block(prob.dist, prob.cannot, threshold, prob.must)
        profile_of: dict[int, str] = {}
        for k, fp in enumerate(prob.fixed_profile):
            if fp is not None:
                profile_of.setdefault(lab[k], fp)
        first = prob.members[0] if index is None else int(index[prob.members[0]])
        head = f"{sigs[prob.members[0]].block}/{first}"
        for k, i in enumerate(prob.members):
            labels[i] = profile_of.get(lab[k], f"{head}/{lab[k]}")


PARALLEL_MIN = 50_000
"""Signatures from which `disambiguate` spreads the blocks over worker processes."""

_Job = tuple[Sequence[Signature], sparse.csr_matrix, PairModel, Constraints, Linkage]
"""What the workers share (`parallel.fork_map`)."""


def _solve_part(blocks: list[list[int]]) -> dict[int, str]:
    """Labels of a run of blocks. The worker builds the signature arrays of just these
    blocks' members (the codes only have to be equal where the values are, within a
    block), so the parent does not build them for all signatures first."""
    job: _Job = parallel.shared()
    sigs, vectors, model, cons, t = job
    members = np.unique(np.concatenate([np.asarray(b, dtype=np.int64) for b in blocks]))
    local = [sigs[i] for i in members.tolist()]
    where = {g: k for k, g in enumerate(members.tolist())}
    arr = sig_arrays(local, vectors[members], cons.fixed)
    out: dict[int, str] = {}
    for chunk in iter_problems(
        local, model=model, constraints=cons, blocks=[[where[i] for i in b] for b in blocks], arr=arr
    ):
        _solve_into(out, local, chunk, t, members)
    return {int(members[k]): lab for k, lab in out.items()}


def _parts(blocks: list[list[int]], n: int) -> list[list[list[int]]]:
    """Consecutive runs of blocks of about equal work (pairs grow with size squared)."""
    cost = np.cumsum([len(b) * len(b) + 8 for b in blocks])
    cuts = np.searchsorted(cost, np.linspace(0, cost[-1], n + 1)[1:-1])
    out, start = [], 0
    for c in [*cuts.tolist(), len(blocks)]:
        if c > start:
            out.append(blocks[start:c])
            start = c
    return out


def disambiguate(
    sigs: Sequence[Signature],
    *,
    model: PairModel | None = None,
    constraints: Constraints | None = None,
    threshold: float | Linkage | None = None,
    vectors: sparse.csr_matrix | None = None,
    processes: int | None = None,
) -> list[str]:
    """A cluster label per signature (see `solve`). From `PARALLEL_MIN` signatures on,
    blocks are scored and clustered by `processes` forked workers (default: one per
    core, at most 2); each block's labels depend only on the block, so the result is
    the same either way."""
    model = model or default_model()
    cons = constraints or Constraints()
    if threshold is None:
        t = model.linkage
    else:
        t = threshold if isinstance(threshold, Linkage) else Linkage(threshold)
    vectors = text_vectors(sigs) if vectors is None else vectors.tocsr()
    blocks = block_groups(sigs, cons.must)
    labels = [""] * len(sigs)
    n = processes or parallel.workers()
    if n > 1 and len(sigs) >= PARALLEL_MIN and parallel.can_fork():
        job: _Job = (sigs, vectors, model, cons, t)
        for part in parallel.fork_map(_solve_part, _parts(blocks, 8 * n), state=job, processes=n):
            for i, lab in part.items():
                labels[i] = lab
        return labels
    arr = sig_arrays(sigs, vectors, cons.fixed)
    single = _single_new(sigs, blocks, cons)
    if any(single):
        pairs = list(zip(blocks, single, strict=True))
        _solve_single_new(labels, sigs, arr, model, cons, [b for b, x in pairs if x], t)
        blocks = [b for b, x in pairs if not x]
    for chunk in iter_problems(sigs, model=model, constraints=cons, blocks=blocks, arr=arr):
        _solve_into(labels, sigs, chunk, t)
    return labels


def _single_new(sigs: Sequence[Signature], blocks: list[list[int]], cons: Constraints) -> list[bool]:
    """Which blocks hold fixed members and, last, one signature that is not fixed (most
    of an incremental day's blocks), with no curation in play: `_solve_single_new`
    settles them all at once."""
    fixed = cons.fixed
    if cons.must or cons.apart or not fixed:
        return [False] * len(blocks)
    return [
        len(b) >= 2
        and sigs[b[-1]].sig_id not in fixed
        and all(sigs[i].sig_id in fixed for i in b[:-1])
        for b in blocks
    ]


def _solve_single_new(
    labels: list[str],
    sigs: Sequence[Signature],
    arr: SigArrays,
    model: PairModel,
    cons: Constraints,
    blocks: list[list[int]],
    link: Linkage,
) -> None:
    """Labels of blocks of fixed profiles plus one new signature (see `_single_new`),
    for all of them with one scoring call and array operations instead of a
    `cluster_block` each, deciding exactly as it does there: no merge unless some
    scored pair is under the threshold; else the new signature joins the profile (not
    cannot-linked to it) of smallest effective average distance (`Linkage.effective`,
    from the average and the least distance to the profile's members), the first in
    member order on a tie, if that is under the threshold. The sums run over each
    profile's members in member order, as there."""
    threshold = link.threshold
    fixed = cons.fixed
    size = np.fromiter((len(b) - 1 for b in blocks), np.int64, len(blocks))
    member = np.fromiter(chain.from_iterable(b[:-1] for b in blocks), np.int64, int(size.sum()))
    block = np.repeat(np.arange(len(blocks)), size)
    new = np.fromiter((b[-1] for b in blocks), np.int64, len(blocks))[block]
    hard = pair_cannot(arr, member, new)
    dist = np.ones(len(member))
    scored = ~hard
    if scored.any():
        dist[scored] = 1.0 - model.predict_proba(pair_rows(arr, member[scored], new[scored]))
    close = np.bincount(block, weights=scored & (dist < threshold), minlength=len(blocks)) > 0
    # Profiles numbered in order of first appearance within each block, blocks in order.
    number: dict[tuple[int, str], int] = {}
    prof = np.fromiter(
        (
            number.setdefault((k, fixed[sigs[i].sig_id]), len(number))
            for k, i in zip(block.tolist(), member.tolist(), strict=True)
        ),
        np.int64,
        len(member),
    )
    order = np.argsort(prof, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(prof[order]) != 0])
    sums = np.add.reduceat(dist[order], starts)
    count = np.bincount(prof).astype(float)
    avg = link.effective(sums / (1.0 * count), np.minimum.reduceat(dist[order], starts))
    avg[np.bincount(prof, weights=hard) > 0] = np.inf
    prof_block = np.fromiter((k for k, _ in number), np.int64, len(number))
    first = np.flatnonzero(np.r_[True, np.diff(prof_block) != 0])
    least = np.minimum.reduceat(avg, first)
    names = [aid for _, aid in number]
    for k, b in enumerate(blocks):
        for i in b[:-1]:
            labels[i] = fixed[sigs[i].sig_id]
        lo = int(first[k])
        hi = int(first[k + 1]) if k + 1 < len(first) else len(names)
        if close[k] and least[k] < threshold:
            best = lo + int(np.argmin(avg[lo:hi]))
            labels[b[-1]] = names[best]
        else:
            labels[b[-1]] = f"{sigs[b[0]].block}/{b[0]}/{hi - lo}"
