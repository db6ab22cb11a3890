"""Curations of author profiles: merge, split and claim, kept across runs.

Each is logged (`store.authors.add_curation`) and then re-applied by every
resolve run as must-link / cannot-link constraints (`curation_constraints`), latest
curation winning for a signature named by several; the commands here log one and resolve
at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.resolve.authors_disambiguate import Constraints
from paperdesk.resolve.authors_model import PairModel
from paperdesk.store.authors_base import Curation, SignatureRow
from paperdesk.store.base import Store


class CurationError(PaperdeskError):
    """A curation that cannot be carried out as asked (the message says why)."""


def curation_constraints(curations: Sequence[Curation]) -> Constraints:
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


def _require(store: Store, author_id: str) -> tuple[str, list[SignatureRow]]:
    aid = store.authors.follow_redirects(author_id)
    rows = store.authors.signatures_of_author(aid)
    if not rows:
        raise NotFoundError(f"no author {author_id}")
    return aid, rows


def merge_authors(
    store: Store, a: str, b: str, *, who: str, model: PairModel | None = None
) -> dict[str, Any]:
    """`author merge A B`: A and B are one person, from now on and on every re-run."""
    aid, rows_a = _require(store, a)
    bid, rows_b = _require(store, b)
    if aid == bid:
        raise CurationError(f"{a} and {b} are already one profile ({aid})")
    sigs = [r.sig_id for r in (*rows_a, *rows_b)]
    with store.transaction():
        cid = store.authors.add_curation(
            "merge", [sigs], apart=False, args={"authors": [aid, bid]}, who=who
        )
    _resolve(store, model)
    return {"curation": cid, "author_id": _owner(store, sigs[0])}


def split_author(
    store: Store,
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
        cid = store.authors.add_curation(
            "split",
            [moved, rest],
            apart=True,
            args={"author": aid, "records": sorted(keys & {r.record_key for r in rows})},
            who=who,
        )
    _resolve(store, model)
    return {
        "curation": cid,
        "author_id": _owner(store, rest[0]),
        "new_author_id": _owner(store, moved[0]),
    }


def claim_record(
    store: Store,
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
    cands = store.authors.signatures_of_records([record_key])
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
        cid = store.authors.add_curation(
            "claim",
            [[*(r.sig_id for r in rows), sig]],
            apart=False,
            args={"author": aid, "record": record_key, "position": pick[0].position},
            who=who,
        )
    _resolve(store, model)
    return {"curation": cid, "author_id": _owner(store, sig)}


def _owner(store: Store, sig_id: str) -> str | None:
    rows = store.authors.signatures_by_id([sig_id])
    return rows[0].author_id if rows else None


def _expand_works(store: Store, items: Sequence[str]) -> set[str]:
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


def _resolve(store: Store, model: PairModel | None) -> None:
    from paperdesk.resolve.authors import resolve_authors  # the stage, which imports this

    resolve_authors(store, model=model)
