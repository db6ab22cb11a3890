"""What users see of an author: profile pages, name look-up and search.

A profile is assembled on demand from its signatures and their records, so it always
reflects the latest resolve and curations: canonical name and variants, the works (records
of one work grouped together, each with source, year, title, abstract, primary subject and a
link to the original), "at least N records", co-authors, subjects and works per year.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from paperdesk.errors import NotFoundError
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize.ids import doi_url
from paperdesk.normalize.names import normalize_author
from paperdesk.resolve.authors_features import name_form, signatures_from_record
from paperdesk.resolve.authors_names import first_names_relation, fold, parse_given
from paperdesk.store.base import Store

AUTHOR_ID = re.compile(r"a[0-9a-f]{10}")


def original_link(rec: SourceRecord) -> str | None:
    """The record's page at its source."""
    if rec.url:
        return rec.url
    if rec.source == "arxiv" or rec.arxiv_id:
        return f"https://arxiv.org/abs/{rec.arxiv_id or rec.source_id}"
    if rec.doi:
        return doi_url(rec.doi)
    if rec.source == "openreview" or "openreview" in rec.ids:
        oid = rec.ids.get("openreview") or rec.source_id
        return f"https://openreview.net/forum?id={oid}"
    return None


def _work_ids(store: Store, keys: list[str]) -> dict[str, str]:
    """Work ids of the records (those resolved so far; the tables always exist, since
    every store is migrated when opened)."""
    from paperdesk.resolve.works_curate import work_ids_for

    return work_ids_for(store, keys)


def profile(store: Store, author_id: str, *, max_works: int | None = None) -> dict[str, Any]:
    """The full profile of `author_id` (redirects followed); raises NotFoundError."""
    authors = store.authors
    aid = authors.follow_redirects(author_id)
    row = authors.get_profile_row(aid)
    if row is None:
        raise NotFoundError(f"no author {author_id}")
    sigs = authors.signatures_of_author(aid)
    keys = sorted({s.record_key for s in sigs})
    records = store.get_records(keys)
    works_of = _work_ids(store, keys)
    variants = Counter(s.name for s in sigs)

    by_work: dict[str, list[SourceRecord]] = defaultdict(list)
    for key in keys:
        if key in records:
            by_work[works_of.get(key) or key].append(records[key])
    works: list[dict[str, Any]] = []
    per_year: Counter[int] = Counter()
    subjects: Counter[str] = Counter()
    for recs in by_work.values():
        recs.sort(key=lambda r: (r.year or 0, r.key))
        years = [r.year for r in recs if r.year]
        if years:
            per_year[min(years)] += 1
        primary = next(
            ((r.categories or r.keywords)[0] for r in recs if r.categories or r.keywords), None
        )
        for subject in {s for r in recs for s in (r.categories[:1] or r.keywords[:3])}:
            subjects[subject] += 1
        works.append(
            {
                "work_id": works_of.get(recs[0].key),
                "year": min(years) if years else None,
                "title": next((r.title for r in recs if r.title), None),
                "primary_subject": primary,
                "records": [
                    {
                        "key": r.key,
                        "source": r.source,
                        "year": r.year,
                        "title": r.title,
                        "abstract": r.abstract,
                        "primary_subject": next(iter(r.categories or r.keywords), None),
                        "venue": r.venue or r.journal_ref,
                        "url": original_link(r),
                    }
                    for r in recs
                ],
            }
        )
    works.sort(key=lambda w: (-(w["year"] or 0), w["title"] or ""))

    names = authors.authors_of_records(keys)
    co = Counter(a for a, _ in names if a != aid)
    co_names: dict[str, str] = {}
    for a, n in names:
        co_names.setdefault(a, n)
    out = {
        "author_id": aid,
        "redirected_from": author_id if author_id != aid else None,
        "name": row["name"],
        "variants": [{"name": n, "signatures": c} for n, c in variants.most_common()],
        "heading": f"Publications and source records attributed to {row['name']}",
        "records_count": len(keys),
        "records_count_text": f"at least {len(keys)} record{'s' if len(keys) != 1 else ''}",
        "works_count": len(works),
        "works": works[:max_works] if max_works is not None else works,
        "coauthors": [
            {"author_id": a, "name": co_names[a], "records": n} for a, n in co.most_common(50)
        ],
        "subjects": [{"subject": s, "works": n} for s, n in subjects.most_common(20)],
        "works_per_year": {str(y): per_year[y] for y in sorted(per_year)},
        "curations": [
            {"id": c.id, "action": c.action, "who": c.who, "at": c.at, "args": c.args}
            for c in authors.list_curations()
            if aid in (c.args.get("authors") or []) or aid == c.args.get("author")
        ],
    }
    return out


def _name_parts(name: str) -> tuple[str, str | None]:
    """(folded `given family` form, blocking key) of a typed name."""
    a = normalize_author(Author(name=name))
    sig = signatures_from_record(SourceRecord(source="query", source_id="0", authors=[a]))
    if not sig:
        return fold(name).strip(), None
    return name_form(sig[0]), sig[0].block


def find_authors(store: Store, name: str, *, limit: int = 20) -> list[str]:
    """Profile ids for a typed name or id: an author id (redirects followed); profiles
    with a variant spelt exactly so; else profiles in the name's block whose given name is
    compatible ("Y. Bengio" finds "Yoshua Bengio")."""
    authors = store.authors
    text = name.strip()
    if AUTHOR_ID.fullmatch(text):
        aid = authors.follow_redirects(text)
        return [aid] if authors.get_profile_row(aid) else []
    folded, block = _name_parts(text)
    found = authors.profiles_by_name(folded, limit)
    if found or block is None:
        return found
    want = parse_given(normalize_author(Author(name=text)).given)
    out = []
    for aid in authors.profiles_in_block(block, limit=500):
        sigs = authors.signatures_of_author(aid)
        if any(
            first_names_relation(want, parse_given(normalize_author(Author(name=s.name)).given))
            != "incompatible"
            for s in sigs
        ):
            out.append(aid)
        if len(out) >= limit:
            break
    return out


def search_authors(store: Store, query: str, *, limit: int = 20) -> list[dict[str, Any]]:
    """Profiles whose name variants contain every word of the query; summaries only."""
    words = [w for w in re.split(r"[^a-z0-9]+", fold(query)) if w][:8]
    return [summary(store, a) for a in store.authors.search_profiles(words, limit)]


def summary(store: Store, author_id: str) -> dict[str, Any]:
    authors = store.authors
    row = authors.get_profile_row(author_id)
    if row is None:
        raise NotFoundError(f"no author {author_id}")
    variants = Counter(s.name for s in authors.signatures_of_author(author_id))
    return {
        "author_id": author_id,
        "name": row["name"],
        "variants": [n for n, _ in variants.most_common()],
        "records_count": row["n_records"],
        "records_count_text": f"at least {row['n_records']} record{'s' if row['n_records'] != 1 else ''}",
    }
