"""A user's library: saved works (a star on every paper), tags, notes, read marks, the
user's own records (imported entries that match no work), and export.

Items are stored as the user named them once resolved: a work id `W123` (a record key is
turned into its work's id when the works stage has run), a record key before that, or
`mine:<id>` for an own record. Reading follows redirects, so a work merged into another
still shows as the work it became.
"""

from __future__ import annotations

import re
from typing import Any

from paperdesk import catalog
from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store.base import Store, now

_WORK = re.compile(r"^W\d{1,12}$")
_KEY = re.compile(r"^[a-z0-9][\w.-]{0,40}:\S{1,300}$")
_MINE = re.compile(r"^mine:(\d{1,12})$")
_TAG = re.compile(r"^[\w.:+-]{1,40}$")
MAX_NOTE = 10_000


def require_user(store: Store, username: str) -> str:
    if store.desk.user(username) is None:
        raise NotFoundError(f"no user {username!r} (make one with `paperdesk user add`)")
    return username


def current(store: Store, item: str) -> str:
    """A stored item as it stands now: a work id after redirects, a record key's work once
    resolved; own records unchanged."""
    if _WORK.match(item):
        return store.catalog.follow_work(item)
    if _MINE.match(item):
        return item
    wid = store.desk.record_works([item]).get(item)
    return store.catalog.follow_work(f"W{wid}") if wid is not None else item


def resolve_ref(store: Store, username: str, ref: str) -> str:
    """What a user typed (`W123`, `SOURCE:ID`, `mine:N`) as a library item; NotFoundError
    when it names nothing."""
    ref = ref.strip()
    mine = _MINE.match(ref)
    if mine:
        if not store.desk.own_records(username, [int(mine.group(1))]):
            raise NotFoundError(f"{username} has no own record {ref}")
        return ref
    if _WORK.match(ref):
        wid = store.catalog.follow_work(ref)
        if not store.works.exists(int(wid[1:])):
            raise NotFoundError(f"no work {ref}")
        return wid
    if _KEY.match(ref):
        item = current(store, ref)
        if item == ref and not store.desk.record_data([ref]):
            raise NotFoundError(f"no record {ref}")
        return item
    raise PaperdeskError(f"{ref[:60]!r} is not a work id (W123), a record key (SOURCE:ID) or mine:N")


def add(store: Store, username: str, refs: list[str]) -> list[dict[str, Any]]:
    require_user(store, username)
    items = [resolve_ref(store, username, r) for r in refs]
    saved = {i.item for i in store.desk.library(username)}
    stamp = now()
    out = []
    with store.transaction():
        for ref, item in zip(refs, items, strict=True):
            added = item not in saved and store.desk.add_items(username, [item], stamp) == 1
            saved.add(item)
            out.append({"ref": ref, "item": item, "added": added})
    return out


def _stored_items(store: Store, username: str) -> dict[str, str]:
    """current item → stored item, for every saved item."""
    return {current(store, i.item): i.item for i in store.desk.library(username)}


def remove(store: Store, username: str, refs: list[str]) -> list[dict[str, Any]]:
    require_user(store, username)
    stored = _stored_items(store, username)
    out = []
    with store.transaction():
        for ref in refs:
            try:
                item = resolve_ref(store, username, ref)
            except NotFoundError:
                item = ref.strip()
            key = stored.get(item, item)
            removed = store.desk.remove_items(username, [key]) == 1
            mine = _MINE.match(key)
            if removed and mine:
                store.desk.delete_own(username, [int(mine.group(1))])
            out.append({"ref": ref, "item": item, "removed": removed})
    return out


def update(
    store: Store, username: str, ref: str, *, tags: list[str] | None = None,
    note: str | None = None, read: bool | None = None,
) -> dict[str, Any]:
    """Tags (replacing the old ones), a note, a read mark of one saved item."""
    require_user(store, username)
    item = resolve_ref(store, username, ref)
    key = _stored_items(store, username).get(item)
    if key is None:
        raise NotFoundError(f"{ref} is not in {username}'s library")
    if tags is not None:
        tags = sorted({t.strip() for t in tags if t.strip()})
        bad = [t for t in tags if not _TAG.match(t)]
        if bad:
            raise PaperdeskError(f"tags are 1-40 letters, digits or . : + - _, not {bad[0][:40]!r}")
    if note is not None and len(note) > MAX_NOTE:
        raise PaperdeskError(f"notes are limited to {MAX_NOTE} characters")
    store.desk.update_item(username, key, tags=tags, note=note,
                           read_at=now() if read else None, unread=read is False)
    return {"item": item, "tags": tags, "note": note, "read": read}


def describe(store: Store, username: str, items: list[str]) -> dict[str, dict[str, Any]]:
    """item → the summary a list shows (title, authors, year, subjects …), for works,
    unresolved records and the user's own records."""
    works = [i for i in items if not _MINE.match(i)]
    records = store.catalog.work_records(works) if works else {}
    out: dict[str, dict[str, Any]] = {}
    for w, recs in records.items():
        if recs:
            out[w] = catalog.work_summary(store, w, recs, {})
    mine = {int(m.group(1)): i for i in items if (m := _MINE.match(i))}
    for rec in store.desk.own_records(username, list(mine)) if mine else []:
        d = rec.data
        out[mine[rec.id]] = {
            "work_id": None, "title": d.get("title"), "display_title": d.get("title") or f"[{rec.origin}]",
            "display_title_from": "title" if d.get("title") else "identifier",
            "abstract": d.get("abstract"), "authors": d.get("authors") or [],
            "year": d.get("year"), "date": str(d["year"]) if d.get("year") else None,
            "doi": d.get("doi"), "arxiv_id": d.get("arxiv_id"), "venue": d.get("venue"),
            "subjects": [{"code": c, "name": c} for c in d.get("categories") or []],
            "origin": rec.origin, "own": True,
        }
    return out


def items(store: Store, username: str, tag: str | None = None) -> list[dict[str, Any]]:
    """The library, newest first: each item with its tags, note, read mark and summary."""
    require_user(store, username)
    rows = [r for r in store.desk.library(username) if tag is None or tag in r.tags]
    shown = {r.item: current(store, r.item) for r in rows}
    info = describe(store, username, list(dict.fromkeys(shown.values())))
    out = []
    for r in rows:
        item = shown[r.item]
        s = info.get(item, {})
        out.append({
            "item": item, "work_id": item if _WORK.match(item) else None,
            "own": bool(_MINE.match(item)), "title": s.get("display_title") or item,
            "authors": [a.get("name") for a in s.get("authors") or []],
            "year": s.get("year"), "tags": r.tags, "note": r.note, "read_at": r.read_at,
            "added_at": r.added_at,
        })
    return out


def saved_set(store: Store, username: str) -> set[str]:
    """The current ids of everything saved (what the stars on pages show filled)."""
    return {current(store, i.item) for i in store.desk.library(username)}


def export_library(store: Store, username: str, fmt: str, tag: str | None = None) -> str:
    """The library as BibTeX, RIS or CSL-JSON (`paperdesk.export`, escaped per format)."""
    import orjson

    if fmt not in ("bibtex", "ris", "csl"):
        raise PaperdeskError("export formats: bibtex, ris, csl")
    entries: list[dict[str, Any]] = []
    for row in items(store, username, tag):
        item = row["item"]
        if row["own"]:
            work = describe(store, username, [item])[item]
            work["work_id"] = item.replace(":", "-")
        else:
            try:
                work = catalog.paper(store, item)
            except NotFoundError:
                continue
        entries.append(work)
    from paperdesk import export  # (bibtexparser: not for every desk command's start-up)

    if fmt == "csl":
        return orjson.dumps([export.to_csl(w) for w in entries], option=orjson.OPT_INDENT_2).decode() + "\n"
    convert = export.to_bibtex if fmt == "bibtex" else export.to_ris
    return "".join(convert(w) for w in entries)
