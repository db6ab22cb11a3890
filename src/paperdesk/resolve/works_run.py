"""The incremental works resolver: records changed since the last run → works.

`resolve_works(store)` reads the records changed since its checkpoint (the store's `seq`),
groups them with the pure stages of `paperdesk.resolve.works` (identity keys, LSH
candidates, pair scores, constrained clustering), then attaches each group to an existing
work — by a registered identifier first, else by the best content match among the stored
LSH band keys (`works_match`) — or founds a new work. Nothing already resolved is
recomputed, so a day of new records costs seconds whatever the size of the store;
`full=True` re-clusters everything and keeps each work's old id (the majority of its
records' previous ids).

All reads and writes go through the store's works repository (`store.works`), one
transaction a batch with the run's checkpoint in it.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np

from paperdesk import parallel
from paperdesk.resolve.blocking import LshIndex
from paperdesk.resolve.cluster import Clusterer
from paperdesk.resolve.pairs import MATCH_THRESHOLD
from paperdesk.resolve.works import Doc, make_doc
from paperdesk.resolve.works_match import (
    Prepared,
    Run,
    content_candidates,
    pack_doc,
    prepare,
)
from paperdesk.store.base import Store, WorkRepository, now
from paperdesk.store.codec import decode_record

CHECKPOINT = "resolve.works.seq"
FORMAT = 3
"""The format of the works tables this code writes: a store holding another is rebuilt by
its next run (a full run, keeping work ids), not migrated. 2: generic titles, title kinds
(errata, parts, replies) and related links, opening-sentence keys (`work_docs` layout
and band keys changed)."""
PARALLEL_MIN = 50_000
"""Runs with fewer changed records featurise in-process."""
DOC_CACHE = 400_000
"""Features of at most this many indexed records are kept between batches (~1.5 kB each)."""

@dataclass
class ResolveReport:
    """What one resolve run did."""

    records: int = 0
    new_works: int = 0
    by_identity: int = 0
    by_content: int = 0
    works_merged: int = 0
    seconds: float = 0.0
    last_seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def resolve_works(
    store: Store,
    *,
    full: bool = False,
    batch_size: int = 20_000,
    threshold: float = MATCH_THRESHOLD,
    workers: int | None = None,
    in_memory: bool | None = None,
    progress: Callable[[ResolveReport], None] | None = None,
) -> ResolveReport:
    """Resolve records changed since the last run into works (all records when `full`).

    A store whose works tables are in another format than this code's (`FORMAT`) gets a
    full run.

    `in_memory`: hold the stored LSH keys in memory for the run (default: when at least
    PARALLEL_MIN records are to resolve; loading them costs more than a small run saves)."""
    full = full or store.derived_format("works") != FORMAT
    report = _resolve_works(store, full, batch_size, threshold, workers, in_memory, progress)
    if full:
        store.set_derived_format("works", FORMAT)
    return report


def _resolve_works(
    store: Store,
    full: bool,
    batch_size: int,
    threshold: float,
    workers: int | None,
    in_memory: bool | None,
    progress: Callable[[ResolveReport], None] | None,
) -> ResolveReport:
    t0 = time.perf_counter()
    works = store.works
    report = ResolveReport()
    old_assignment: dict[str, int] = {}
    if full:
        old_assignment = works.assignment()
        with store.transaction():
            works.clear()
        after = 0
    else:
        after = int(store.get_checkpoint(CHECKPOINT) or 0)
    report.last_seq = after
    # During a full run new works get ids above every old one, remapped at the end.
    base = 0
    if full:
        base = max([0, *old_assignment.values(), works.max_redirect_id()]) + 1_000_000
    if not full:
        _backfill_docs(store)
    todo = works.count_changed(after)
    nproc = workers if workers is not None else parallel.workers()
    if workers is None and todo < PARALLEL_MIN:
        nproc = 1  # starting worker processes costs more than a small run
    run = Run({}, works.redirects())
    run.next_id = works.first_new_id(base)
    if in_memory or (in_memory is None and todo >= PARALLEL_MIN):
        run.index = _load_index(works)
    for batch in _prepared(works, after, batch_size, nproc, threshold):
        if len(run.cache) > DOC_CACHE:
            run.cache.clear()
        with store.transaction():
            resolve_batch(works, batch, threshold, report, run)
            report.records += len(batch.docs)
            report.last_seq = batch.seqs[-1]
            store.set_checkpoint(CHECKPOINT, report.last_seq)
        if progress:
            progress(report)
    if full:
        with store.transaction():
            _restore_ids(works, old_assignment, base)
    report.seconds = time.perf_counter() - t0
    return report


def _prepared(
    works: WorkRepository, after: int, batch_size: int, workers: int, threshold: float
) -> Iterator[Prepared]:
    """Prepared batches in order; with `workers` > 1 the next batches are prepared in
    other processes (`parallel.map_batches`, one batch ahead each) while this one resolves
    the current batch."""
    raw = works.changed_rows(after, batch_size)
    yield from parallel.map_batches(
        partial(prepare, threshold=threshold), raw, processes=workers, ahead=1
    )


def _load_index(works: WorkRepository) -> LshIndex:
    """The stored band keys in memory (a large run looks up tens of thousands of keys per
    batch)."""
    index = LshIndex()
    rows = works.lsh_all()
    index.add(rows[:, 0], rows[:, 1], rows[:, 2])
    return index


def _backfill_docs(store: Store) -> None:
    """Stores resolved before `work_docs` existed get the features of their indexed
    records once (later runs find the table filled and skip this)."""
    rowids = store.works.docs_missing()
    for i in range(0, len(rowids), 500):
        part = rowids[i : i + 500]
        rows = [
            (r, pack_doc(make_doc(decode_record(d))))
            for r, d in store.works.record_data_by_rowid(part)
        ]
        with store.transaction():
            store.works.put_docs(rows)


def _ids_conflict(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    return any(k in b and vals.isdisjoint(b[k]) for k, vals in a.items())



def resolve_batch(
    works: WorkRepository,
    batch: Prepared,
    threshold: float,
    report: ResolveReport,
    run: Run,
) -> None:
    docs, rowids, tkeys, akeys = batch.docs, batch.rowids, batch.tkeys, batch.akeys
    cache = run.cache
    keys = [d.key for d in docs]
    pos = {k: i for i, k in enumerate(keys)}
    pos_of = {rowid: i for i, rowid in enumerate(rowids)}
    prior = works.works_of(keys)

    # Curations touching these records.
    must_partner: dict[int, set[str]] = defaultdict(set)
    cannot_partner: dict[int, set[str]] = defaultdict(set)
    cl = Clusterer(docs)
    cons = works.constraints(keys)
    for a, b, kind in cons:
        if kind == "cannot" and a in pos and b in pos:
            cl.forbid(pos[a], pos[b])
    for a, b, kind in cons:
        if kind == "must" and a in pos and b in pos:
            cl.union(pos[a], pos[b], force=True)
    for a, b, kind in cons:
        for mine, other in ((a, b), (b, a)):
            if mine in pos and other not in pos:
                (must_partner if kind == "must" else cannot_partner)[pos[mine]].add(other)

    # Stage 1 and 2 inside the batch (pairs scored by `prepare`, best first).
    cl.link_identities()
    for _, i, j in batch.pairs:
        cl.union(i, j)
    groups = cl.groups()

    # Identity registry hits for every identifier in the batch.
    all_ids = sorted({ident for d in docs for ident in d.ids})
    registry = works.registry(all_ids)

    # Partner works named by curations (records outside this batch).
    partner_keys = sorted(
        {k for s in (*must_partner.values(), *cannot_partner.values()) for k in s}
    )
    partner_work = works.works_of(partner_keys)

    # Candidate existing works by identity, then content for groups without identity hits.
    plans: list[tuple[list[int], list[int], dict[int, float]]] = []
    need_content: list[int] = []
    for g in groups:
        hits = [registry[(k, v)] for i in g for k, v in docs[i].ids if (k, v) in registry]
        existing: list[int] = []
        for i in g:
            for k in must_partner.get(i, ()):
                if k in partner_work:
                    existing.append(partner_work[k])
        # The oldest work survives a merge: its id is the one most likely linked already.
        existing += sorted(set(hits) | {prior[keys[i]] for i in g if keys[i] in prior})
        existing = list(dict.fromkeys(existing))
        plans.append((g, existing, {}))
        need_content.append(len(plans) - 1)
    if need_content:
        content_candidates(works, plans, need_content, batch, run, threshold)

    forbidden_by_group: dict[int, set[int]] = {}
    for n, (g, _, _) in enumerate(plans):
        fw = {partner_work[k] for i in g for k in cannot_partner.get(i, ()) if k in partner_work}
        if fw:
            forbidden_by_group[n] = fw
    # Only works a group may join are read (its identifier hits, curated partners and
    # content matches above the threshold; works merged below are among them): the ~14k
    # content candidates of a 1M store's day were most of these look-ups, and a match
    # below the threshold is never consulted.
    cand_works = {
        w for _, ex, cs in plans for w in (*ex, *(w for w, s in cs.items() if s >= threshold))
    }
    wkeys = works.keys_of(cand_works)
    out = _Writes(now())
    out.load_flags(works, cand_works)

    # Decide and write.
    counts: Counter[str] = Counter()
    lsh_rows: list[tuple[int, int, int]] = []  # (batch index, 0 title | 1 abstract, work)
    for n, (g, existing, content) in enumerate(plans):
        gids: dict[str, set[str]] = {}
        for i in g:
            for k, v in docs[i].ids:
                gids.setdefault(k, set()).add(v)
        forbidden = forbidden_by_group.get(n, set())
        target: int | None = None
        how = "new"
        best = None
        for w in existing:
            w = run.follow(w)
            if w in forbidden:
                continue
            if target is None:
                target = w
                how = "curation" if any(must_partner.get(i) for i in g) else ""
                continue
            if w != target and out.flush(works) and _mergeable(works, target, w, wkeys):
                works.merge(w, target, "a record holds identifiers of both")
                out.merged(w, target)
                run.redirects[w] = target
                wkeys[target] = _merge_keys(wkeys.get(target, {}), wkeys.pop(w, {}))
                report.works_merged += 1
        # Content matches: the best one takes the group when no identifier did; any other
        # work the group matches as well joins too (as inside a batch, where matching pairs
        # cluster transitively), unless identifiers or a curation keep them apart.
        for w, s in sorted(content.items(), key=lambda x: -x[1]):
            if s < threshold:
                break
            w = run.follow(w)
            if w == target or w in forbidden:
                continue
            have = _merge_keys(wkeys.get(target, {}), gids) if target is not None else gids
            if _ids_conflict(have, wkeys.get(w, {})):
                continue
            if target is None:
                target, how, best = w, "content", s
            elif out.flush(works) and _mergeable(works, target, w, wkeys):
                keep, gone = min(target, w), max(target, w)  # the older id survives
                works.merge(gone, keep, "a record matches both by content")
                out.merged(gone, keep)
                run.redirects[gone] = keep
                wkeys[keep] = _merge_keys(wkeys.get(keep, {}), wkeys.pop(gone, {}))
                target = keep
                report.works_merged += 1
        if target is None:
            target = run.next_id
            run.next_id += 1
            out.new_works.append(target)
            out.flags[target] = [False, False]
            report.new_works += 1
            how = "new"
        wkeys[target] = _merge_keys(wkeys.get(target, {}), gids)
        _attach(out, target, g, docs, how, best, registry, counts)
        lsh_rows += _lsh_rows(works, out, target, g, docs)
    out.flush(works)
    related = [(docs[i].key, docs[j].key, kind) for i, j, kind in batch.related]
    if related or run.related:
        works.add_related(sorted(set(related + run.related)))
        run.related = []
    report.by_identity += counts["id"]
    report.by_content += counts["content"]
    # Band key rows: every key of each indexed (record, field), in key order (B-tree
    # inserts in key order touch each page once).
    parts = []
    for field, fkeys in ((0, tkeys), (1, akeys)):
        sel = [(i, w) for i, f, w in lsh_rows if f == field]
        if sel:
            idx = np.array([i for i, _ in sel], dtype=np.int64)
            bands = fkeys[idx]
            n = bands.shape[1]
            parts.append(
                np.stack(
                    [
                        bands.reshape(-1),
                        np.repeat(np.asarray(rowids, dtype=np.int64)[idx], n),
                        np.repeat(np.array([w for _, w in sel], dtype=np.int64), n),
                    ],
                    axis=1,
                )
            )
    indexed = sorted({rowids[i] for i, _, _ in lsh_rows})
    for rowid in indexed:
        cache.setdefault(rowid, docs[pos_of[rowid]])
    works.put_docs([(rowid, pack_doc(docs[pos_of[rowid]])) for rowid in indexed])
    if parts:
        arr = np.concatenate(parts)
        arr = arr[arr[:, 0] != 0]
        arr = arr[np.argsort(arr[:, 0], kind="stable")]
        works.add_lsh(arr)
        if run.index is not None:
            run.index.add(arr[:, 0], arr[:, 1], arr[:, 2])



def _merge_keys(a: dict[str, set[str]], b: dict[str, set[str]]) -> dict[str, set[str]]:
    out = {k: set(v) for k, v in a.items()}
    for k, v in b.items():
        out.setdefault(k, set()).update(v)
    return out


def _mergeable(
    works: WorkRepository, a: int, b: int, wkeys: dict[int, dict[str, set[str]]]
) -> bool:
    """Two existing works may merge unless their identifiers or a curation say otherwise."""
    if _ids_conflict(wkeys.get(a, {}), wkeys.get(b, {})):
        return False
    ka = works.members_unordered(a)
    cons = works.constraints(ka)
    others = [y if x in set(ka) else x for x, y, kind in cons if kind == "cannot"]
    if not others:
        return True
    return b not in set(works.works_of(others).values())


def _attach(
    out: _Writes,
    work: int,
    group: Sequence[int],
    docs: Sequence[Doc],
    how: str,
    best: float | None,
    registry: dict[tuple[str, str], int],
    counts: Counter[str],
) -> None:
    rows = []
    # Within the group: a record sharing an identifier with another member joined by it;
    # the first of a new work founded it; the rest joined by content.
    seen: Counter[tuple[str, str]] = Counter(ident for i in group for ident in docs[i].ids)
    for n, i in enumerate(group):
        d = docs[i]
        known = [k for k, v in d.ids if registry.get((k, v)) is not None]
        shared = [k for k, v in d.ids if seen[(k, v)] > 1]
        if how == "curation":
            h = how
        elif known and how != "new":
            h = f"id:{known[0]}"
        elif how == "content":
            h = how
        elif n > 0 and shared:
            h = f"id:{shared[0]}"
        elif n == 0 and how == "new":
            h = "new"
        elif how == "new":
            h = "content"
        else:
            h = f"id:{shared[0]}" if shared else "content"
        counts[h.split(":")[0]] += 1
        rows.append((d.key, work, h, best if h == "content" else None))
    out.records += rows
    idrows = [(k, v, work) for i in group for k, v in docs[i].ids]
    out.keys += idrows
    for k, v, _ in idrows:
        registry.setdefault((k, v), work)
    out.touched.add(work)


def _lsh_rows(
    works: WorkRepository, out: _Writes, work: int, group: Sequence[int], docs: Sequence[Doc]
) -> list[tuple[int, int, int]]:
    """(batch index, field, work) of the first title and the first abstract the work gets:
    their band keys are stored (`work_lsh`; not every record's: versions of one paper
    add little, and the table stays small)."""
    flags = out.flags_of(works, work)
    rows: list[tuple[int, int, int]] = []
    for i in group:
        if not flags[0] and len(docs[i].title_tokens):
            rows.append((i, 0, work))
            flags[0] = True
            out.touched.add(work)
        if not flags[1] and len(docs[i].abstract_shingles):
            rows.append((i, 1, work))
            flags[1] = True
            out.touched.add(work)
    return rows


class _Writes:
    """One batch's writes, held until the batch ends (or until a merge needs the tables
    current): executemany of thousands of rows instead of several statements per group."""

    def __init__(self, stamp: str):
        self.stamp = stamp
        self.new_works: list[int] = []
        self.records: list[tuple[str, int, str, float | None]] = []
        self.keys: list[tuple[str, str, int]] = []
        self.flags: dict[int, list[bool]] = {}
        """work → [indexed_title, indexed_abstract], current."""
        self.touched: set[int] = set()

    def load_flags(self, works: WorkRepository, ids: Iterable[int]) -> None:
        self.flags.update(works.flags([w for w in set(ids) if w not in self.flags]))

    def flags_of(self, works: WorkRepository, work: int) -> list[bool]:
        if work not in self.flags:
            self.load_flags(works, [work])
        return self.flags.setdefault(work, [True, True])  # no row: never index it

    def merged(self, old: int, new: int) -> None:
        """`_merge_into(old, new)` ran: the tables hold the merged flags; mirror them."""
        fo = self.flags.pop(old, [False, False])
        fn = self.flags.setdefault(new, [False, False])
        fn[0], fn[1] = fn[0] or fo[0], fn[1] or fo[1]
        self.touched.discard(old)

    def flush(self, works: WorkRepository) -> bool:
        """Write what is pending; True (so it can guard a merge in one condition)."""
        if self.new_works:
            works.add_works(self.new_works, self.stamp)
            self.new_works = []
        if self.touched:
            works.set_flags(
                [
                    (w, f[0], f[1])
                    for w in sorted(self.touched)
                    if (f := self.flags.get(w)) is not None
                ],
                self.stamp,
            )
            self.touched = set()
        if self.records:
            works.put_records(self.records)
            self.records = []
        if self.keys:
            works.add_keys(self.keys)
            self.keys = []
        return True



def _restore_ids(works: WorkRepository, old: dict[str, int], base: int) -> None:
    """After a full run: give each new work the old id most of its records had."""
    members: dict[int, list[str]] = defaultdict(list)
    for k, w in works.assignment().items():
        members[w].append(k)
    votes = []
    for w, ks in members.items():
        c = Counter(old[k] for k in ks if k in old)
        for o, n in c.items():
            votes.append((-n, o, w))
    votes.sort()
    remap: dict[int, int] = {}
    used: set[int] = set()
    for _, o, w in votes:
        if w in remap or o in used:
            continue
        remap[w] = o
        used.add(o)
    nxt = max([0, *old.values(), works.max_redirect_below(base)]) + 1
    for w in sorted(members):
        if w not in remap:
            remap[w] = nxt
            nxt += 1
    works.renumber(remap, base)
    # Old ids whose records now live elsewhere redirect to where most of them went.
    where: dict[int, Counter[int]] = defaultdict(Counter)
    cur = works.assignment()
    for k, o in old.items():
        if k in cur:
            where[o][cur[k]] += 1
    works.add_redirects(
        [
            (o, c.most_common(1)[0][0], "full re-resolve joined it to another work")
            for o, c in where.items()
            if o not in used
        ]
    )
    # Redirects made between temporary ids during this run point at final ids now.
    works.finish_renumber(base)
