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
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any

from paperdesk.resolve import authors_context, authors_stream
from paperdesk.resolve import authors_samples as samples
from paperdesk.resolve import authors_write as aw
from paperdesk.resolve.authors_curate import curation_constraints
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
from paperdesk.store.authors_base import AuthorRepository, Curation
from paperdesk.store.base import Store

CHECKPOINT = "authors"


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


def new_author_ids(authors: AuthorRepository, firsts: Sequence[str], taken: set[str]) -> list[str]:
    """A new profile id for each first signature id: the first of its candidates that no
    profile, redirect or id in `taken` (nor an earlier one of `firsts`) has. The store is
    asked about the first candidates at once, and one by one about the rare later ones."""
    cands = [_id_candidates(f) for f in firsts]
    used = authors.ids_in_use([c[0] for c in cands]) | taken
    out: list[str] = []
    for options in cands:
        aid = next(
            (c for k, c in enumerate(options)
             if c not in used and (k == 0 or not authors.ids_in_use([c]))),
            None,
        )
        if aid is None:  # pragma: no cover
            raise RuntimeError("could not find a free author id")
        used.add(aid)
        out.append(aid)
    return out


FORMAT = 3
"""Bumped when what the stage stores changes meaning (2: profile summaries, 3: stored
samples): a store
resolved by an older format is re-resolved in full once."""

_CHUNK = 5000


def _stage_new(store: Store, since: int, solo: set[str]) -> tuple[UnitBuilder, set[str], int]:
    """Read the records changed since `since` into units; their rows go to the stage."""
    authors = store.authors
    builder = UnitBuilder(solo)
    changed: set[str] = set()
    last_seq = since
    authors.stage_reset()
    full = since == 0
    work_of = authors.all_works() if full else {}
    batch: list[tuple[str, bytes]] = []

    def flush() -> None:
        works = work_of if full else work_ids_for(store, [k for k, _ in batch])
        rows: list[StageRow] = []
        for key, data in batch:
            rows.extend(builder.add(key, data, works.get(key)))
        authors.stage_put(rows)
        batch.clear()

    for seq, key, data in authors.changed_records(since):
        changed.add(key)
        last_seq = max(last_seq, seq)
        batch.append((key, data))
        if len(batch) >= _CHUNK:
            flush()
    flush()
    builder.finish()
    return builder, changed, last_seq


def _attach(
    authors: AuthorRepository, builder: UnitBuilder, changed: set[str], recluster: set[str]
) -> dict[int, str]:
    """Units of a work some stored record of which already has this author position: the
    new signatures join that signature's profile, no scoring needed."""
    works = {u.work for u in builder.units.values() if u.work is not None}
    if not works:
        return {}
    work_of = {k: w for k, w in authors.records_of_works(works).items() if k not in changed}
    stored = stored_units(authors.unit_rows_of_records(work_of), work_of, builder.solo)
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
    authors: AuthorRepository,
    builder: UnitBuilder,
    fresh: Sequence[Curation],
    cons: Constraints,
    full: bool,
) -> set[str]:
    """Blocks to cluster from scratch: those a new curation touches (all, in a full run),
    and the blocks curated groups reach from there."""
    by_id = {u.rep.sig_id: u.rep.block for u in builder.units.values()}
    if full:
        return {u.rep.block for u in builder.units.values()}
    cur_sigs = {s for c in fresh for g in c.groups for s in g}
    recluster = {r.block for r in authors.signatures_by_id(cur_sigs - set(by_id))}
    recluster |= {by_id[s] for s in cur_sigs if s in by_id}
    groups = [*cons.must, *(x for a in cons.apart for x in a)]
    while recluster:
        present = {r.sig_id for r in authors.signatures_in_blocks(recluster)} | set(by_id)
        extra = {s for g in groups if any(x in present for x in g) for s in g} - present
        more = {r.block for r in authors.signatures_by_id(extra)} - recluster
        if not more:
            break
        recluster |= more
    return recluster


def _context(
    store: Store,
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
    authors = store.authors
    fixed: dict[str, str] = {}
    previous: dict[str, str] = {}
    moved: dict[str, str] = {}
    reps: list[str] = []
    if recluster:
        rows = [r for r in authors.signatures_in_blocks(recluster) if r.record_key not in changed]
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
    by_block, sampled = authors_context.sampled_members(authors, wanted, changed)
    fixed.update(sampled)
    reps.extend(s for ids in by_block.values() for s in ids)
    found, missing, vec_rows = authors_context.member_signatures(authors, reps)
    return [*found, *missing], fixed, previous, moved, vec_rows


def resolve_authors(
    store: Store, *, full: bool = False, model: PairModel | None = None
) -> AuthorStats:
    """Attribute new and changed records' signatures to profiles (see the module doc)."""
    model = model or default_model()
    authors = store.authors
    state = store.get_checkpoint(CHECKPOINT) or {}
    stats = AuthorStats(full=full, nickname_pairs=len(variant_pairs()) // 2)
    since = 0 if full else int(state.get("seq", 0))
    seen_curation = 0 if full else int(state.get("curation", 0))
    if state.get("model") != model.meta.get("version") or state.get("format") != FORMAT:
        since, seen_curation, stats.full = 0, 0, True
    stats.full = stats.full or since == 0

    curations = authors.list_curations()
    fresh = [c for c in curations if c.id > seen_curation]
    stats.curations_applied = len(fresh)
    cons = curation_constraints(curations)
    solo = {s for c in curations for g in c.groups for s in g}

    streamed = authors_stream.stream(store, solo) if authors_stream.can_stream(store, since) else None
    if streamed is None:
        builder, changed, last_seq = _stage_new(store, since, solo)
        stats.records = len(changed)
    else:  # a full run: nothing below looks at which records changed
        builder, changed, last_seq = streamed.builder, set(), streamed.last_seq
        stats.records = streamed.records
    stats.lap("read")
    stats.signatures = builder.signatures
    old_of_changed = {} if stats.full else {
        r.sig_id: r.author_id for r in authors.signatures_of_records(changed)
    }
    recluster = _recluster_blocks(authors, builder, fresh, cons, stats.full)
    attached = {} if stats.full else _attach(authors, builder, changed, recluster)
    pending = [u for u in builder.units.values() if u.index not in attached]
    stats.lap("attach")
    stats.units, stats.attached = len(builder.units), len(attached)
    stored_total = None if stats.full else _stored_signatures(authors, state)
    solved = (
        authors_context.solve_day(
            store, pending, changed, builder, stored_total or 0, cons, model
        )
        if not stats.full
        and not recluster
        and authors_context.can_solve_day(store, pending)
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
        previous = {r.sig_id: r.author_id for r in authors.signatures_by_id(new_reps)}
    else:
        previous.update({s: a for s, a in old_of_changed.items() if s in new_reps})
    sigs = solved.sigs if solved is not None else [*context, *(u.rep for u in pending)]
    stats.compared = solved.compared if solved is not None else len(sigs)
    dirty = {u.rep.block for u in pending} | recluster
    stats.blocks = len(dirty | {u.rep.block for u in builder.units.values()})
    stats.reclustered_blocks = len(recluster)
    stats.incremental_blocks = stats.blocks - len(recluster)
    if solved is None:
        authors_context.set_rarity(authors, sigs, builder, stored_total)
    stats.lap("context")  # with the workers: the blocks read, scored and clustered

    cons.fixed = fixed
    if solved is not None:
        vecs, labels = solved.vectors, solved.labels
    else:
        vecs = samples.vectors(sigs, cached) if streamed is None else streamed.vectors
        labels = disambiguate(sigs, model=model, constraints=cons, vectors=vecs) if sigs else []
    assigned = _assign_ids(sigs, labels, fixed, previous, authors)
    unit_author = dict(attached)
    unit_author.update({u.index: assigned[u.rep.sig_id] for u in pending})
    rewrite = {s: assigned[rep] for s, rep in moved.items() if assigned[rep] != previous[s]}
    stats.lap("cluster")

    parts = authors.parts_attached(streamed.stage) if streamed is not None else nullcontext()
    with parts, store.transaction():
        before = authors.profile_ids() if stats.full else set()
        if stats.full:
            authors.delete_all()
            authors.set_authors(rewrite.items())
        rep_of: dict[str, list[str]] = defaultdict(list)
        for u in builder.units.values():
            rep_of[unit_author[u.index]].append(u.rep.sig_id)
        lost = set(old_of_changed.values()) | {previous[s] for s in rewrite}
        touched = None if stats.full else set(rep_of) | lost | set(rewrite.values())
        if stats.full:
            after = aw.write_full(authors, builder, unit_author, sigs, vecs, streamed)
            created = after - before
        else:
            gained: dict[str, Counter[Variant]] = defaultdict(Counter)
            for u in builder.units.values():
                gained[unit_author[u.index]].update(builder.variants[u.index])
            recount = lost | set(rewrite.values()) | {
                unit_author[u.index] for u in builder.units.values() if u.rep.sig_id in solo
            }

            def write_signatures() -> None:
                authors.delete_signatures_of_records(changed)
                authors.delete_samples_of_records(changed)
                authors.stage_commit(unit_author.items())
                authors.set_authors(rewrite.items())

            after, sampled, created = aw.refresh_profiles(
                authors, touched or set(), rep_of, recount, gained, write_signatures
            )
            aw.keep_samples(authors, sigs, vecs, (sampled | {s.sig_id for s in context}) - set(cached))
        gone = (before - after) if stats.full else {a for a in (touched or ()) if a not in after}
        if not stats.full:
            authors.delete_profiles(gone)
        old_ids = {**old_of_changed, **previous}
        heirs: dict[str, Counter[str]] = defaultdict(Counter)
        for s, a in old_ids.items():
            h = assigned.get(s) or rewrite.get(s)
            if a in gone and h is not None:
                heirs[a][h] += 1
        for old in sorted(gone):
            votes = heirs.get(old)
            if votes:
                authors.add_redirect(old, min(votes, key=lambda h: (-votes[h], h)))
        stats.profiles_removed = len(gone)
        stats.profiles_created = len(created)
        store.set_checkpoint(  # joins this transaction
            CHECKPOINT,
            {
                "seq": last_seq,
                "curation": authors.max_curation_id(),
                "model": model.meta.get("version"),
                "format": FORMAT,
                "signatures": (stored_total or 0) - len(old_of_changed) + builder.signatures,
            },
        )
    if streamed is not None:
        streamed.close()
    stats.profiles_total = authors.count_profiles()
    stats.lap("write")
    return stats


def _stored_signatures(authors: AuthorRepository, state: dict[str, Any]) -> int:
    """Signatures in the store before this run: the count the last run left in its
    checkpoint (counting 5M rows took ~0.4 s of a day), else counted."""
    known = state.get("signatures")
    return int(known) if known is not None else authors.count_signatures()


def _assign_ids(
    sigs: Sequence[Signature],
    labels: Sequence[str],
    fixed: dict[str, str],
    previous: dict[str, str],
    authors: AuthorRepository,
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
    for lab, aid in zip(pending, new_author_ids(authors, firsts, taken), strict=True):
        for s in clusters[lab]:
            out[s.sig_id] = aid
    return out
