"""The read model behind the pages and their JSON twins: plain, JSON-ready dicts.

The web layer renders these dicts with templates or returns them as JSON, unchanged — so a
page and its `.json` twin can never disagree. Works are grouped from their source records;
subjects come from the sources (canonicalised by the taxonomy) and, where a work has none,
from the classifier (marked `predicted`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from datetime import date
from typing import Any

from paperdesk.errors import NotFoundError, QueryError
from paperdesk.model import SourceRecord
from paperdesk.store.base import Store
from paperdesk.subjects import taxonomy
from paperdesk.views import display_title, text_markup

PER_PAGE = 50
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")



def predicted_subjects(
    store: Store, records: dict[str, list[SourceRecord]]
) -> dict[str, list[dict[str, Any]]]:
    """Classifier subjects (from `paperdesk classify`) of the works whose records came with
    none, marked `predicted` with their probability; source subjects always win."""
    from paperdesk.subjects.classify import merge_subjects

    need = {w: recs for w, recs in records.items() if not any(r.categories for r in recs)}
    if not need:
        return {}
    per = store.subjects.of_records([r.key for recs in need.values() for r in recs])
    tax = taxonomy.load()
    out: dict[str, list[dict[str, Any]]] = {}
    for wid, recs in need.items():
        merged = merge_subjects([per.get(r.key, []) for r in recs])
        out[wid] = [
            {"code": e["subject"],
             "name": tax.categories[e["subject"]].name if e["subject"] in tax.categories else e["subject"],
             "predicted": bool(e["predicted"]), "probability": e.get("probability")}
            for e in merged
        ]
    return out


def _source_label(rec: SourceRecord) -> str:
    if rec.source == "arxiv":
        v = rec.latest_version
        return f"arXiv:{rec.source_id}{v or ''}"
    if rec.source == "doi":
        return f"DOI {rec.source_id}"
    if rec.source == "openreview":
        return f"OpenReview {rec.venue or rec.source_id}"
    return f"{rec.source}:{rec.source_id}"


def _lead(records: list[SourceRecord]) -> SourceRecord:
    """The record whose text a work shows: the published version if any, else arXiv,
    else the one with the longest abstract."""
    def rank(r: SourceRecord) -> tuple[int, int, int]:
        return (r.source == "doi", r.source == "arxiv", len(r.abstract or ""))

    return max(records, key=rank)


def work_display_title(lead: SourceRecord, records: list[SourceRecord]) -> tuple[str, str]:
    """The lead record's title, else another record's, else one derived from the abstract
    (`views.display_title`)."""
    title = lead.title if lead.title and lead.title.strip() else next(
        (r.title for r in records if r.title and r.title.strip()), None
    )
    abstract = lead.abstract or next((r.abstract for r in records if r.abstract), None)
    return display_title(title, abstract, _source_label(lead))


def display_titles(store: Store, work_ids: list[str]) -> dict[str, tuple[str, str]]:
    """`work_display_title` of each work (or record key before resolve) that exists."""
    records = store.catalog.work_records(list(dict.fromkeys(work_ids)))
    return {w: work_display_title(_lead(recs), recs) for w, recs in records.items() if recs}


def with_display_titles(store: Store, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adds `display_title` / `display_title_from` to hit-like dicts (`work_id`, `title`,
    as search and similar give them): the untitled ones get theirs from their records."""
    untitled = [h["work_id"] for h in items if not (h.get("title") or "").strip()]
    derived = display_titles(store, untitled) if untitled else {}
    for h in items:
        if (h.get("title") or "").strip():
            h["display_title"], h["display_title_from"] = h["title"], "title"
        else:
            h["display_title"], h["display_title_from"] = derived.get(
                h["work_id"], (f"[{h['work_id']}: no title or abstract]", "identifier"))
    return items


# How the paper page names a related work: (this work refers to it, it refers to this).
_RELATION = {
    "erratum": ("Corrects", "Erratum"),
    "reply": ("Replies to", "Reply"),
    "comment": ("Comments on", "Comment"),
    "abstract-of": ("Extended abstract of", "Extended abstract"),
    "part": ("Other part", "Other part"),
}


def related_works(store: Store, wid: str, keys: list[str]) -> list[dict[str, Any]]:
    """Works linked to this one by the works resolver as an erratum, reply, comment,
    extended abstract or other part (they stay works of their own): `work_id`,
    `display_title`, `kind` and the `relation` the page shows."""
    from paperdesk.resolve.works_match import format_id

    mine = set(keys)
    other: dict[str, tuple[str, bool]] = {}
    for a, b, kind in store.works.related_of(keys):
        if a in mine and b not in mine:
            other.setdefault(b, (kind, True))
        elif b in mine and a not in mine:
            other.setdefault(a, (kind, False))
    if not other:
        return []
    work_of = store.works.works_of(sorted(other))
    seen: dict[str, tuple[str, bool]] = {}
    for k, (kind, refers) in sorted(other.items()):
        if k in work_of and format_id(work_of[k]) != wid:
            seen.setdefault(format_id(work_of[k]), (kind, refers))
    titles = display_titles(store, list(seen))
    return [
        {
            "work_id": w,
            "display_title": titles[w][0],
            "display_title_from": titles[w][1],
            "kind": kind,
            "relation": _RELATION.get(kind, (kind, kind))[0 if refers else 1],
        }
        for w, (kind, refers) in seen.items()
        if w in titles
    ]


def subjects_of(records: list[SourceRecord]) -> list[dict[str, Any]]:
    """Source-given subjects, canonical, primary first (never ACM/MSC codes)."""
    tax = taxonomy.load()
    seen: list[str] = []
    for rec in sorted(records, key=lambda r: r.source != "arxiv"):
        for code in taxonomy.split_categories(rec.categories, tax).subjects:
            if code not in seen:
                seen.append(code)
    out = []
    for code in seen:
        cat = tax.get(code)
        out.append({"code": code, "name": cat.name if cat else code, "predicted": False,
                    "probability": None})
    return out


def work_summary(
    store: Store,
    work_id: str,
    records: list[SourceRecord],
    authors: dict[tuple[str, int], str],
    predicted: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """What a list entry shows for a work: title, authors (with profile ids), subjects,
    abstract, every original source."""
    lead = _lead(records)
    subjects = subjects_of(records) or (predicted or {}).get(work_id, [])
    years = [r.year for r in records if r.year]
    shown, shown_from = work_display_title(lead, records)
    return {
        "work_id": work_id,
        "title": lead.title,
        "display_title": shown,
        "display_title_from": shown_from,
        "markup": text_markup(lead.raw_format),
        "abstract": lead.abstract,
        "authors": [
            {"name": a.display or a.name, "author_id": authors.get((lead.key, i))}
            for i, a in enumerate(lead.authors)
        ],
        "subjects": subjects,
        "year": min(years) if years else None,
        "date": lead.submitted or lead.feed_date or lead.published,
        "doi": next((r.doi for r in records if r.doi), None),
        "arxiv_id": next((r.arxiv_id for r in records if r.arxiv_id), None),
        "venue": next((r.venue or r.journal_ref for r in records if r.venue or r.journal_ref), None),
        "sources": [
            {"key": r.key, "source": r.source, "label": _source_label(r), "url": r.url,
             "year": r.year}
            for r in records
        ],
    }


def _check_day(day: str) -> str:
    if not _DAY.match(day):
        raise QueryError(f"day must look like 2026-04-30, not {day[:40]!r}")
    try:
        date.fromisoformat(day)
    except ValueError:
        raise QueryError(f"{day!r} is not a calendar day") from None
    return day


def _subject_filter(code: str | None) -> str | None:
    if not code:
        return None
    tax = taxonomy.load()
    if code in tax.archives or code in tax.groups:
        return code
    canon = tax.canonical(code)
    if canon is None:
        raise QueryError(f"unknown subject {code[:40]!r} (try cs, cs.LG, math.PR, hep-th …)")
    return canon


def daily(
    store: Store,
    day: str | None = None,
    subject: str | None = None,
    page: int = 1,
    per_page: int = PER_PAGE,
) -> dict[str, Any]:
    """The works that appeared on `day` (default: the newest day), optionally of one
    archive or category, with per-subject counts and paging.

    Counting and filtering use the category index only; records are decoded just for the
    works on the requested page, so a day of a thousand papers costs what fifty do."""
    day = _check_day(day) if day else store.catalog.latest_day()
    code = _subject_filter(subject)
    if page < 1:
        raise QueryError("page starts at 1")
    out: dict[str, Any] = {"day": day, "subject": code, "page": page, "per_page": per_page,
                           "prev_day": None, "next_day": None, "total": 0, "pages": 0,
                           "subject_counts": [], "archive_counts": [], "works": []}
    if day is None:
        return out
    out["prev_day"], out["next_day"] = store.catalog.neighbour_days(day)
    tax = taxonomy.load()
    codes_of: dict[str, list[str]] = {}
    for wid, _, raw_code in store.catalog.day_index(day):
        codes = codes_of.setdefault(wid, [])
        canon = tax.canonical(raw_code) if raw_code else None
        if canon and canon not in codes:
            codes.append(canon)
    cats: Counter[str] = Counter()
    archives: Counter[str] = Counter()
    for codes in codes_of.values():
        cats.update(codes)
        archives.update({c.split(".")[0] for c in codes})
    out["subject_counts"] = [
        {"code": c, "name": tax.categories[c].name if c in tax.categories else c, "count": n}
        for c, n in sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    out["archive_counts"] = [
        {"code": a, "count": n} for a, n in sorted(archives.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    work_ids = [
        w for w, codes in codes_of.items()
        if not code or any(c == code or c.startswith(code + ".") for c in codes)
    ]
    out["total"] = len(work_ids)
    out["pages"] = max(1, math.ceil(len(work_ids) / per_page))
    shown = work_ids[(page - 1) * per_page : page * per_page]
    records = store.catalog.work_records(shown)
    keys = [r.key for recs in records.values() for r in recs]
    authors = store.catalog.author_ids(keys)
    predicted = predicted_subjects(store, records)
    out["works"] = [work_summary(store, w, records[w], authors, predicted) for w in shown if records[w]]
    return out


def paper(store: Store, work_id: str) -> dict[str, Any]:
    """A work with all its source records side by side."""
    asked = work_id.strip()
    if not re.match(r"^(W\d{1,12}|[a-z0-9][\w.-]{0,40}:\S{1,300})$", asked):
        raise NotFoundError(f"no paper {asked[:40]!r} (ids look like W123)")
    if ":" in asked:  # a record key: its work once resolved, else the record alone
        from paperdesk.resolve.works_curate import work_id_for

        asked = work_id_for(store, asked) or asked
    wid = store.catalog.follow_work(asked)
    records = store.catalog.work_records([wid])[wid]
    if not records:
        raise NotFoundError(f"no paper {asked}")
    authors = store.catalog.author_ids([r.key for r in records])
    predicted = predicted_subjects(store, {wid: records})
    out = work_summary(store, wid, records, authors, predicted)
    out["redirected_from"] = asked if asked != wid else None
    out["related"] = related_works(store, wid, [r.key for r in records])
    out["records"] = [
        {
            "key": r.key, "source": r.source, "id": r.source_id, "url": r.url,
            "label": _source_label(r), "title": r.title, "year": r.year,
            "versions": [{"version": v.version, "date": v.date} for v in r.versions],
            "submitted": r.submitted, "updated": r.updated, "published": r.published,
            "doi": r.doi, "journal_ref": r.journal_ref, "venue": r.venue,
            "comments": r.comments, "license": r.license, "categories": r.categories,
            "feed_date": r.feed_date, "format": r.raw_format,
            "type": r.extra.get("type") or r.extra.get("entry_type"),
            "volume": r.extra.get("volume"), "issue": r.extra.get("issue") or r.extra.get("number"),
            "pages": r.extra.get("page") or r.extra.get("pages"), "publisher": r.extra.get("publisher"),
        }
        for r in records
    ]
    return out


_COUNTS: dict[str, tuple[tuple[int, int], dict[str, int]]] = {}


def subject_counts(store: Store) -> dict[str, int]:
    """Records per canonical subject (aliases folded in), cached until records change."""
    version = store.catalog.data_version()
    cached = _COUNTS.get(store.path)
    if cached and cached[0] == version:
        return cached[1]
    tax = taxonomy.load()
    counts: Counter[str] = Counter()
    for code, n in store.catalog.code_counts().items():
        canon = tax.canonical(code)
        if canon:
            counts[canon] += n
    _COUNTS[store.path] = (version, dict(counts))
    return dict(counts)


def subjects_index(store: Store) -> dict[str, Any]:
    """The taxonomy grouped by group and archive, with full names and counts."""
    tax = taxonomy.load()
    counts = subject_counts(store)
    groups: dict[str, dict[str, Any]] = {}
    for cat in tax.subjects():
        g = groups.setdefault(cat.group, {"code": cat.group, "name": tax.groups.get(cat.group, cat.group),
                                          "count": 0, "archives": {}})
        arch = g["archives"].setdefault(cat.archive, {
            "code": cat.archive,
            "name": str(tax.archives.get(cat.archive, {}).get("name", cat.archive)),
            "count": 0, "categories": [],
        })
        n = counts.get(cat.id, 0)
        arch["categories"].append({"code": cat.id, "name": cat.name, "active": cat.active,
                                   "aliases": list(cat.aliases), "count": n})
        arch["count"] += n
        g["count"] += n
    out = []
    for g in groups.values():
        archives = sorted(g["archives"].values(), key=lambda a: (not a["categories"][0]["active"], a["code"]))
        out.append({**g, "archives": archives})
    return {"groups": out, "total_records": sum(counts.values())}


def subject_page(store: Store, code: str, limit: int = 50) -> dict[str, Any]:
    """A subject — a category (`cs.LG`, aliases such as `math.IT` lead to their canonical
    twin) or a whole archive (`cs`, `math`) — with its newest works."""
    tax = taxonomy.load()
    counts = subject_counts(store)
    subcats = [c for c in tax.subjects() if c.archive == code and c.id != code]
    cat = tax.get(code)
    if code in tax.archives and subcats:
        archive = tax.archives[code]
        rows = store.catalog.recent_in([], code + ".", limit)
        info: dict[str, Any] = {
            "code": code, "name": str(archive.get("name", code)), "kind": "archive",
            "archive": code, "group": tax.groups.get(str(archive.get("group")), ""),
            "active": bool(archive.get("active", True)), "aliases": [], "redirected_from": None,
            "count": sum(n for c, n in counts.items() if c.startswith(code + ".") or c == code),
            "categories": [{"code": c.id, "name": c.name, "count": counts.get(c.id, 0)}
                           for c in subcats],
        }
    elif cat is not None:
        canon = tax.categories[cat.canonical]
        rows = store.catalog.recent_in([canon.id, *canon.aliases], None, limit)
        info = {
            "code": canon.id, "name": canon.name, "kind": "category", "archive": canon.archive,
            "group": tax.groups.get(canon.group, canon.group), "active": canon.active,
            "aliases": list(canon.aliases), "redirected_from": code if code != canon.id else None,
            "count": counts.get(canon.id, 0), "categories": [],
        }
    else:
        raise NotFoundError(f"no arXiv subject {code[:40]!r} (see /subjects)")
    seen: dict[str, None] = {}
    for wid, _ in rows:
        seen.setdefault(wid)
    records = store.catalog.work_records(list(seen))
    authors = store.catalog.author_ids([r.key for recs in records.values() for r in recs])
    predicted = predicted_subjects(store, records)
    info["works"] = [
        work_summary(store, w, records[w], authors, predicted) for w in seen if records[w]
    ]
    info["latest_day"] = max(
        (r.feed_date for recs in records.values() for r in recs if r.feed_date), default=None
    )
    return info


def author_page(store: Store, author_id: str) -> dict[str, Any]:
    """An author profile for the page: the profile from the authors stage, plus subject
    names from the taxonomy and the bars of the works-per-year chart."""
    from paperdesk.resolve.authors_profiles import profile

    data = profile(store, author_id)
    for w in data["works"]:
        recs = w["records"]
        title = w["title"]
        abstract = next((r["abstract"] for r in recs if r.get("abstract")), None)
        label = recs[0]["key"] if recs else None
        w["display_title"], w["display_title_from"] = display_title(title, abstract, label)
        source = recs[0]["source"] if recs else None
        w["markup"] = text_markup({"doi": "crossref", "s2": "semanticscholar"}.get(source or "", source))
    tax = taxonomy.load()
    for s in data["subjects"]:
        cat = tax.get(s["subject"])
        s["name"] = cat.name if cat else s["subject"]
    years = sorted(int(y) for y in data["works_per_year"])
    if years:
        span = list(range(years[0], years[-1] + 1))
        top = max(data["works_per_year"].values())
        data["chart"] = {
            "width": 24 * len(span), "height": 120, "max": top,
            "bars": [
                {"year": y, "n": data["works_per_year"].get(str(y), 0),
                 "x": 24 * i, "h": round(100 * data["works_per_year"].get(str(y), 0) / top)}
                for i, y in enumerate(span)
            ],
        }
    else:
        data["chart"] = None
    return data


def author_search(store: Store, query: str, limit: int = 50) -> dict[str, Any]:
    from paperdesk.resolve.authors_profiles import search_authors

    query = query.strip()
    if not query:
        return {"query": "", "authors": []}
    if len(query) > 200:
        raise QueryError("author queries are limited to 200 characters")
    return {"query": query, "authors": search_authors(store, query, limit=limit)}
