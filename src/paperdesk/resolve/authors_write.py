"""Author profiles' rows: what a resolve run writes once its signatures have profile ids.

A profile row (`store.authors_base.ProfileRow`) holds the counts, the canonical name, the given
names, the name variants and a bounded sample of members (`pick_reps`), which incremental
runs compare new signatures with. A full run computes every row from what its units
counted (`write_full`); a day recomputes the rows of the profiles it touched
(`refresh_profiles`).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson

from paperdesk.resolve import authors_samples as samples
from paperdesk.resolve import authors_stream
from paperdesk.resolve.authors_features import Signature
from paperdesk.resolve.authors_units import UnitBuilder, Variant
from paperdesk.store.authors_base import (
    AuthorRepository,
    ProfileRow,
    ProfileState,
    pack_profile,
)

K_REPS = 3
"""Members of a stored profile an incremental run compares a new signature with: a
bounded sample (the K signatures with the smallest hash, so the same whichever order they
arrived in) instead of every record of the block."""


def _hash(sig_id: str) -> bytes:
    return hashlib.blake2b(sig_id.encode("utf-8"), digest_size=8).digest()


def pick_reps(candidates: Iterable[str], k: int = K_REPS) -> list[str]:
    """The `k` signature ids with the smallest hash: a sample that does not depend on the
    order signatures arrived in, and that merges (the sample of a union is the sample of
    the samples)."""
    return sorted(set(candidates), key=_hash)[:k]


def keep_samples(
    authors: AuthorRepository, sigs: Sequence[Signature], vecs: Any, wanted: set[str]
) -> None:
    """Store the feature data of the sampled members this run has in memory."""
    index = [k for k, s in enumerate(sigs) if s.sig_id in wanted]
    rows = samples.rows_of(vecs, index)
    codes: dict[str, int] = {}  # a full run's ~560k samples share ~1M distinct keys
    authors.put_samples(
        (
            (sigs[k].sig_id, *samples.encode(sigs[k], r, codes))
            for k, r in zip(index, rows, strict=True)
        ),
    )



def refresh_profiles(
    authors: AuthorRepository,
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
    are written. (Until session 8 the grown rows were computed by a forked process beside
    the signature writes: at most ~0.3 s of a 1M day, within its run-to-run noise, so the
    fork went, see #16.) `put_profiles` looks up in the base only the
    profiles whose block changed (`states` has every other's). Returns the ids that still
    have signatures, their samples, and the ids that had no row before (the profiles this
    run created)."""
    states = authors.profile_states(touched)  # signature writes do not change these

    write_signatures()
    rows, slow = _grown_rows(states, touched, rep_of, recount, gained)
    packed = [pack_profile(r) for r in rows]
    for aid, variants, n_records in authors.name_variants_by_author(slow):
        st = states.get(aid)
        cands = [*(st.reps if st else ()), *rep_of.get(aid, ())]
        if aid in recount or not cands:
            members = authors.member_ids(aid)
            keep = set(members)
            cands = [c for c in cands if c in keep] or members
        packed.append(pack_profile(_profile_row(aid, variants, n_records, cands)))
    authors.put_profiles(packed)
    alive = {p[0] for p in packed}
    sampled = {s for p in packed for s in orjson.loads(p[7])}
    return alive, sampled, alive - states.keys()


def _grown_rows(
    states: dict[str, ProfileState],
    touched: set[str],
    rep_of: dict[str, list[str]],
    recount: set[str],
    gained: dict[str, Counter[Variant]],
) -> tuple[list[ProfileRow], set[str]]:
    """The rows of the touched profiles that only gained signatures, from their stored
    state (no SQL), and the ids to recount."""
    rows: list[ProfileRow] = []
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
) -> ProfileRow:
    """A profile's row from its (name, folded, given, block, count) variants."""
    name, folded = canonical_name([(n, f, c) for n, f, _, _, c in variants])
    kept = sorted(variants, key=lambda v: (v[0], v[1], v[2] or "", v[3], v[4]))
    return ProfileRow(
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


def write_full(
    authors: AuthorRepository,
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
            authors.stage_commit(unit_author.items(), bulk=True)
            job = None
        else:
            # The unit map row by row needs the GIL: written before the thread starts.
            authors.map_parts(streamed.unit_rows(unit_author))
            job = pool.submit(authors.commit_parts, streamed.stage)
        profiles = _profiles_from_units(builder, unit_author)
        if job is not None:
            job.result()
    # A profile has one signature per record, except where a curation forces otherwise:
    # those few are counted in SQL, now that the signature rows are in.
    curated = {unit_author[u.index] for u in builder.units.values() if u.rep.sig_id in builder.solo}
    exact = authors.record_counts(curated)
    for p in profiles:
        p.n_records = exact.get(p.author_id, p.n_records)
    authors.put_profiles(profiles)
    keep_samples(authors, sigs, vecs, {r for p in profiles for r in p.reps})
    return {p.author_id for p in profiles}


def _profiles_from_units(builder: UnitBuilder, unit_author: dict[int, str]) -> list[ProfileRow]:
    """A full run's profile rows, from what the units counted while streaming (no scan
    of the million signature rows; `n_records` counts signatures, see `_write_full`)."""
    variants: dict[str, Counter[Variant]] = defaultdict(Counter)
    cands: dict[str, list[str]] = defaultdict(list)
    for u in builder.units.values():
        aid = unit_author[u.index]
        variants[aid].update(builder.variants[u.index])
        cands[aid].append(u.rep.sig_id)
    out: list[ProfileRow] = []
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
