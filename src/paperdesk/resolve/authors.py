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
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.model import Author
from paperdesk.normalize.names import normalize_author
from paperdesk.resolve.authors_disambiguate import Constraints, disambiguate
from paperdesk.resolve.authors_features import (
    Signature,
    name_form,
    signatures_from_record,
)
from paperdesk.resolve.authors_model import PairModel, default_model
from paperdesk.resolve.authors_names import GivenName, first_names_relation, parse_given
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
    curations_applied: int = 0
    full: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def new_author_id(first_sig: str, taken: set[str]) -> str:
    digest = hashlib.sha1(first_sig.encode("utf-8")).hexdigest()
    for start in range(0, 30):
        candidate = "a" + digest[start : start + 10]
        if candidate not in taken:
            return candidate
    raise RuntimeError("could not find a free author id")  # pragma: no cover


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


def _load_signatures(store: SQLiteStore, rows: Sequence[db.SignatureRow]) -> list[Signature]:
    """Rebuild `Signature`s for stored rows from their records (the records hold the
    text, venue and co-authors the features need)."""
    want = {r.sig_id for r in rows}
    out: list[Signature] = []
    keys = sorted({r.record_key for r in rows})
    for i in range(0, len(keys), 500):
        for rec in store.get_records(keys[i : i + 500]).values():
            out.extend(s for s in signatures_from_record(rec) if s.sig_id in want)
    return out


def resolve_authors(
    store: SQLiteStore, *, full: bool = False, model: PairModel | None = None
) -> AuthorStats:
    """Attribute new and changed records' signatures to profiles (see the module doc)."""
    model = model or default_model()
    conn = store.conn
    state = store.get_checkpoint(CHECKPOINT) or {}
    stats = AuthorStats(full=full)
    since = 0 if full else int(state.get("seq", 0))
    seen_curation = 0 if full else int(state.get("curation", 0))
    if state.get("model") != model.meta.get("version"):
        since, seen_curation, stats.full = 0, 0, True

    new: list[Signature] = []
    changed: set[str] = set()
    last_seq = since
    for seq, rec in store.iter_changed(since):
        changed.add(rec.key)
        new.extend(signatures_from_record(rec))
        last_seq = max(last_seq, seq)
    stats.records = len(changed)

    curations = db.list_curations(conn)
    fresh = [c for c in curations if c.id > seen_curation]
    stats.curations_applied = len(fresh)
    by_id = {s.sig_id: s for s in new}
    cur_sigs = {s for c in fresh for g in c.groups for s in g}
    rows_cur = db.signatures_by_id(conn, cur_sigs - set(by_id))
    recluster = {r.block for r in rows_cur} | {by_id[s].block for s in cur_sigs if s in by_id}
    if stats.full:
        recluster |= {s.block for s in new}
    dirty = {s.block for s in new} | recluster

    # Curated groups reaching into other blocks pull those blocks in too.
    cons = curation_constraints(curations)
    while True:
        rows = db.signatures_in_blocks(conn, dirty)
        present = {r.sig_id for r in rows} | set(by_id)
        extra: set[str] = set()
        for g in [*cons.must, *(x for a in cons.apart for x in a)]:
            if any(s in present for s in g):
                extra.update(s for s in g if s not in present)
        more = {r.block for r in db.signatures_by_id(conn, extra)} - dirty
        if not more:
            break
        dirty |= more
        recluster |= more

    rows = _reachable(rows, new, recluster, changed)
    old_rows = [r for r in rows if r.record_key not in changed]
    previous = {r.sig_id: r.author_id for r in rows}
    previous.update({r.sig_id: r.author_id for r in db.signatures_of_records(conn, changed)})
    existing = _load_signatures(store, old_rows)
    sigs = [*existing, *new]
    fixed = {r.sig_id: r.author_id for r in old_rows if r.block not in recluster}
    cons.fixed = fixed
    stats.signatures = len(new)
    stats.blocks = len(dirty)
    stats.reclustered_blocks = len(recluster)
    stats.incremental_blocks = len(dirty - recluster)

    total = db.count_signatures(conn) + sum(1 for s in new if s.sig_id not in previous)
    ncount = db.name_counts(conn, {name_form(s) for s in sigs})
    bcount = db.block_counts(conn, {s.block for s in sigs})
    for s in new:
        if s.sig_id not in previous:
            ncount[name_form(s)] = ncount.get(name_form(s), 0) + 1
            bcount[s.block] = bcount.get(s.block, 0) + 1
    for s in sigs:
        s.name_count = max(1, ncount.get(name_form(s), 1))
        s.block_count = max(1, bcount.get(s.block, 1))
        s.total = total

    labels = disambiguate(sigs, model=model, constraints=cons) if sigs else []
    assigned = _assign_ids(sigs, labels, fixed, previous, conn)

    # Write only what moved: new or changed records' signatures, and signatures whose
    # profile changed (an incremental day touches a few rows, not whole blocks).
    fresh_ids = {s.sig_id for s in new}
    write = [
        s for s in sigs if s.sig_id in fresh_ids or previous.get(s.sig_id) != assigned[s.sig_id]
    ]
    touched = {assigned[s.sig_id] for s in write}
    touched |= {previous[s.sig_id] for s in write if s.sig_id in previous}
    touched |= {r.author_id for r in db.signatures_of_records(conn, changed)}
    with store.transaction():
        db.delete_signatures_of_records(conn, changed)
        db.put_signatures(
            conn,
            (
                db.SignatureRow(
                    s.sig_id,
                    s.record_key,
                    s.position,
                    s.name,
                    name_form(s),
                    s.block,
                    assigned[s.sig_id],
                    s.given_raw,
                )
                for s in write
            ),
        )
        names = {aid: canonical_name(db.signatures_of_author(conn, aid)) for aid in touched}
        before = set(previous.values())
        gone = db.refresh_profiles(conn, touched, names)
        for old in gone:
            heirs = Counter(assigned[s] for s, a in previous.items() if a == old and s in assigned)
            if heirs:
                db.add_redirect(conn, old, heirs.most_common(1)[0][0])
        stats.profiles_removed = len(gone)
        stats.profiles_created = len(set(assigned.values()) - before)
        store.set_checkpoint(  # joins this transaction
            CHECKPOINT,
            {
                "seq": last_seq,
                "curation": db.max_curation_id(conn),
                "model": model.meta.get("version"),
            },
        )
    stats.profiles_total = int(conn.execute("SELECT COUNT(*) FROM author_profiles").fetchone()[0])
    return stats


def _given(name: str) -> GivenName:
    return parse_given(normalize_author(Author(name=name)).given)


def _reachable(
    rows: Sequence[db.SignatureRow],
    new: Sequence[Signature],
    recluster: set[str],
    changed: set[str],
) -> list[db.SignatureRow]:
    """The stored signatures an incremental run must look at: all of re-clustered blocks,
    and in the other blocks only the profiles that have at least one member whose given
    name is compatible with a new signature of that block. A profile with none could
    never take a new signature (every pair would be a cannot-link), so its records need not
    be read — in a big block ("wang y") that is most of them."""
    new_by_block: dict[str, set[GivenName]] = defaultdict(set)
    for s in new:
        new_by_block[s.block].add(s.given)
    given_of: dict[str, GivenName] = {}

    def fits(r: db.SignatureRow) -> bool:
        wanted = new_by_block.get(r.block)
        if not wanted:
            return False
        g = parse_given(r.given) if r.given is not None else given_of.get(r.name)
        if g is None:  # a row written before the `given` column existed
            g = given_of[r.name] = _given(r.name)
        return any(first_names_relation(g, w) != "incompatible" for w in wanted)

    by_profile: dict[str, list[db.SignatureRow]] = defaultdict(list)
    for r in rows:
        by_profile[r.author_id].append(r)
    keep: list[db.SignatureRow] = []
    for members in by_profile.values():
        if any(r.block in recluster or r.record_key in changed for r in members) or any(
            fits(r) for r in members
        ):
            keep.extend(members)
    return keep


def canonical_name(rows: Sequence[db.SignatureRow]) -> tuple[str, str]:
    """(display, folded) of a profile: its most frequent spelled-out variant (longest on
    ties); an initials-only variant ("Y. Bengio") only when there is nothing else."""
    if not rows:
        return "", ""
    full = [r for r in rows if len(r.name_folded.split(" ")[0]) > 1] or list(rows)
    counts = Counter((r.name, r.name_folded) for r in full)
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
    else a new id."""
    clusters: dict[str, list[Signature]] = defaultdict(list)
    for s, lab in zip(sigs, labels, strict=True):
        clusters[lab].append(s)
    out: dict[str, str] = {}
    taken = set(fixed.values())
    order = sorted(clusters, key=lambda lab: (-len(clusters[lab]), lab))
    pending = []
    for lab in order:
        ms = clusters[lab]
        if lab in taken and any(s.sig_id in fixed for s in ms):
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
    all_ids = {r[0] for r in conn.execute("SELECT author_id FROM author_profiles")} | taken
    all_ids |= {r[0] for r in conn.execute("SELECT old_id FROM author_redirects")}
    for lab in pending:
        ms = clusters[lab]
        aid = new_author_id(min(s.sig_id for s in ms), all_ids)
        all_ids.add(aid)
        for s in ms:
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
                from paperdesk.store.works import get_work

                keys.update(r["key"] for r in get_work(store, part)["records"])
            except (ImportError, NotFoundError, ValueError) as exc:
                raise NotFoundError(f"{part} is neither a record key nor a known work") from exc
    return keys
