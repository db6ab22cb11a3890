"""`paperdesk recommend`: the works that appeared in a date range, ranked for one user by
their model (`desk/model.py`) over their library and feedback, with reasons; never a work
already saved or rated, and — with `new_only` — never one shown to them before (across
days, versions and sources: a work is one paper however many records it has).

Also `feedback` (relevant / not relevant ratings), `follow` / `unfollow`.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import numpy as np
import scipy.sparse as sp

from paperdesk import catalog
from paperdesk.desk import model as M
from paperdesk.desk.library import current, require_user, resolve_ref
from paperdesk.errors import NotFoundError, PaperdeskError, QueryError
from paperdesk.model import SourceRecord
from paperdesk.store.base import now
from paperdesk.store.sqlite import SQLiteStore, decode_record

_CODE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")
_MINE = re.compile(r"^mine:(\d+)$")
MAX_DAYS = 62
"""The longest range ranked at once (two months: the benchmark's candidate pool)."""


def _lead(records: list[SourceRecord]) -> SourceRecord:
    return max(records, key=lambda r: (r.source == "arxiv", len(r.abstract or ""), r.source == "doi"))


def doc_of(ref: str, records: list[SourceRecord], day: str | None = None) -> M.Doc:
    """A work's records as the model's document (its lead record's text and authors, the
    subjects of all its records)."""
    lead = _lead(records)
    subjects: list[str] = []
    for r in records:
        for c in r.categories:
            if _CODE.match(c) and c not in subjects:
                subjects.append(c)
    return M.Doc(ref=ref, title=lead.title_text or lead.title or "",
                 abstract=lead.abstract_text or lead.abstract or "",
                 authors=[a.display or a.name for a in lead.authors], subjects=subjects,
                 date=day or lead.feed_date or lead.submitted or lead.published)


def own_doc(item: str, data: dict[str, Any]) -> M.Doc:
    return M.Doc(ref=item, title=data.get("title") or "", abstract=data.get("abstract") or "",
                 authors=[a.get("name") or "" for a in data.get("authors") or []],
                 subjects=list(data.get("categories") or []), date=str(data.get("year") or ""))


def _docs(store: SQLiteStore, username: str, items: list[str]) -> list[M.Doc]:
    works = [i for i in items if not _MINE.match(i)]
    recs = store.catalog.work_records(works) if works else {}
    out = [doc_of(w, rs) for w, rs in recs.items() if rs]
    mine = {int(m.group(1)): i for i in items if (m := _MINE.match(i))}
    out += [own_doc(mine[r.id], r.data) for r in store.desk.own_records(username, list(mine))] if mine else []
    return out


def candidates(store: SQLiteStore, since: str, until: str, subject: str | None) -> tuple[list[M.Doc], dict[str, list[str]]]:
    """One document per work that appeared in the range (its first day in it), and each
    work's record keys there."""
    by_work: dict[str, list[SourceRecord]] = {}
    first: dict[str, str] = {}
    for row in store.desk.candidates(since, until):
        ref = f"W{row.work_id}" if row.work_id is not None else row.key
        by_work.setdefault(ref, []).append(decode_record(row.data))
        first.setdefault(ref, row.appeared)
    docs = [doc_of(ref, recs, first[ref]) for ref, recs in by_work.items()]
    if subject:
        docs = [d for d in docs if any(s == subject or s.startswith(subject + ".") for s in d.subjects)]
    return docs, {ref: [r.key for r in recs] for ref, recs in by_work.items()}


def _seen(store: SQLiteStore, username: str, docs: list[M.Doc], keys: dict[str, list[str]]) -> set[str]:
    """The works among `docs` shown to the user before. Shown works are remembered by their
    work id and their records' keys, so a work merged into another (a conference copy
    joining its preprint) or a record back on a later day (a new version) is still known."""
    refs = [d.ref for d in docs]
    marks = store.desk.seen(username, refs + [k for r in refs for k in keys.get(r, [])])
    return {r for r in refs if r in marks or any(k in marks for k in keys.get(r, []))}


def _vectors(store: SQLiteStore, docs: list[M.Doc]) -> np.ndarray | None:
    """The search index's unit vectors of `docs` (zero rows for the ones without); None
    when fewer than half of them have one."""
    from paperdesk.search.embed import DEFAULT_EMBEDDER

    found = store.desk.vectors([d.ref for d in docs], DEFAULT_EMBEDDER)
    if not docs or len(found) * 2 < len(docs):
        return None
    dim = len(next(iter(found.values()))) // 2
    out = np.zeros((len(docs), dim), dtype=np.float32)
    for i, d in enumerate(docs):
        if d.ref in found:
            out[i] = np.frombuffer(found[d.ref], dtype="<f2")
    return out


def _text_space(pool: list[M.Doc], extra: list[M.Doc]) -> Any:
    n = len(pool) + len(extra)
    vec = M.vectorizer(min_df=2 if n >= 200 else 1)
    if n < 200:
        vec.set_params(max_df=1.0)
    try:
        vec.fit([d.text for d in pool + extra])
    except ValueError:  # no words at all
        return None
    return vec


def recommend(
    store: SQLiteStore, username: str, *, since: str | None = None, until: str | None = None,
    subject: str | None = None, limit: int = 50, new_only: bool = False, mark_seen: bool = False,
) -> dict[str, Any]:
    """`{"user", "since", "until", "subject", "hits": [{"work_id", "keys", "title",
    "authors", "date", "score", "reasons", "new"}]}`, best first."""
    require_user(store, username)
    last = store.desk.latest_day()
    until = catalog._check_day(until) if until else last
    since = catalog._check_day(since) if since else until
    out: dict[str, Any] = {"user": username, "since": since, "until": until, "subject": subject, "hits": []}
    if until is None or since is None:
        return out
    if since > until:
        raise QueryError("--since is after --until")
    if date.fromisoformat(until) - date.fromisoformat(since) > timedelta(days=MAX_DAYS):
        raise QueryError(f"rank at most {MAX_DAYS} days at once")
    if not 1 <= limit <= 1000:
        raise QueryError("--limit is 1 to 1000")
    if subject:
        subject = catalog._subject_filter(subject)
        out["subject"] = subject
    pool_docs, member_keys = candidates(store, since, until, subject)
    saved = [current(store, i.item) for i in store.desk.library(username)]
    rated = {current(store, i): label for i, label in store.desk.feedback(username).items()}
    exclude = set(saved) | set(rated)
    seen = _seen(store, username, pool_docs, member_keys)
    if new_only:
        exclude |= set(seen)
    pool_docs = [d for d in pool_docs if d.ref not in exclude]
    if not pool_docs:
        return out
    pos = _docs(store, username, list(dict.fromkeys(saved + [i for i, v in rated.items() if v > 0])))
    neg = _docs(store, username, [i for i, v in rated.items() if v < 0])
    vec = _text_space(pool_docs, pos + neg)
    follows = store.desk.follows(username)
    fa = [v for k, v in follows if k == "author"]
    fs = [v for k, v in follows if k == "subject"]
    empty = sp.csr_matrix((0, 1), dtype=np.float32)
    tx = (lambda ds: vec.transform([d.text for d in ds]).tocsr()) if vec is not None else None
    pool = M.Pool.build(pool_docs, tx(pool_docs) if tx else sp.csr_matrix((len(pool_docs), 1)),
                        _vectors(store, pool_docs))
    pv = _vectors(store, pos) if pool.vectors is not None and pos else None
    nv = _vectors(store, neg) if pool.vectors is not None and neg else None
    profile = M.Profile.build(pos, tx(pos) if tx and pos else empty, pv,
                              tx(neg) if tx and neg else None, nv, fa, fs)
    if not pos and not fa and not fs:
        scored = M.Scored(np.zeros(len(pool_docs)), {"subjects": np.zeros(len(pool_docs))},
                          np.zeros(len(pool_docs), dtype=np.int64))
    else:
        scored = M.score(profile, pool)
    best = M.top(scored, limit)
    shown = [pool_docs[i].ref for i in best]
    records = store.catalog.work_records(shown)
    keys = [r.key for rs in records.values() for r in rs]
    summaries = {w: catalog.work_summary(store, w, rs, store.catalog.author_ids(keys)) for w, rs in records.items() if rs}
    for i in best:
        d = pool_docs[i]
        s = summaries.get(d.ref)
        if s is None:
            continue
        out["hits"].append({
            "work_id": d.ref, "keys": [x["key"] for x in s["sources"]], "title": s["display_title"],
            "display_title_from": s["display_title_from"],
            "authors": [a["name"] for a in s["authors"]], "date": d.date, "score": round(float(scored.scores[i]), 4),
            "reasons": M.reasons(profile, pool, scored, i) if pos or fa or fs else ["new in this range"],
            "new": d.ref not in seen, "subjects": [x["code"] for x in s["subjects"]],
            "abstract": s["abstract"],
        })
    if mark_seen and shown:
        store.desk.mark_seen(username, shown + [k for r in shown for k in member_keys.get(r, [])], now())
    return out


# -- feedback and follows ----------------------------------------------------------------

def feedback(store: SQLiteStore, username: str, refs: list[str], label: int | None) -> list[dict[str, Any]]:
    """Rate works relevant (+1), not relevant (-1) or clear the rating (None)."""
    require_user(store, username)
    items = [resolve_ref(store, username, r) for r in refs]
    if label is None:
        store.desk.remove_feedback(username, items)
    else:
        store.desk.put_feedback(username, items, label, now())
    return [{"ref": r, "item": i, "label": label} for r, i in zip(refs, items, strict=True)]


def follow(store: SQLiteStore, username: str, kind: str, value: str, on: bool = True) -> dict[str, Any]:
    """Follow (or stop following) an author (by name) or a subject (arXiv code)."""
    require_user(store, username)
    value = " ".join(value.split())
    if kind == "subject":
        value = catalog._subject_filter(value) or value
    elif kind == "author":
        if not 2 <= len(value) <= 200:
            raise PaperdeskError("author names are 2-200 characters")
    else:
        raise PaperdeskError("follow an author or a subject")
    if on:
        changed = store.desk.follow(username, kind, value, now())
    else:
        changed = store.desk.unfollow(username, kind, value)
        if not changed:
            raise NotFoundError(f"{username} does not follow {kind} {value!r}")
    return {"user": username, "kind": kind, "value": value, "following": on, "changed": changed}
