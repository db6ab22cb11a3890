"""What an incremental run clusters its new signatures with, and a day's clustering over
both cores.

A day compares each new unit's representative with the sampled members of the stored
profiles of its block whose given names fit (`sampled_members`), read back from their
stored features (`member_signatures`). At a million records that is ~58k members of ~46k
profiles in ~3,400 blocks for ~5,500 new units: reading and decoding them was most of a
day's author time, in one process, before the blocks were scored and clustered in two.
`solve_day` shares the blocks out between forked workers instead: each reads, decodes,
scores and clusters its own blocks and hands back only the labels of the new units (and
the few members that had to be read from their records). Each block's labels depend only
on its members and their order, which the workers keep, so the day assigns exactly what
the one-process path assigns (`tests/test_resolve_authors.py` checks the stored rows).
(Until session 8 a helper interpreter vectorised the day's new texts ahead, beside the
attach: ~0.4 CPU-s a worker at a million records, under 20 % of the day, so it went and
each worker vectorises the new texts of its blocks, #16.)
"""

from __future__ import annotations

import itertools
import os
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace

import numpy as np
import orjson
from scipy import sparse

from paperdesk import parallel
from paperdesk.resolve import authors_samples as samples
from paperdesk.resolve.authors_cluster import UnionFind
from paperdesk.resolve.authors_disambiguate import Constraints, disambiguate
from paperdesk.resolve.authors_features import (
    Signature,
    set_people,
    signatures_from_record,
)
from paperdesk.resolve.authors_model import PairModel
from paperdesk.resolve.authors_names import GivenName, first_names_relation, parse_given
from paperdesk.resolve.authors_rarity import NameStats
from paperdesk.resolve.authors_units import Unit, UnitBuilder
from paperdesk.store.authors_base import AuthorRepository
from paperdesk.store.base import Store

BIG_BLOCK = 100
"""Profiles in a block from which an incremental run compares a new signature only with
the profiles of its own sub-block (same spelled-out given name, or initials with
initials), as a full run does in blocks over `MAX_SUBBLOCK` signatures."""

MAX_PROFILES = 60
"""At most this many profiles of one block are compared with the block's new
signatures: those with the most signatures (the likeliest owners), then by id."""

DAY_MIN = 1_000
"""New units (after attaching) from which a day's blocks are shared out between worker
processes; below it forking costs more than it saves."""

PARTS_PER_WORKER = 8
"""Block shares per worker: the cost of a block is only known once its profiles are read,
so many small shares even the workers' loads out."""

_relation = first_names_relation.__wrapped__
"""Uncached: each (block, given name) pair is compared once per run here."""


def _subblock(g: GivenName) -> str:
    return g.joined if g.full else "~initial"


def fitting(profiles: Sequence[tuple[str, str, int]], wanted: set[GivenName]) -> list[str]:
    """The ids of a block's profiles — (id, givens JSON, size) as stored — that a new
    signature with one of the `wanted` given names could join (no contradictory given
    name; in a big block, the same sub-block as in a full run), largest first, at most
    `MAX_PROFILES`."""
    big = len(profiles) > BIG_BLOCK
    keys = {_subblock(w) for w in wanted}
    fit: dict[str, bool] = {}
    fit_all: dict[str, bool] = {}
    """By a profile's whole givens text (many profiles share one, such as `["J."]`)."""

    def fits(g: str) -> bool:
        ok = fit.get(g)
        if ok is None:
            pg = parse_given(g)
            if big:
                ok = _subblock(pg) in keys
            else:
                ok = any(_relation(pg, w) != "incompatible" for w in wanted)
            fit[g] = ok
        return ok

    out: list[tuple[int, str]] = []
    for aid, givens, size in profiles:
        ok = fit_all.get(givens)
        if ok is None:
            ok = fit_all[givens] = any(fits(g) for g in orjson.loads(givens) or [""])
        if ok:
            out.append((size, aid))
    out.sort(key=lambda x: (-x[0], x[1]))
    return [aid for _, aid in out[:MAX_PROFILES]]


def sampled_members(
    authors: AuthorRepository, wanted: dict[str, set[GivenName]], changed: set[str]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The sampled members of every profile of the `wanted` blocks whose given names fit
    (see `fitting`), but not those on `changed` records: (block → member ids, in the
    order they are clustered; member id → profile id). Blocks come in sorted order."""
    by_block: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for aid, block, givens, size in authors.profile_summaries(wanted):
        by_block[block].append((aid, givens, size))
    chosen = {block: fitting(by_block[block], wanted[block]) for block in sorted(by_block)}
    sampled = authors.profile_samples([a for ids in chosen.values() for a in ids])
    members: dict[str, list[str]] = {}
    fixed: dict[str, str] = {}
    for block, ids in chosen.items():
        out = members[block] = []
        for aid in ids:
            for sig in sampled.get(aid, ()):
                if sig.rsplit("#", 1)[0] not in changed:
                    fixed[sig] = aid
                    out.append(sig)
    return members, fixed


def load_signatures(authors: AuthorRepository, sig_ids: Iterable[str]) -> list[Signature]:
    """Rebuild `Signature`s for stored signature ids from their records (the records hold
    the text, venue and co-authors the features need), by record key and position."""
    wanted: dict[str, set[int]] = defaultdict(set)
    for sig in sig_ids:
        key, _, pos = sig.rpartition("#")
        wanted[key].add(int(pos))
    records = authors.records_by_key(wanted)
    out: list[Signature] = []
    for key in sorted(records):
        out.extend(signatures_from_record(records[key], wanted[key]))
    return out


def member_signatures(
    authors: AuthorRepository, sig_ids: Sequence[str]
) -> tuple[list[Signature], list[Signature], dict[str, bytes]]:
    """(members with stored features in `sig_ids` order, the others rebuilt from their
    records, the stored text vectors as `samples.vectors` takes them)."""
    kept = authors.get_samples(sig_ids)
    found: list[Signature] = []
    vec_rows: dict[str, bytes] = {}
    for sig in sig_ids:
        row = kept.get(sig)
        if row is not None:
            found.append(samples.decode_meta(sig, row[0], row[1]))
            vec_rows[sig] = row[2]
    missing = load_signatures(authors, [sig for sig in sig_ids if sig not in kept])
    return found, missing, vec_rows


def name_stats(authors: AuthorRepository, builder: UnitBuilder, stored: int | None) -> NameStats:
    """Name statistics (`authors_rarity`) over the store after this run: the names the
    new units carry, and the stored ones unless this is a full run (`stored` None)."""
    forms: Iterable[str] = builder.name_counts
    if stored is not None:
        forms = itertools.chain(forms, authors.name_forms())
    return NameStats(forms)


def set_rarity(
    authors: AuthorRepository,
    sigs: Sequence[Signature],
    builder: UnitBuilder,
    stored: int | None,
    stats: NameStats | None = None,
) -> None:
    """Name rarity (`authors_rarity`) of `sigs` over the store after this run: from
    `stats`, else from `name_stats` (the `stored` names unless it is None, a full run)."""
    set_people(sigs, stats if stats is not None else name_stats(authors, builder, stored))


# -- a day over both cores ----------------------------------------------------------------


@dataclass
class Solved:
    """A day's context and clustering as the rest of `resolve_authors` needs them: the
    members read from their records (`context`, whose features are not stored yet) and the
    new representatives, in that order (`sigs`), their labels and text vectors, every
    compared member's profile (`fixed`), and how many signatures were clustered."""

    context: list[Signature]
    sigs: list[Signature]
    labels: list[str]
    vectors: sparse.csr_matrix
    fixed: dict[str, str]
    compared: int


@dataclass
class _Part:
    """One share's result; labels name the share's own indices (see `_first`)."""

    members: dict[str, list[str]]
    """Block → the members with stored features, in order."""
    missing: list[Signature]
    fixed: dict[str, str]
    pending: list[str]
    labels: list[str]
    """Of `missing`, then `pending`."""
    firsts: dict[int, str]
    """Share index → signature id, for the indices the labels name."""
    vectors: sparse.csr_matrix
    """Rows of `missing`, then `pending`."""
    blocks: set[str]
    """Blocks of every clustered signature (a curated profile's member may lie in a
    block without new units)."""
    curated: set[str]
    """Clustered signature ids that a must-link curation names."""
    compared: int


_Job = tuple[
    Store, int, dict[str, list[Unit]], set[str], UnitBuilder, int, Constraints, PairModel,
    NameStats,
]
"""What the workers share (`parallel.fork_map`): (the store, the parent's process id,
pending units by block, changed records, builder, stored signatures, curation
constraints, model, the store's name statistics)."""

_VIEWS: dict[int, Store] = {}
"""A forked worker's read-only view of the store (`store.reader()`, by process id: a
forked worker must not use its parent's connection), kept for the worker's later shares."""
_OPENED = ExitStack()


def _solve_part(blocks: list[str]) -> _Part:
    job: _Job = parallel.shared()
    store, parent = job[0], job[1]
    if os.getpid() == parent:  # the one-process path: a view for this call only
        with store.reader() as view:
            return _solve_blocks(view.authors, blocks, job)
    if os.getpid() not in _VIEWS:
        _VIEWS[os.getpid()] = _OPENED.enter_context(store.reader())
    return _solve_blocks(_VIEWS[os.getpid()].authors, blocks, job)


def _solve_blocks(authors: AuthorRepository, blocks: list[str], job: _Job) -> _Part:
    _, _, pending_of, changed, builder, stored, cons, model, stats = job
    pending = [u.rep for b in blocks for u in pending_of[b]]
    wanted = {b: {u.rep.given for u in pending_of[b]} for b in blocks}
    members, fixed = sampled_members(authors, wanted, changed)
    found, missing, vec_rows = member_signatures(authors, [s for ids in members.values() for s in ids])
    sigs = [*found, *missing, *pending]
    set_rarity(authors, sigs, builder, stored, stats)
    vecs = samples.vectors(sigs, vec_rows)
    labels = disambiguate(
        sigs, model=model, constraints=replace(cons, fixed=fixed), vectors=vecs, processes=1
    )
    firsts: dict[int, str] = {}
    for lab in labels:
        if "/" in lab:
            first = int(lab.rsplit("/", 2)[1])
            firsts[first] = sigs[first].sig_id
    kept = {s.sig_id for s in found}
    curated = {s for g in cons.must for s in g}
    skip = len(found)
    return _Part(
        members={b: [s for s in ids if s in kept] for b, ids in members.items()},
        missing=missing,
        fixed=fixed,
        pending=[s.sig_id for s in pending],
        labels=labels[skip:],
        firsts=firsts,
        vectors=vecs[skip:],
        blocks={s.block for s in sigs},
        curated={s.sig_id for s in sigs if s.sig_id in curated},
        compared=len(sigs),
    )


def can_solve_day(store: Store, pending: Collection[Unit]) -> bool:
    """A day on a store other processes can read, with enough new units to be worth the
    workers."""
    return _workers_possible(store) and len(pending) >= DAY_MIN


def _workers_possible(store: Store) -> bool:
    """A store that workers can open views of (not an in-memory one), fork, two cores."""
    return store.shared and parallel.can_fork() and parallel.workers() >= 2


def solve_day(
    store: Store,
    pending: Sequence[Unit],
    changed: set[str],
    builder: UnitBuilder,
    stored: int,
    cons: Constraints,
    model: PairModel,
    processes: int | None = None,
) -> Solved | None:
    """Read, score and cluster the blocks of the `pending` units (none re-clustered) in
    `processes` forked workers, a share of blocks at a time. Blocks that a must-link
    curation joins go to one share; None where the shares still reach into each other
    (a curated profile's member in a block of another share): the one-process path then
    runs instead, since those blocks are clustered together."""
    n = parallel.workers() if processes is None else processes
    pending_of: dict[str, list[Unit]] = defaultdict(list)
    for u in pending:
        pending_of[u.rep.block].append(u)
    authors = store.authors
    shares = _shares(authors, sorted(pending_of), pending, cons, n * PARTS_PER_WORKER)
    stats = name_stats(authors, builder, stored)
    job: _Job = (store, os.getpid(), pending_of, changed, builder, stored, cons, model, stats)
    parts = parallel.fork_map(_solve_part, shares, state=job, processes=n)
    share_of: dict[str, int] = {}
    for k, p in enumerate(parts):
        for b in p.blocks:
            if share_of.setdefault(b, k) != k:
                return None
    share_of = {s: k for k, p in enumerate(parts) for s in p.curated}
    if any(len({share_of[s] for s in g if s in share_of}) > 1 for g in cons.must):
        return None
    return _merge(parts, pending)


def _shares(
    authors: AuthorRepository, blocks: list[str], pending: Sequence[Unit], cons: Constraints, n: int
) -> list[list[str]]:
    """`blocks` dealt out into at most `n` shares, the blocks of one must-link curation
    (its stored signatures' and new units' blocks) in one share."""
    index = {b: k for k, b in enumerate(blocks)}
    uf = UnionFind(len(blocks))
    if cons.must:
        block_of = {u.rep.sig_id: u.rep.block for u in pending}
        curated = {s for g in cons.must for s in g} - set(block_of)
        block_of.update((r.sig_id, r.block) for r in authors.signatures_by_id(curated))
        for g in cons.must:
            ks = sorted({index[block_of[s]] for s in g if block_of.get(s) in index})
            for k in ks[1:]:
                uf.union(ks[0], k)
    groups: dict[int, list[str]] = defaultdict(list)
    for k, b in enumerate(blocks):
        groups[uf.find(k)].append(b)
    out: list[list[str]] = [[] for _ in range(min(n, len(groups)))]
    for k, members in enumerate(groups.values()):
        out[k % len(out)].extend(members)
    return out


def _merge(parts: Sequence[_Part], pending: Sequence[Unit]) -> Solved:
    """The shares' results in the order the one-process path has them: members with
    stored features by block (sorted), then the members read from records (by record and
    position), then the new representatives; labels name indices of that order."""
    members = {b: ids for p in parts for b, ids in p.members.items()}
    found = [s for b in sorted(members) for s in members[b]]
    missing = sorted((s for p in parts for s in p.missing), key=lambda s: (s.record_key, s.position))
    index = {s: k for k, s in enumerate(found)}
    index.update({s.sig_id: len(found) + k for k, s in enumerate(missing)})
    base = len(found) + len(missing)
    index.update({u.rep.sig_id: base + k for k, u in enumerate(pending)})
    label_of: dict[str, str] = {}
    row_of: dict[str, int] = {}
    for p in parts:
        ids = [*(s.sig_id for s in p.missing), *p.pending]
        for sid, lab in zip(ids, p.labels, strict=True):
            if "/" in lab:
                head, first, k = lab.rsplit("/", 2)
                lab = f"{head}/{index[p.firsts[int(first)]]}/{k}"
            label_of[sid] = lab
            row_of[sid] = len(row_of)
    sigs = [*missing, *(u.rep for u in pending)]
    stacked = sparse.vstack([p.vectors for p in parts], format="csr")
    rows = np.fromiter((row_of[s.sig_id] for s in sigs), dtype=np.int64, count=len(sigs))
    return Solved(
        context=missing,
        sigs=sigs,
        labels=[label_of[s.sig_id] for s in sigs],
        vectors=stacked[rows],
        fixed={s: a for p in parts for s, a in p.fixed.items()},
        compared=sum(p.compared for p in parts),
    )
