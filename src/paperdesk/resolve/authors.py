"""Author profiles: attribute every signature in the store to a person, incrementally.

`resolve_authors(store)` is the stage `paperdesk resolve` calls after works:

* records inserted or changed since the last run (the store's `seq`) give new signatures;
* each touched name block is re-clustered with the block's existing signatures *fixed* to
  their profiles (cannot-link between two existing profiles), so new signatures attach to
  an existing person or start a new one, and nobody else moves — ids stay stable;
* blocks touched by a new curation, or every block with `full=True`, are clustered from
  scratch; clusters then take over the old profile id that most of their signatures had;
* curations (merge / split / claim) are re-applied as must-link / cannot-link constraints on
  every run, latest curation winning for a signature named by several.

Profile ids are `a` + 10 hex digits of the SHA-1 of the profile's first signature id, so a
fresh store built from the same records gets the same ids.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.gcpause import gc_paused
from paperdesk.resolve import authors_context, authors_stream
from paperdesk.resolve import authors_samples as samples
from paperdesk.resolve.authors_disambiguate import Constraints, disambiguate
from paperdesk.resolve.authors_features import Signature
from paperdesk.resolve.authors_model import PairModel, default_model
from paperdesk.resolve.authors_names import GivenName, parse_given, variant_pairs
from paperdesk.resolve.authors_units import (
    StageRow,
    Unit,
    UnitBuilder,
    Variant,
    compatible,
    rank_of,
    stored_units,
)
from paperdesk.resolve.works_curate import work_ids_for
from paperdesk.store import authors as db
from paperdesk.store.sqlite import SQLiteStore

CHECKPOINT = "authors"


class CurationError(PaperdeskError):
    """A curation that cannot be carried out as asked (the message says why)."""


@dataclass
class AuthorStats:
    """What one `resolve_authors` run did."""

    records: int = 0
    signatures: int = 0
    blocks: int = 0
    incremental_blocks: int = 0
    reclustered_blocks: int = 0
    profiles_created: int = 0
    profiles_removed: int = 0
    profiles_total: int = 0
    folded: bool = False
    """Earlier days' delta tables were folded into the base ones beside this run's reads
    (see migration 041)."""
    curations_applied: int = 0
    units: int = 0
    """Author positions of works (see `authors_units`) the new signatures formed."""
    attached: int = 0
    """Units that joined their work's stored profile without scoring."""
    compared: int = 0
    """Signatures clustered: new unit representatives plus the stored ones they met."""
    full: bool = False
    nickname_pairs: int = 0
    """Given-name variant pairs the name comparison had (0: no pairs file was found, so
    "Chris" and "Christopher" stay apart; see `authors_names.variants_file`)."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall seconds per phase (read, attach, context, cluster, write), to see where a run's
    time goes."""

    _t: float = field(default_factory=time.perf_counter, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_")}

    def lap(self, phase: str) -> None:
        """Charge the time since the previous lap to `phase`."""
        now = time.perf_counter()
        self.seconds[phase] = round(self.seconds.get(phase, 0.0) + now - self._t, 3)
        self._t = now


def _id_candidates(first_sig: str) -> list[str]:
    digest = hashlib.sha1(first_sig.encode("utf-8")).hexdigest()
    return ["a" + digest[start : start + 10] for start in range(0, 30)]


def new_author_ids(conn: Any, firsts: Sequence[str], taken: set[str]) -> list[str]:
    """A new profile id for each first signature id: the first of its candidates that no
    profile, redirect or id in `taken` (nor an earlier one of `firsts`) has. The store is
    asked about the first candidates at once, and one by one about the rare later ones."""
    cands = [_id_candidates(f) for f in firsts]
    used = db.ids_in_use(conn, [c[0] for c in cands]) | taken
    out: list[str] = []
    for options in cands:
        aid = next(
            (c for k, c in enumerate(options)
             if c not in used and (k == 0 or not db.ids_in_use(conn, [c]))),
            None,
        )
        if aid is None:  # pragma: no cover
            raise RuntimeError("could not find a free author id")
        used.add(aid)
        out.append(aid)
    return out


def curation_constraints(curations: Sequence[db.Curation]) -> Constraints:
    """Must-link / apart groups from the curation log. A signature named by several
    curations follows the latest; in a split (`apart`), only the moved group (the first)
    is one person, the rest only has to stay apart from it."""
    latest: dict[str, int] = {}
    for c in curations:
        for g in c.groups:
            for sig in g:
                latest[sig] = c.id
    cons = Constraints()
    for c in curations:
        groups = c.groups[:1] if c.apart else c.groups
        for g in groups:
            kept = [s for s in g if latest.get(s) == c.id]
            if len(kept) > 1:
                cons.must.append(kept)
        if c.apart:
            cons.apart.append([[s for s in g if latest.get(s) == c.id] for g in c.groups])
    return cons


K_REPS = 3
"""Members of a stored profile an incremental run compares a new signature with: a
bounded sample (the K signatures with the smallest hash, so the same whichever order they
arrived in) instead of every record of the block."""

FORMAT = 3
"""Bumped when what the stage stores changes meaning (2: profile summaries, 3: stored
samples): a store
resolved by an older format is re-resolved in full once."""

_CHUNK = 5000


def _hash(sig_id: str) -> bytes:
    return hashlib.blake2b(sig_id.encode("utf-8"), digest_size=8).digest()


def pick_reps(candidates: Iterable[str], k: int = K_REPS) -> list[str]:
    """The `k` signature ids with the smallest hash: a sample that does not depend on the
    order signatures arrived in, and that merges (the sample of a union is the sample of
    the samples)."""
    return sorted(set(candidates), key=_hash)[:k]


def _stage_new(store: SQLiteStore, since: int, solo: set[str]) -> tuple[UnitBuilder, set[str], int]:
    """Read the records changed since `since` into units; their rows go to the stage."""
    conn = store.conn
    builder = UnitBuilder(solo)
    changed: set[str] = set()
    last_seq = since
    db.stage_reset(conn)
    full = since == 0
    work_of = db.all_works(conn) if full else {}
    batch: list[tuple[str, bytes]] = []

    def flush() -> None:
        works = work_of if full else work_ids_for(store, [k for k, _ in batch])
        rows: list[StageRow] = []
        for key, data in batch:
            rows.extend(builder.add(key, data, works.get(key)))
        db.stage_put(conn, rows)
        batch.clear()

    for seq, key, data in db.changed_records(conn, since):
        changed.add(key)
        last_seq = max(last_seq, seq)
        batch.append((key, data))
        if len(batch) >= _CHUNK:
            flush()
    flush()
    builder.finish()
    return builder, changed, last_seq


def _attach(
    conn: Any, builder: UnitBuilder, changed: set[str], recluster: set[str]
) -> dict[int, str]:
    """Units of a work some stored record of which already has this author position: the
    new signatures join that signature's profile, no scoring needed."""
    works = {u.work for u in builder.units.values() if u.work is not None}
    if not works:
        return {}
    work_of = {k: w for k, w in db.records_of_works(conn, works).items() if k not in changed}
    stored = stored_units(db.unit_rows_of_records(conn, work_of), work_of, builder.solo)
    out: dict[int, str] = {}
    for key, unit in builder.units.items():
        members = stored.get(key)
        if not members or unit.rep.block in recluster:
            continue
        votes = Counter(aid for _, aid, _ in members)
        aid = min(votes, key=lambda a: (-votes[a], a))
        given = next(g for _, a, g in members if a == aid)
        if compatible(parse_given(given), unit.rep.given):
            out[unit.index] = aid
    return out


def _recluster_blocks(
    conn: Any, builder: UnitBuilder, fresh: Sequence[db.Curation], cons: Constraints, full: bool
) -> set[str]:
    """Blocks to cluster from scratch: those a new curation touches (all, in a full run),
    and the blocks curated groups reach from there."""
    by_id = {u.rep.sig_id: u.rep.block for u in builder.units.values()}
    if full:
        return {u.rep.block for u in builder.units.values()}
    cur_sigs = {s for c in fresh for g in c.groups for s in g}
    recluster = {r.block for r in db.signatures_by_id(conn, cur_sigs - set(by_id))}
    recluster |= {by_id[s] for s in cur_sigs if s in by_id}
    groups = [*cons.must, *(x for a in cons.apart for x in a)]
    while recluster:
        present = {r.sig_id for r in db.signatures_in_blocks(conn, recluster)} | set(by_id)
        extra = {s for g in groups if any(x in present for x in g) for s in g} - present
        more = {r.block for r in db.signatures_by_id(conn, extra)} - recluster
        if not more:
            break
        recluster |= more
    return recluster


def _context(
    store: SQLiteStore,
    builder: UnitBuilder,
    pending: Sequence[Unit],
    recluster: set[str],
    changed: set[str],
) -> tuple[
    list[Signature], dict[str, str], dict[str, str], dict[str, str], dict[str, bytes]
]:
    """The stored signatures pending units are clustered with: in re-clustered blocks one
    representative per stored unit (they may move); elsewhere the sampled members of
    every profile of the block whose given names fit a pending unit (they stay put).
    Returns (signatures, fixed, previous, moved, stored text vector rows)."""
    conn = store.conn
    fixed: dict[str, str] = {}
    previous: dict[str, str] = {}
    moved: dict[str, str] = {}
    reps: list[str] = []
    if recluster:
        rows = [r for r in db.signatures_in_blocks(conn, recluster) if r.record_key not in changed]
        work_of = work_ids_for(store, sorted({r.record_key for r in rows}))
        stored = stored_units(
            ((r.record_key, r.sig_id, r.position, r.block, r.given, r.author_id) for r in rows),
            work_of,
            builder.solo,
        )
        for members in stored.values():
            rep = max(members, key=lambda m: (rank_of(parse_given(m[2]), 0, 0), m[0]))[0]
            reps.append(rep)
            for sig, aid, _ in members:
                previous[sig] = aid
                moved[sig] = rep
    wanted: dict[str, set[GivenName]] = defaultdict(set)
    for u in pending:
        if u.rep.block not in recluster:
            wanted[u.rep.block].add(u.rep.given)
    by_block, sampled = authors_context.sampled_members(conn, wanted, changed)
    fixed.update(sampled)
    reps.extend(s for ids in by_block.values() for s in ids)
    found, missing, vec_rows = authors_context.member_signatures(conn, reps)
    return [*found, *missing], fixed, previous, moved, vec_rows


def resolve_authors(
    store: SQLiteStore, *, full: bool = False, model: PairModel | None = None
) -> AuthorStats:
    """Attribute new and changed records' signatures to profiles (see the module doc).

    An incremental run has the cyclic garbage collector off: reference counting frees
    what it allocates (a 1M store's day peaks at the same 0.81 GiB either way), and the
    collector's passes over everything the process holds were ~3.5 s of that day's
    author stage (niced dev runs); a full run keeps it."""
    model = model or default_model()
    runs_full = _runs_full(store, full, model)
    with gc_paused(not runs_full), ExitStack() as aside:
        # Beside this run's reads, another process checkpoints what the works stage left in
        # the WAL (not in our commit) and folds the deltas of earlier days once they have
        # grown (migration 041; a full run rewrites everything anyway).
        fold = not runs_full and db.deltas_due(store.conn)
        done = aside.enter_context(store.checkpoint_aside(db.fold_statements() if fold else ()))
        stats = _resolve_authors(store, full=full, model=model, before_write=aside.close)
    stats.folded = bool(done.ok)
    return stats


def _runs_full(store: SQLiteStore, full: bool, model: PairModel) -> bool:
    """Whether this run resolves every record (asked, first run, or a new model/format)."""
    state = store.get_checkpoint(CHECKPOINT) or {}
    return (
        full
        or not int(state.get("seq", 0))
        or state.get("model") != model.meta.get("version")
        or state.get("format") != FORMAT
    )


def _resolve_authors(
    store: SQLiteStore, *, full: bool, model: PairModel, before_write: Callable[[], None]
) -> AuthorStats:
    conn = store.conn
    state = store.get_checkpoint(CHECKPOINT) or {}
    stats = AuthorStats(full=full, nickname_pairs=len(variant_pairs()) // 2)
    since = 0 if full else int(state.get("seq", 0))
    seen_curation = 0 if full else int(state.get("curation", 0))
    if state.get("model") != model.meta.get("version") or state.get("format") != FORMAT:
        since, seen_curation, stats.full = 0, 0, True
    stats.full = stats.full or since == 0

    curations = db.list_curations(conn)
    fresh = [c for c in curations if c.id > seen_curation]
    stats.curations_applied = len(fresh)
    cons = curation_constraints(curations)
    solo = {s for c in curations for g in c.groups for s in g}

    streamed = authors_stream.stream(store, solo) if authors_stream.can_stream(store, since) else None
    # A day's new texts are vectorised by a helper process while this one reads and
    # attaches (started now: its imports run beside the read).
    n_changed = 0 if stats.full or streamed is not None else db.count_changed(conn, since)
    with authors_context.texts_ahead(store.path, n_changed) as ahead:
        if streamed is None:
            builder, changed, last_seq = _stage_new(store, since, solo)
            stats.records = len(changed)
        else:  # a full run: nothing below looks at which records changed
            builder, changed, last_seq = streamed.builder, set(), streamed.last_seq
            stats.records = streamed.records
        stats.lap("read")
        stats.signatures = builder.signatures
        if ahead is not None:
            ahead.send(builder.units)
        old_of_changed = {} if stats.full else {
            r.sig_id: r.author_id for r in db.signatures_of_records(conn, changed)
        }
        recluster = _recluster_blocks(conn, builder, fresh, cons, stats.full)
        attached = {} if stats.full else _attach(conn, builder, changed, recluster)
        pending = [u for u in builder.units.values() if u.index not in attached]
        stats.lap("attach")
        stats.units, stats.attached = len(builder.units), len(attached)
        stored_total = None if stats.full else _stored_signatures(conn, state)
        solved = (
            authors_context.solve_day(
                conn, store.path, pending, changed, builder, stored_total or 0, cons, model,
                texts=ahead,
            )
            if not stats.full
            and not recluster
            and authors_context.can_solve_day(store.path, pending)
            else None
        )
    context, fixed, previous, moved, cached = (
        ([], {}, {}, {}, {})
        if stats.full
        else (solved.context, solved.fixed, {}, {}, {})
        if solved is not None
        else _context(store, builder, pending, recluster, changed)
    )
    new_reps = {u.rep.sig_id for u in pending}
    if stats.full:
        previous = {r.sig_id: r.author_id for r in db.signatures_by_id(conn, new_reps)}
    else:
        previous.update({s: a for s, a in old_of_changed.items() if s in new_reps})
    sigs = solved.sigs if solved is not None else [*context, *(u.rep for u in pending)]
    stats.compared = solved.compared if solved is not None else len(sigs)
    dirty = {u.rep.block for u in pending} | recluster
    stats.blocks = len(dirty | {u.rep.block for u in builder.units.values()})
    stats.reclustered_blocks = len(recluster)
    stats.incremental_blocks = stats.blocks - len(recluster)
    if solved is None:
        authors_context.set_frequencies(conn, sigs, builder, stored_total)
    stats.lap("context")  # with the workers: the blocks read, scored and clustered

    cons.fixed = fixed
    if solved is not None:
        vecs, labels = solved.vectors, solved.labels
    else:
        vecs = samples.vectors(sigs, cached) if streamed is None else streamed.vectors
        labels = disambiguate(sigs, model=model, constraints=cons, vectors=vecs) if sigs else []
    assigned = _assign_ids(sigs, labels, fixed, previous, conn)
    unit_author = dict(attached)
    unit_author.update({u.index: assigned[u.rep.sig_id] for u in pending})
    rewrite = {s: assigned[rep] for s, rep in moved.items() if assigned[rep] != previous[s]}
    stats.lap("cluster")

    before_write()
    stats.lap("aside")  # waiting for the checkpoint / fold process, if it is still at work
    if streamed is not None:
        db.stage_attach(conn, streamed.stage_files)
    with store.transaction():
        before = db.profile_ids(conn) if stats.full else set()
        if stats.full:
            db.delete_all(conn)
            db.set_authors(conn, rewrite.items())
        rep_of: dict[str, list[str]] = defaultdict(list)
        for u in builder.units.values():
            rep_of[unit_author[u.index]].append(u.rep.sig_id)
        lost = set(old_of_changed.values()) | {previous[s] for s in rewrite}
        touched = None if stats.full else set(rep_of) | lost | set(rewrite.values())
        if stats.full:
            after = _write_full(conn, builder, unit_author, sigs, vecs, streamed)
            created = after - before
        else:
            gained: dict[str, Counter[Variant]] = defaultdict(Counter)
            for u in builder.units.values():
                gained[unit_author[u.index]].update(builder.variants[u.index])
            recount = lost | set(rewrite.values()) | {
                unit_author[u.index] for u in builder.units.values() if u.rep.sig_id in solo
            }

            def write_signatures() -> None:
                db.delete_signatures_of_records(conn, changed)
                db.delete_samples_of_records(conn, changed)
                db.stage_commit(conn, unit_author.items())
                db.set_authors(conn, rewrite.items())

            after, sampled, created = _refresh_profiles(
                conn, touched or set(), rep_of, recount, gained, write_signatures
            )
            _keep_samples(conn, sigs, vecs, (sampled | {s.sig_id for s in context}) - set(cached))
        gone = (before - after) if stats.full else {a for a in (touched or ()) if a not in after}
        if not stats.full:
            db.delete_profiles(conn, gone)
        old_ids = {**old_of_changed, **previous}
        heirs: dict[str, Counter[str]] = defaultdict(Counter)
        for s, a in old_ids.items():
            h = assigned.get(s) or rewrite.get(s)
            if a in gone and h is not None:
                heirs[a][h] += 1
        for old in sorted(gone):
            votes = heirs.get(old)
            if votes:
                db.add_redirect(conn, old, min(votes, key=lambda h: (-votes[h], h)))
        stats.profiles_removed = len(gone)
        stats.profiles_created = len(created)
        store.set_checkpoint(  # joins this transaction
            CHECKPOINT,
            {
                "seq": last_seq,
                "curation": db.max_curation_id(conn),
                "model": model.meta.get("version"),
                "format": FORMAT,
                "signatures": (stored_total or 0) - len(old_of_changed) + builder.signatures,
            },
        )
    if streamed is not None:
        db.stage_detach(conn, len(streamed.stage_files))
        streamed.close()
    stats.profiles_total = db.count_profiles(conn)
    stats.lap("write")
    return stats


def _keep_samples(
    conn: Any, sigs: Sequence[Signature], vecs: Any, wanted: set[str]
) -> None:
    """Store the feature data of the sampled members this run has in memory."""
    index = [k for k, s in enumerate(sigs) if s.sig_id in wanted]
    rows = samples.rows_of(vecs, index)
    codes: dict[str, int] = {}  # a full run's ~560k samples share ~1M distinct keys
    db.put_samples(
        conn,
        (
            (sigs[k].sig_id, *samples.encode(sigs[k], r, codes))
            for k, r in zip(index, rows, strict=True)
        ),
    )


def _stored_signatures(conn: Any, state: dict[str, Any]) -> int:
    """Signatures in the store before this run: the count the last run left in its
    checkpoint (counting 5M rows took ~0.4 s of a day), else counted."""
    known = state.get("signatures")
    return int(known) if known is not None else db.count_signatures(conn)


def _refresh_profiles(
    conn: Any,
    touched: set[str],
    rep_of: dict[str, list[str]],
    recount: set[str],
    gained: dict[str, Counter[Variant]],
    write_signatures: Callable[[], None],
) -> tuple[set[str], set[str], set[str]]:
    """Write the day's signature rows (`write_signatures`) and recompute the rows of the
    touched profiles: counts, canonical name, given names, variants and the member
    sample. A profile that only gained signatures this run is updated from its stored
    variant counts plus the `gained` ones (as a full run counts them: one record per
    signature); one in `recount` (it lost signatures, or a curation is involved), and a
    row from before the counts were stored, is recounted from its signatures once they
    are written. The grown profiles' rows are computed and packed by a forked process
    while this one writes the signature rows (`_grown_ahead`; the second core idled
    through the write phase). Not from a thread (as until session 7): each of the ~40k
    SQLite steps of the signature writes gave up the GIL and waited up to the switch
    interval to get it back while the thread computed rows (timed: the signature writes
    0.25-0.3 s alone, 0.44-0.85 s beside). `put_profiles` looks up in the base only the
    profiles whose block changed (`states` has every other's). Returns the ids that still
    have signatures, their samples, and the ids that had no row before (the profiles this
    run created)."""
    states = db.profile_states(conn, touched)  # signature writes do not change these

    def grown() -> _Grown:
        rows, slow = _grown_rows(states, touched, rep_of, recount, gained)
        return [db.pack_profile(r) for r in rows], slow

    ahead = _grown_ahead(grown, len(touched))
    write_signatures()
    packed, slow = ahead() if ahead is not None else grown()
    for aid, variants, n_records in db.name_variants_by_author(conn, slow):
        st = states.get(aid)
        cands = [*(st.reps if st else ()), *rep_of.get(aid, ())]
        if aid in recount or not cands:
            members = db.member_ids(conn, aid)
            keep = set(members)
            cands = [c for c in cands if c in keep] or members
        packed.append(db.pack_profile(_profile_row(aid, variants, n_records, cands)))
    db.put_profiles(conn, packed, stored_blocks={a: st.block for a, st in states.items()})
    alive = {p[0] for p in packed}
    sampled = {s for p in packed for s in orjson.loads(p[7])}
    return alive, sampled, alive - states.keys()


_Grown = tuple[list[db.PackedProfile], set[str]]
"""The grown profiles' packed rows, and the ids to recount."""

GROWN_AHEAD_MIN = 2000
"""Touched profiles from which a day computes the grown rows in a forked process (a 1M
day has ~10k; below, the fork costs more than it saves)."""


def _grown_ahead(grown: Callable[[], _Grown], size: int) -> Callable[[], _Grown] | None:
    """Run `grown` in a forked process (it reads only memory: no SQL) and return what
    waits for its result, or None (`size` touched profiles are too few, or other threads
    are alive, which a fork must not copy mid-call). If the process fails, the result is
    computed here."""
    if size < GROWN_AHEAD_MIN or threading.active_count() > 1:
        return None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running any clean-up
        code = 1
        try:
            os.close(r)
            with os.fdopen(w, "wb") as out:
                pickle.dump(grown(), out, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(w)

    def result() -> _Grown:
        with os.fdopen(r, "rb") as src:
            data = src.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            return grown()
        got: _Grown = pickle.loads(data)  # noqa: S301  # our own child's pickle
        return got

    return result


def _grown_rows(
    states: dict[str, db.ProfileState],
    touched: set[str],
    rep_of: dict[str, list[str]],
    recount: set[str],
    gained: dict[str, Counter[Variant]],
) -> tuple[list[db.ProfileRow], set[str]]:
    """The rows of the touched profiles that only gained signatures, from their stored
    state (no SQL: this runs beside the signature writes), and the ids to recount."""
    rows: list[db.ProfileRow] = []
    slow: set[str] = set()
    for aid in sorted(touched):
        st = states.get(aid)
        if aid in recount or aid not in gained or (st is not None and st.variants is None):
            slow.add(aid)
            continue
        counts: Counter[Variant] = Counter()
        for name, folded, given, block, c in st.variants if st and st.variants else ():
            counts[(name, folded, given, block)] += c
        counts.update(gained[aid])
        n_records = (st.n_records if st else 0) + sum(gained[aid].values())
        cands = [*(st.reps if st else ()), *rep_of.get(aid, ())]
        rows.append(_profile_row(aid, [(*v, c) for v, c in counts.items()], n_records, cands))
    return rows, slow


def _profile_row(
    aid: str, variants: Sequence[tuple[str, str, str | None, str, int]], n_records: int,
    cands: Iterable[str],
) -> db.ProfileRow:
    """A profile's row from its (name, folded, given, block, count) variants."""
    name, folded = canonical_name([(n, f, c) for n, f, _, _, c in variants])
    kept = sorted(variants, key=lambda v: (v[0], v[1], v[2] or "", v[3], v[4]))
    return db.ProfileRow(
        author_id=aid,
        name=name,
        name_folded=folded,
        block=min(b for _, _, _, b, _ in variants),
        n_signatures=sum(c for *_, c in variants),
        n_records=n_records,
        givens=sorted({g for _, _, g, _, _ in variants if g}),
        reps=pick_reps(cands),
        variants=kept,
    )


def _write_full(
    conn: Any,
    builder: UnitBuilder,
    unit_author: dict[int, str],
    sigs: Sequence[Signature],
    vecs: Any,
    streamed: authors_stream.Streamed | None,
) -> set[str]:
    """A full run's writes: every signature row, the profile rows and the sampled
    members' features. Rows staged in the streaming workers' files are inserted and
    indexed by SQLite in a thread (the sqlite3 module lets go of the GIL while a statement
    runs) while this thread computes the profile rows. Returns the profile ids."""
    with ThreadPoolExecutor(1) as pool:
        if streamed is None:
            db.stage_commit(conn, unit_author.items(), bulk=True)
            job = None
        else:
            # The unit map row by row needs the GIL: written before the thread starts.
            db.stage_map_parts(conn, streamed.unit_rows(unit_author))
            job = pool.submit(db.stage_commit_parts, conn, len(streamed.stage_files))
        profiles = _profiles_from_units(builder, unit_author)
        if job is not None:
            job.result()
    # A profile has one signature per record, except where a curation forces otherwise:
    # those few are counted in SQL, now that the signature rows are in.
    curated = {unit_author[u.index] for u in builder.units.values() if u.rep.sig_id in builder.solo}
    exact = db.record_counts(conn, curated)
    for p in profiles:
        p.n_records = exact.get(p.author_id, p.n_records)
    db.put_profiles(conn, profiles, base=True)
    _keep_samples(conn, sigs, vecs, {r for p in profiles for r in p.reps})
    return {p.author_id for p in profiles}


def _profiles_from_units(builder: UnitBuilder, unit_author: dict[int, str]) -> list[db.ProfileRow]:
    """A full run's profile rows, from what the units counted while streaming (no scan
    of the million signature rows; `n_records` counts signatures, see `_write_full`)."""
    variants: dict[str, Counter[Variant]] = defaultdict(Counter)
    cands: dict[str, list[str]] = defaultdict(list)
    for u in builder.units.values():
        aid = unit_author[u.index]
        variants[aid].update(builder.variants[u.index])
        cands[aid].append(u.rep.sig_id)
    out: list[db.ProfileRow] = []
    for aid in sorted(variants):
        rows = [(*v, c) for v, c in variants[aid].items()]
        out.append(_profile_row(aid, rows, sum(c for *_, c in rows), cands[aid]))
    return out


def canonical_name(variants: Sequence[tuple[str, str, int]]) -> tuple[str, str]:
    """(display, folded) of a profile from its (name, folded, count) variants: the most
    frequent spelled-out variant (longest on ties); an initials-only variant ("Y. Bengio")
    only when there is nothing else."""
    if not variants:
        return "", ""
    full = [v for v in variants if len(v[1].split(" ")[0]) > 1] or list(variants)
    counts: Counter[tuple[str, str]] = Counter()
    for name, folded, n in full:
        counts[(name, folded)] += n
    (name, folded), _ = max(counts.items(), key=lambda kv: (kv[1], len(kv[0][0]), kv[0][0]))
    return name, folded


def _assign_ids(
    sigs: Sequence[Signature],
    labels: Sequence[str],
    fixed: dict[str, str],
    previous: dict[str, str],
    conn: Any,
) -> dict[str, str]:
    """Map cluster labels to profile ids: fixed profiles keep theirs; a re-clustered or
    new cluster takes the previous id most of its signatures had (largest cluster first),
    else a new id. `sigs` may leave out fixed members (a day solved in the workers hands
    back only the rest): a label that is a fixed profile's id stays that id."""
    clusters: dict[str, list[Signature]] = defaultdict(list)
    for s, lab in zip(sigs, labels, strict=True):
        clusters[lab].append(s)
    out: dict[str, str] = {}
    profiles = set(fixed.values())
    taken = set(profiles)
    order = sorted(clusters, key=lambda lab: (-len(clusters[lab]), lab))
    pending = []
    for lab in order:
        ms = clusters[lab]
        if lab in profiles:  # a cluster with fixed members (maybe not all in `sigs`)
            for s in ms:
                out[s.sig_id] = lab
            continue
        votes = Counter(previous[s.sig_id] for s in ms if s.sig_id in previous)
        choice = next((aid for aid, _ in votes.most_common() if aid not in taken), None)
        if choice is None:
            pending.append(lab)
            continue
        taken.add(choice)
        for s in ms:
            out[s.sig_id] = choice
    firsts = [min(s.sig_id for s in clusters[lab]) for lab in pending]
    for lab, aid in zip(pending, new_author_ids(conn, firsts, taken), strict=True):
        for s in clusters[lab]:
            out[s.sig_id] = aid
    return out


# -- curations ------------------------------------------------------------------------


def _require(store: SQLiteStore, author_id: str) -> tuple[str, list[db.SignatureRow]]:
    aid = db.follow_redirects(store.conn, author_id)
    rows = db.signatures_of_author(store.conn, aid)
    if not rows:
        raise NotFoundError(f"no author {author_id}")
    return aid, rows


def merge_authors(
    store: SQLiteStore, a: str, b: str, *, who: str, model: PairModel | None = None
) -> dict[str, Any]:
    """`author merge A B`: A and B are one person, from now on and on every re-run."""
    aid, rows_a = _require(store, a)
    bid, rows_b = _require(store, b)
    if aid == bid:
        raise CurationError(f"{a} and {b} are already one profile ({aid})")
    sigs = [r.sig_id for r in (*rows_a, *rows_b)]
    with store.transaction():
        cid = db.add_curation(
            store.conn, "merge", [sigs], apart=False, args={"authors": [aid, bid]}, who=who
        )
    resolve_authors(store, model=model)
    return {"curation": cid, "author_id": _owner(store, sigs[0])}


def split_author(
    store: SQLiteStore,
    author_id: str,
    records: Sequence[str],
    *,
    who: str,
    model: PairModel | None = None,
) -> dict[str, Any]:
    """`author split A --works …`: the profile's signatures on these records (record keys,
    or work ids expanded to their records) are another person; they stay apart from the
    rest of A on every re-run."""
    aid, rows = _require(store, author_id)
    keys = _expand_works(store, records)
    moved = [r.sig_id for r in rows if r.record_key in keys]
    if not moved:
        raise CurationError(f"none of {', '.join(records)} is attributed to {aid}")
    rest = [r.sig_id for r in rows if r.record_key not in keys]
    if not rest:
        raise CurationError(f"that would move every record of {aid}: nothing to split")
    with store.transaction():
        cid = db.add_curation(
            store.conn,
            "split",
            [moved, rest],
            apart=True,
            args={"author": aid, "records": sorted(keys & {r.record_key for r in rows})},
            who=who,
        )
    resolve_authors(store, model=model)
    return {
        "curation": cid,
        "author_id": _owner(store, rest[0]),
        "new_author_id": _owner(store, moved[0]),
    }


def claim_record(
    store: SQLiteStore,
    author_id: str,
    record_key: str,
    *,
    position: int | None = None,
    who: str,
    model: PairModel | None = None,
) -> dict[str, Any]:
    """`author claim A KEY [--position N]`: this author position of the record belongs to
    A. Without `--position`, the record's one signature whose name fits A's is taken."""
    aid, rows = _require(store, author_id)
    cands = db.signatures_of_records(store.conn, [record_key])
    if not cands:
        raise NotFoundError(f"no resolved authors on record {record_key} (run resolve first)")
    if position is not None:
        pick = [c for c in cands if c.position == position]
    else:
        blocks = {r.block for r in rows}
        pick = [c for c in cands if c.block in blocks]
        if len(pick) > 1:
            names = {r.name_folded for r in rows}
            pick = [c for c in pick if c.name_folded in names] or pick
    if len(pick) != 1:
        listing = ", ".join(f"{c.position}: {c.name}" for c in cands)
        raise CurationError(f"say which author position of {record_key} (--position): {listing}")
    sig = pick[0].sig_id
    with store.transaction():
        cid = db.add_curation(
            store.conn,
            "claim",
            [[*(r.sig_id for r in rows), sig]],
            apart=False,
            args={"author": aid, "record": record_key, "position": pick[0].position},
            who=who,
        )
    resolve_authors(store, model=model)
    return {"curation": cid, "author_id": _owner(store, sig)}


def _owner(store: SQLiteStore, sig_id: str) -> str | None:
    rows = db.signatures_by_id(store.conn, [sig_id])
    return rows[0].author_id if rows else None


def _expand_works(store: SQLiteStore, items: Sequence[str]) -> set[str]:
    """Record keys as given; work ids (no `:`) become their records' keys."""
    keys: set[str] = set()
    for item in items:
        for part in item.replace(",", " ").split():
            if ":" in part:
                keys.add(part)
                continue
            try:
                from paperdesk.resolve.works_curate import get_work

                keys.update(r["key"] for r in get_work(store, part)["records"])
            except (ImportError, NotFoundError, ValueError) as exc:
                raise NotFoundError(f"{part} is neither a record key nor a known work") from exc
    return keys
