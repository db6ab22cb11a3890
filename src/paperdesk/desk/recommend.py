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
from paperdesk.desk import cache as C
from paperdesk.desk import features as F
from paperdesk.desk import model as M
from paperdesk.desk.library import current, require_user, resolve_ref
from paperdesk.errors import NotFoundError, PaperdeskError, QueryError, StoreError
from paperdesk.model import SourceRecord
from paperdesk.store.base import Store, now

AUTHOR_ID = re.compile(r"a[0-9a-f]{10}")
"""An author profile's id (`resolve/authors_profiles.py`)."""

_MINE = re.compile(r"^mine:(\d+)$")
MAX_DAYS = 62
"""The longest range ranked at once (two months: the benchmark's candidate pool)."""


def doc_of(ref: str, records: list[SourceRecord], day: str | None = None) -> M.Doc:
    """A work's records as the model's document (its lead record's text and authors, the
    subjects of all its records), chosen as `desk/cache.py` chooses for candidates."""
    lead = max(records, key=C.lead_rank)
    subjects = list(dict.fromkeys(s for r in records for s in C.subjects_of(r)))
    return M.Doc(ref=ref, title=lead.title_text or lead.title or "",
                 abstract=lead.abstract_text or lead.abstract or "",
                 authors=[a.display or a.name for a in lead.authors], subjects=subjects,
                 date=day or lead.feed_date or lead.submitted or lead.published)


def own_doc(item: str, data: dict[str, Any]) -> M.Doc:
    return M.Doc(ref=item, title=data.get("title") or "", abstract=data.get("abstract") or "",
                 authors=[a.get("name") or "" for a in data.get("authors") or []],
                 subjects=list(data.get("categories") or []), date=str(data.get("year") or ""))


def _docs(store: Store, username: str, items: list[str]) -> list[M.Doc]:
    works = [i for i in items if not _MINE.match(i)]
    recs = store.catalog.work_records(works) if works else {}
    out = [doc_of(w, rs) for w, rs in recs.items() if rs]
    mine = {int(m.group(1)): i for i in items if (m := _MINE.match(i))}
    out += [own_doc(mine[r.id], r.data) for r in store.desk.own_records(username, list(mine))] if mine else []
    return out


def _seen(store: Store, username: str, docs: list[M.Doc], keys: dict[str, list[str]]) -> set[str]:
    """The works among `docs` shown to the user before. Shown works are remembered by their
    work id and their records' keys, so a work merged into another (a conference copy
    joining its preprint) or a record back on a later day (a new version) is still known."""
    refs = [d.ref for d in docs]
    marks = store.desk.seen(username, refs + [k for r in refs for k in keys.get(r, [])])
    return {r for r in refs if r in marks or any(k in marks for k in keys.get(r, []))}


def _vectors(store: Store, docs: list[M.Doc]) -> np.ndarray | None:
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


def _follows(store: Store, username: str, cands: C.Candidates) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """(author names followed as names, subjects followed, candidate ref → followed profiles'
    names among its authors). A followed profile is matched by its signatures, redirects
    followed, so "Percy Liang" is his profile, not every "P. Liang"; a follow whose profile
    is gone (or was never found: no authors stage run yet) falls back to its name, spelt
    in full."""
    rows = store.desk.follows(username)
    subjects = [f.value for f in rows if f.kind == "subject"]
    authors = [f for f in rows if f.kind == "author"]
    ids = [f.value for f in authors if AUTHOR_ID.fullmatch(f.value)]
    found = store.desk.author_records(ids) if ids else {}
    names = [f.label for f in authors if f.value not in found]
    refs: dict[str, list[str]] = {}
    if found:
        owner = {k: ref for ref, keys in cands.keys.items() for k in keys}
        for f in authors:
            for k in found.get(f.value, ("", set()))[1]:
                ref = owner.get(k)
                if ref is not None and f.label not in refs.setdefault(ref, []):
                    refs[ref].append(f.label)
    return names, subjects, refs


def recommend(
    store: Store, username: str, *, since: str | None = None, until: str | None = None,
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
    cands = C.candidates(store, since, until, subject)
    member_keys = cands.keys
    saved = [current(store, i.item) for i in store.desk.library(username)]
    rated = {current(store, i): label for i, label in store.desk.feedback(username).items()}
    exclude = set(saved) | set(rated)
    seen = _seen(store, username, cands.docs, member_keys)
    if new_only:
        exclude |= set(seen)
    pool_docs = cands.docs
    # Left out of the ranking, not of the pool: the space and the standardised scores are
    # the range's, and no copy of the candidates' terms is made per user.
    hidden = {i for i, d in enumerate(pool_docs) if d.ref in exclude}
    if len(hidden) == len(pool_docs):
        return out
    pos = _docs(store, username, list(dict.fromkeys(saved + [i for i, v in rated.items() if v > 0])))
    neg = _docs(store, username, [i for i, v in rated.items() if v < 0])
    space = F.space_for(cands.terms)
    fa, fs, frefs = _follows(store, username, cands)

    def tx(ds: list[M.Doc]) -> sp.csr_matrix:
        return space.transform(F.term_counts([d.text for d in ds]))

    pool = M.Pool.build(pool_docs, space.transform(cands.terms), _vectors(store, pool_docs), folded=True)
    pv = _vectors(store, pos) if pool.vectors is not None and pos else None
    nv = _vectors(store, neg) if pool.vectors is not None and neg else None
    profile = M.Profile.build(pos, tx(pos), pv, tx(neg) if neg else None, nv, fa, fs, frefs)
    anything = bool(pos or fa or fs or frefs)
    if not anything:
        scored = M.Scored(np.zeros(len(pool_docs)), {"subjects": np.zeros(len(pool_docs))},
                          np.zeros(len(pool_docs), dtype=np.int64))
    else:
        scored = M.score(profile, pool)
    best = M.top(scored, limit, hidden)
    shown = [pool_docs[i].ref for i in best]
    records = store.catalog.work_records(shown)
    keys = [r.key for rs in records.values() for r in rs]
    ids = store.catalog.author_ids(keys)
    summaries = {w: catalog.work_summary(store, w, rs, ids) for w, rs in records.items() if rs}
    for i in best:
        d = pool_docs[i]
        s = summaries.get(d.ref)
        if s is None:
            continue
        out["hits"].append({
            "work_id": d.ref, "keys": [x["key"] for x in s["sources"]], "title": s["display_title"],
            "display_title_from": s["display_title_from"],
            "authors": [a["name"] for a in s["authors"]], "date": d.date, "score": round(float(scored.scores[i]), 4),
            "reasons": M.reasons(profile, pool, scored, i) if anything else ["new in this range"],
            "new": d.ref not in seen, "subjects": [x["code"] for x in s["subjects"]],
            "abstract": s["abstract"],
        })
    if mark_seen and shown:
        store.desk.mark_seen(username, shown + [k for r in shown for k in member_keys.get(r, [])], now())
    return out


# -- feedback and follows ----------------------------------------------------------------

def feedback(store: Store, username: str, refs: list[str], label: int | None) -> list[dict[str, Any]]:
    """Rate works relevant (+1), not relevant (-1) or clear the rating (None)."""
    require_user(store, username)
    items = [resolve_ref(store, username, r) for r in refs]
    if label is None:
        store.desk.remove_feedback(username, items)
    else:
        store.desk.put_feedback(username, items, label, now())
    return [{"ref": r, "item": i, "label": label} for r, i in zip(refs, items, strict=True)]


def follows(store: Store, username: str) -> list[dict[str, Any]]:
    """What the user follows: `[{"kind", "value", "label", "profile"}]` — `profile` true
    when `value` is an author profile's id."""
    require_user(store, username)
    return [{"kind": f.kind, "value": f.value, "label": f.label,
             "profile": f.kind == "author" and bool(AUTHOR_ID.fullmatch(f.value))}
            for f in store.desk.follows(username)]


def _author_profile(store: Store, value: str) -> tuple[str, str] | None:
    """(profile id, name) that an author follow names: an id, or a name that one profile
    has a variant spelt exactly so (or, for a short form, is compatible with); None when
    no profile matches or the store has none yet (the follow then keeps the name). Several
    profiles: the user must pick one by id (a name is not a person)."""
    from paperdesk.resolve.authors_profiles import find_authors, summary

    try:
        found = find_authors(store, value, limit=6)
    except StoreError:  # the author tables of an unresolved store
        return None
    if AUTHOR_ID.fullmatch(value) and not found:
        raise NotFoundError(f"no author {value}")
    if len(found) > 1:
        names = "; ".join(f"{a} {s['name']} ({s['records_count_text']})"
                          for a in found[:5] for s in [summary(store, a)])
        raise PaperdeskError(f"{len(found)} authors go by {value!r}: {names}. Follow one by its id")
    if not found:
        return None
    return found[0], str(summary(store, found[0])["name"])


def follow(store: Store, username: str, kind: str, value: str, on: bool = True) -> dict[str, Any]:
    """Follow (or stop following) an author or a subject (arXiv code).

    An author is followed as a profile (`_author_profile`): its id is kept, with the name
    for display, and redirects are followed when the profile is merged into another. A
    name no profile has (before the authors stage, or on a backend without it) is kept as
    a name and matched as one, spelt in full."""
    require_user(store, username)
    value = " ".join(value.split())
    label = value
    matched = "name"
    if kind == "subject":
        value = label = catalog._subject_filter(value) or value
    elif kind == "author":
        if not 2 <= len(value) <= 200:
            raise PaperdeskError("author names are 2-200 characters")
        if on:
            prof = _author_profile(store, value)
            if prof is not None:
                value, label = prof
                matched = "profile"
    else:
        raise PaperdeskError("follow an author or a subject")
    if on:
        changed = store.desk.follow(username, kind, value, now(), label)
    else:
        changed = store.desk.unfollow(username, kind, value)
        if not changed:
            raise NotFoundError(f"{username} does not follow {kind} {value!r}")
    out = {"user": username, "kind": kind, "value": value, "label": label, "following": on, "changed": changed}
    if kind == "author" and on:
        out["matched"] = matched
    return out
