"""Saved searches and the private feeds behind secret tokens.

A saved search is a query in the search language (`diffusion -medical cat:cs.CV`: words,
`-word` / `NOT` to exclude, `cat:`, `author:`, `year:` filters), checked when it is saved.
Its works are the search index's matches, newest first, less the ones the user marked not
relevant.

Each feed (the personal "for you" feed, or one saved search) is reached through a random
token of its own, shown once: the store keeps only its sha256, so a copy of the database
opens no feed, and revoking deletes it. The web layer turns these works into Atom.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import asdict
from datetime import date, timedelta
from typing import Any

from paperdesk.desk.library import current, require_user
from paperdesk.errors import NotFoundError, PaperdeskError, QueryError
from paperdesk.store.base import Store, now

_NAME = re.compile(r"^[\w][\w .-]{0,59}$")
MAX_QUERY = 500
FEED_DAYS = 7
"""The personal feed ranks the works of the store's last week."""


def _check(query: str) -> str:
    from paperdesk.search.query import parse_query

    query = " ".join(query.split())
    if not query or len(query) > MAX_QUERY:
        raise PaperdeskError(f"a saved search is 1-{MAX_QUERY} characters")
    try:
        parse_query(query)
    except QueryError as exc:
        raise PaperdeskError(f"not a valid search: {exc}") from None
    return query


def save_search(store: Store, username: str, name: str, query: str) -> dict[str, Any]:
    require_user(store, username)
    name = " ".join(name.split())
    if not _NAME.match(name):
        raise PaperdeskError("search names are 1-60 letters, digits, spaces or . - _")
    query = _check(query)
    if store.desk.add_search(username, name, query, now()) is None:
        raise PaperdeskError(f"{username} already has a search called {name!r}")
    return {"user": username, "name": name, "query": query}


def remove_search(store: Store, username: str, name: str) -> None:
    require_user(store, username)
    if not store.desk.remove_search(username, name):
        raise NotFoundError(f"{username} has no saved search {name!r}")


def searches(store: Store, username: str) -> list[dict[str, Any]]:
    require_user(store, username)
    return [asdict(s) for s in store.desk.searches(username)]


def _search(store: Store, username: str, name: str) -> str:
    for s in store.desk.searches(username):
        if s.name == name:
            return s.query
    raise NotFoundError(f"{username} has no saved search {name!r}")


def run_search(store: Store, username: str, name: str, limit: int = 50, index: Any = None) -> dict[str, Any]:
    """The saved search's works, newest first: `{"user", "name", "query", "hits": [...]}`
    (each hit: work_id, title, authors, date, subjects, snippet, new). `index`: an open
    `SearchIndex` (the web server's shared one), else one is opened read-only."""
    from paperdesk.search.engine import SearchIndex

    require_user(store, username)
    query = _search(store, username, name)
    hidden = {current(store, i) for i, v in store.desk.feedback(username).items() if v < 0}
    res = (index or SearchIndex(store, reader=True)).search(
        query, mode="keyword", limit=min(limit + len(hidden), 500), sort="date")
    hits = [h.to_dict() for h in res.hits if h.work_id not in hidden][:limit]
    seen = store.desk.seen(username, [h["work_id"] for h in hits])
    for h in hits:
        h["new"] = h["work_id"] not in seen
    return {"user": username, "name": name, "query": query, "hits": hits}


# -- tokens ------------------------------------------------------------------------------

def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(store: Store, username: str, search: str | None = None) -> dict[str, Any]:
    """A new secret feed address for the personal feed or a saved search: the token is in
    the answer only (the store keeps its hash)."""
    require_user(store, username)
    scope = "personal"
    if search is not None:
        _search(store, username, search)
        scope = f"search:{search}"
    token = secrets.token_urlsafe(32)
    store.desk.add_token(_hash(token), username, scope, now())
    return {"user": username, "scope": scope, "token": token, "id": _hash(token)[:12],
            "path": f"/feeds/{token}.atom"}


def revoke(store: Store, username: str, token_id: str | None = None, search: str | None = None) -> int:
    """Revoke one token (by the id `feed-token list` shows), a search's tokens, or all."""
    require_user(store, username)
    if token_id is not None and not re.match(r"^[0-9a-f]{6,64}$", token_id):
        raise PaperdeskError("a token id is the hex shown by `paperdesk feed-token list`")
    return store.desk.revoke_tokens(username, token_id, f"search:{search}" if search else None)


def tokens(store: Store, username: str) -> list[dict[str, Any]]:
    require_user(store, username)
    return [asdict(t) for t in store.desk.tokens(username)]


def feed_of(store: Store, token: str, index: Any = None) -> dict[str, Any]:
    """What a feed token opens: `{"user", "title", "works"}` (works as feeds take them);
    NotFoundError for a token that is not live (never a hint which part was wrong)."""
    from paperdesk.desk.recommend import recommend

    if not 20 <= len(token) <= 100:
        raise NotFoundError("no such feed")
    owner = store.desk.token_owner(_hash(token))
    if owner is None:
        raise NotFoundError("no such feed")
    username, scope = owner
    if scope.startswith("search:"):
        out = run_search(store, username, scope[7:], limit=100, index=index)
        works = [{"work_id": h["work_id"], "title": h["title"], "display_title": h["title"] or None,
                  "abstract": h.get("snippet"), "authors": [{"name": a} for a in h["authors"]],
                  "date": h["date"], "subjects": [{"code": s, "name": s} for s in h["subjects"]]}
                 for h in out["hits"]]
        return {"user": username, "title": f"paperdesk: {out['name']} ({out['query']})", "works": works}
    last = store.desk.latest_day()
    since = str(date.fromisoformat(last) - timedelta(days=FEED_DAYS - 1)) if last else None
    rec = recommend(store, username, since=since, until=last, limit=50)
    works = [{"work_id": h["work_id"], "title": h["title"], "display_title": h["title"],
              "abstract": (" — ".join(h["reasons"]) + "\n\n" + (h.get("abstract") or "")).strip(),
              "authors": [{"name": a} for a in h["authors"]], "date": h["date"],
              "subjects": [{"code": s, "name": s} for s in h["subjects"]]} for h in rec["hits"]]
    return {"user": username, "title": f"paperdesk: for {username}", "works": works}
