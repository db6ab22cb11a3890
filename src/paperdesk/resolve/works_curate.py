"""Works as users see and correct them: a work page's data, the curation log, and the
curated merge and split (kept as record-level constraints that every later resolve run
obeys, `paperdesk.resolve.works_run`).

Everything goes through the store's works repository (`store.works`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.resolve.works import make_doc
from paperdesk.resolve.works_match import format_id
from paperdesk.store.base import Store, WorkRepository
from paperdesk.store.codec import decode_record

__all__ = [
    "follow",
    "format_id",
    "get_work",
    "list_curations",
    "merge_works",
    "parse_id",
    "split_work",
    "work_id_for",
    "work_ids_for",
]


def parse_id(text: str | int) -> int:
    """`W123`, `w123` or `123` → 123; raises NotFoundError for anything else."""
    s = str(text).strip()
    if s[:1] in "Ww":
        s = s[1:]
    if not s.isdigit():
        raise NotFoundError(f"{text!r} is not a work id (W<number>)")
    return int(s)


def follow(works: WorkRepository, work_id: int) -> int:
    """The live id of a work, following merge redirects (bounded against cycles)."""
    for _ in range(100):
        nxt = works.redirect_of(work_id)
        if nxt is None:
            return work_id
        work_id = nxt
    raise PaperdeskError(f"redirect loop at work {format_id(work_id)}")


def work_id_for(store: Store, key: str) -> str | None:
    """The work id (`W<n>`) of record `key`, or None before it was resolved."""
    w = store.works.work_of(key)
    return None if w is None else format_id(w)


def work_ids_for(store: Store, keys: Sequence[str]) -> dict[str, str]:
    """Batch form of `work_id_for`: key → `W<n>` for the keys already resolved."""
    return {k: format_id(w) for k, w in store.works.works_of(keys).items()}


def get_work(store: Store, work: str | int) -> dict[str, Any]:
    """A work with all its source records (source, id, year, title, url, how matched)."""
    works = store.works
    asked = parse_id(work)
    wid = follow(works, asked)
    if not works.exists(wid):
        raise NotFoundError(f"no work {format_id(asked)}")
    records: list[dict[str, Any]] = []
    for row in works.record_rows(wid):
        r = decode_record(row.data)
        records.append(
            {
                "key": row.key,
                "source": r.source,
                "id": r.source_id,
                "year": r.year,
                "title": r.title,
                "url": r.url,
                "doi": r.doi,
                "arxiv_id": r.arxiv_id,
                "venue": r.venue or r.journal_ref,
                "version": r.latest_version,
                "matched_by": row.how,
                "score": row.score,
            }
        )
    ids = [{"kind": k, "value": v} for k, v in works.identifiers(wid)]
    titled = [r for r in records if r["title"]]
    lead = sorted(titled, key=lambda r: (r["source"] != "doi" and not r["doi"], -(r["year"] or 0)))
    return {
        "work_id": format_id(wid),
        "title": lead[0]["title"] if lead else None,
        "years": sorted({r["year"] for r in records if r["year"]}),
        "identifiers": ids,
        "records": records,
        "redirected_from": format_id(asked) if asked != wid else None,
        "merged_from": [format_id(o) for o in works.merged_from(wid)],
    }


def list_curations(store: Store) -> list[dict[str, Any]]:
    return [
        {
            "id": c.id,
            "action": c.action,
            "work_a": format_id(c.work_a),
            "work_b": format_id(c.work_b) if c.work_b is not None else None,
            "records": c.records,
            "who": c.who,
            "note": c.note,
            "at": c.at,
        }
        for c in store.works.curations()
    ]


def merge_works(
    store: Store, a: str | int, b: str | int, *, who: str, note: str | None = None
) -> str:
    """Curated merge: work `b` joins work `a` (b redirects to a); kept as a constraint."""
    works = store.works
    wa, wb = follow(works, parse_id(a)), follow(works, parse_id(b))
    with store.transaction():
        ka, kb = works.members(wa), works.members(wb)
        if not ka:
            raise NotFoundError(f"no work {format_id(parse_id(a))}")
        if not kb:
            raise NotFoundError(f"no work {format_id(parse_id(b))}")
        if wa == wb:
            return format_id(wa)
        cid = works.log_curation("merge", wa, wb, {"a": ka, "b": kb}, who, note)
        works.constrain([(ka[0], k, "must") for k in kb] + [(ka[0], k, "must") for k in ka[1:]], cid)
        # The curation overrides an earlier split between these records.
        for x in ka:
            for y in kb:
                works.drop_cannot(x, y)
        works.merge(wb, wa, f"curated merge #{cid} by {who}")
        works.mark_curated(wa)
    return format_id(wa)


def split_work(
    store: Store,
    work: str | int,
    keys: Sequence[str],
    *,
    who: str,
    note: str | None = None,
) -> str:
    """Curated split: the records `keys` leave `work` for a new work of their own.

    Kept as constraints: the moved records stay together and apart from the others on
    every later run (incremental or full)."""
    works = store.works
    wid = follow(works, parse_id(work))
    with store.transaction():
        members = works.members(wid)
        if not members:
            raise NotFoundError(f"no work {format_id(parse_id(work))}")
        moving = list(dict.fromkeys(keys))
        missing = [k for k in moving if k not in members]
        if missing:
            raise PaperdeskError(f"not records of {format_id(wid)}: {', '.join(missing)}")
        staying = [k for k in members if k not in set(moving)]
        if not staying:
            raise PaperdeskError("a split must leave at least one record in the work")
        cid = works.log_curation("split", wid, None, {"moved": moving, "stayed": staying}, who, note)
        pairs = [(x, y, "cannot") for x in moving for y in staying]
        pairs += [(moving[0], k, "must") for k in moving[1:]]
        works.constrain(pairs, cid)
        new = works.new_work()
        works.set_curation_work_b(cid, new)
        works.move_records(moving, new)
        # Identifiers only the moved records carry now name the new work.
        stay_ids: set[tuple[str, str]] = set()
        move_ids: set[tuple[str, str]] = set()
        for part, bucket in ((staying, stay_ids), (moving, move_ids)):
            for data in works.record_data(part):
                bucket.update(make_doc(decode_record(data)).ids)
        for k, v in move_ids - stay_ids:
            works.move_key(k, v, new)
        works.mark_indexed(new)
    return format_id(new)
