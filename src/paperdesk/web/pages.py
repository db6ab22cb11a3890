"""Routes: each page's HTML and its JSON twins come from one view function."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import orjson
from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, Response

from paperdesk import catalog, export
from paperdesk.store.base import Store
from paperdesk.web import feeds, security
from paperdesk.web.cache import CSRF_PLACEHOLDER, cached, rendering_for_cache

View = Callable[..., dict[str, Any]]


def store_of(request: Request) -> Store:
    store: Store = request.app.state.stores.get()
    return store


def json_response(data: Any, status: int = 200) -> Response:
    return Response(
        orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), status_code=status,
        media_type="application/json",
    )


def render(request: Request, template: str, data: dict[str, Any]) -> HTMLResponse:
    """Render a page; sets the CSRF nonce cookie so any form on it can be posted. Inside a
    cached route the token is a placeholder that the cache fills in per visitor."""
    state = request.app.state
    for_cache = rendering_for_cache.get()
    nonce = request.cookies.get(security.CSRF_COOKIE) or security.new_nonce()
    from paperdesk.web import status

    html = state.templates.get_template(template).render(
        request=request,
        data=data,
        status=status.of(request),
        csrf=CSRF_PLACEHOLDER if for_cache else security.csrf_token(state.settings.secret_key, nonce),
        path=request.url.path,
        query=dict(request.query_params),
    )
    resp = HTMLResponse(html)
    if security.CSRF_COOKIE not in request.cookies and not for_cache:
        resp.set_cookie(security.CSRF_COOKIE, nonce, httponly=True, samesite="strict")
    return resp


def _page_or_json(request: Request, page: str, template: str, data: dict[str, Any]) -> Response:
    """The HTML page `template` at the path `page`; at the route's other paths (`….json`,
    `/api/…`) its JSON twin."""
    if request.url.path == page:
        return render(request, template, data)
    return json_response(data)


def _strip_json(value: str) -> tuple[str, bool]:
    return (value[:-5], True) if value.endswith(".json") else (value, False)


def register(app: FastAPI) -> None:
    # -- daily papers ------------------------------------------------------------------
    def daily_data(request: Request, day: str | None, subject: str | None, page: int) -> dict[str, Any]:
        return catalog.daily(store_of(request), day=day, subject=subject, page=page)

    @app.get("/", include_in_schema=False)
    @cached
    def daily_page(
        request: Request, day: str | None = None, subject: str | None = None,
        page: int = Query(1, ge=1, le=10_000),
    ) -> Response:
        return render(request, "daily.html", daily_data(request, day or None, subject or None, page))

    @app.get("/index.json", include_in_schema=False)
    @app.get("/api/daily", summary="Works that appeared on a day")
    @cached
    def daily_json(
        request: Request, day: str | None = None, subject: str | None = None,
        page: int = Query(1, ge=1, le=10_000),
    ) -> Response:
        return json_response(daily_data(request, day or None, subject or None, page))

    # -- paper pages -------------------------------------------------------------------
    def paper_data(request: Request, wid: str) -> dict[str, Any]:
        data = catalog.paper(store_of(request), wid)
        data["similar"] = similar_works(request, data["work_id"])
        return data

    def cite(request: Request, ref: str, fmt: str) -> Response:
        data = catalog.paper(store_of(request), ref)
        if fmt == "bib":
            return Response(export.to_bibtex(data), media_type="application/x-bibtex; charset=utf-8")
        if fmt == "ris":
            return Response(export.to_ris(data), media_type="application/x-research-info-systems")
        return json_response([export.to_csl(data)])

    # `:path` because a record key may hold a slash (arxiv:hep-th/9709111).
    @app.get("/papers/{ref:path}", include_in_schema=False)
    @cached
    def paper_page(request: Request, ref: str) -> Response:
        for suffix, fmt in (("/cite.bib", "bib"), ("/cite.ris", "ris"), ("/cite.csl.json", "csl")):
            if ref.endswith(suffix):
                return cite(request, ref[: -len(suffix)], fmt)
        wid, as_json = _strip_json(ref)
        data = paper_data(request, wid)
        if as_json:
            return json_response(data)
        data["exports"] = {"bibtex": export.to_bibtex(data)}  # what the page shows; RIS at cite.ris
        return render(request, "paper.html", data)

    @app.get("/api/papers/{ref:path}", summary="A work with all its source records")
    @cached
    def paper_api(request: Request, ref: str) -> Response:
        """`W123`, or a record key (its work; the record alone before resolve). Citation
        exports: `/papers/W123/cite.bib`, `cite.ris`, `cite.csl.json`."""
        return json_response(paper_data(request, ref))

    # -- feeds -------------------------------------------------------------------------
    @app.get("/feed.atom", include_in_schema=False)
    @app.get("/feed.rss", include_in_schema=False)
    @cached
    def daily_feed(request: Request, subject: str | None = None) -> Response:
        data = catalog.daily(store_of(request), subject=subject or None, per_page=200)
        title = f"paperdesk: new papers{' in ' + data['subject'] if data['subject'] else ''}"
        kind = "rss" if request.url.path.endswith(".rss") else "atom"
        return feeds.response(request, kind, title, data["works"], data["day"])


def register_subjects(app: FastAPI) -> None:
    @app.get("/subjects", include_in_schema=False)
    @app.get("/subjects.json", include_in_schema=False)
    @app.get("/api/subjects", summary="The arXiv taxonomy with counts")
    @cached
    def subjects_index(request: Request) -> Response:
        data = catalog.subjects_index(store_of(request))
        return _page_or_json(request, "/subjects", "subjects.html", data)

    @app.get("/subjects/{code}", include_in_schema=False)
    @cached
    def subject_page(request: Request, code: str) -> Response:
        if code.endswith((".atom", ".rss")):
            kind = code.rsplit(".", 1)[1]
            data = catalog.subject_page(store_of(request), code.rsplit(".", 1)[0], limit=100)
            return feeds.response(request, kind, f"paperdesk: {data['code']} — {data['name']}",
                                  data["works"], data["latest_day"])
        code, as_json = _strip_json(code)
        data = catalog.subject_page(store_of(request), code)
        return json_response(data) if as_json else render(request, "subject.html", data)

    @app.get("/api/subjects/{code}", summary="A subject with its newest works")
    @cached
    def subject_api(request: Request, code: str) -> Response:
        return json_response(catalog.subject_page(store_of(request), code))


def register_authors(app: FastAPI) -> None:
    @app.get("/authors", include_in_schema=False)
    @app.get("/authors.json", include_in_schema=False)
    @app.get("/api/authors", summary="Search author profiles by name")
    @cached
    def authors_search(request: Request, q: str = "") -> Response:
        data = catalog.author_search(store_of(request), q)
        return _page_or_json(request, "/authors", "authors.html", data)

    @app.get("/authors/{author_id}", include_in_schema=False)
    @cached
    def author_page(request: Request, author_id: str) -> Response:
        if author_id.endswith((".atom", ".rss")):
            aid, kind = author_id.rsplit(".", 1)
            data = catalog.author_page(store_of(request), aid)
            works = [
                {"work_id": w["work_id"] or w["records"][0]["key"], "title": w["title"],
                 "display_title": w["display_title"],
                 "abstract": w["records"][0]["abstract"], "authors": [{"name": data["name"]}],
                 "date": str(w["year"]) if w["year"] else None, "subjects": []}
                for w in data["works"][:100] if w["work_id"]
            ]
            return feeds.response(request, kind, f"paperdesk: {data['name']}", works, None)
        aid, as_json = _strip_json(author_id)
        data = catalog.author_page(store_of(request), aid)
        return json_response(data) if as_json else render(request, "author.html", data)

    @app.get("/api/authors/{author_id}", summary="An author profile with its works")
    @cached
    def author_api(request: Request, author_id: str) -> Response:
        return json_response(catalog.author_page(store_of(request), author_id))


class SharedSearch:
    """One SearchIndex per process (its indexes and model load once, not once per server
    thread), used under a lock: queries take milliseconds and the machine has few cores,
    so serialising them costs little and keeps its SQLite connection single-user."""

    def __init__(self, db: Any):
        from paperdesk.web.cache import PageCache

        self.db = db
        self.lock = threading.Lock()
        self._index: Any = None
        self._changes = PageCache(db, size=0)  # only for its view of database writes
        self._seen: tuple[int, ...] = ()

    def __enter__(self) -> Any:
        self.lock.acquire()
        try:
            gen = self._changes.generation()
            if self._index is None:
                from paperdesk.search.engine import SearchIndex
                from paperdesk.store import open_store

                # a reader: never rebuilds the vector file under this lock (a running
                # `reindex` made every paper page wait for that, up to 11 s)
                self._index = SearchIndex(open_store(self.db), reader=True)
            elif gen != self._seen:  # resolve/reindex ran since: reload the indexes
                self._index.refresh()
            self._seen = gen
        except BaseException:
            self.lock.release()
            raise
        return self._index

    def __exit__(self, *exc: object) -> None:
        self.lock.release()


def search_index(request: Request) -> SharedSearch:
    """`with search_index(request) as ix: ix.search(…)`."""
    shared: SharedSearch = request.app.state.search
    return shared


def similar_works(request: Request, work_id: str, limit: int = 8) -> list[dict[str, Any]]:
    """Nearest works in embedding space; empty while the work is not indexed yet."""
    from paperdesk.errors import NotFoundError, QueryError

    try:
        with search_index(request) as ix:
            res = ix.similar(work_id, limit=limit)
    except (NotFoundError, QueryError):
        return []
    return with_display_titles(
        request, [{"work_id": h.work_id, "title": h.title, "year": h.year} for h in res.hits]
    )


def with_display_titles(request: Request, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`catalog.with_display_titles` on this request's store."""
    return catalog.with_display_titles(store_of(request), items)


def client_wait(request: Request, bucket: str) -> float:
    """0 when the client may make a `bucket` request now (it is counted), else the seconds
    to wait (`security.RateLimiter`)."""
    client = request.client.host if request.client else "?"
    wait: float = request.app.state.limiter.allow(client, bucket)
    return wait


def rate_limit(request: Request, bucket: str, what: str = "requests") -> None:
    """429 ("too many `what`: retry in N s") unless the client may make a `bucket`
    request now."""
    wait = client_wait(request, bucket)
    if wait:
        from fastapi import HTTPException

        raise HTTPException(429, f"too many {what}: retry in {int(wait) + 1} s")


PER_SEARCH_PAGE = 20


def register_search(app: FastAPI) -> None:
    def search_data(request: Request, q: str, mode: str, page: int, sort: str) -> dict[str, Any]:
        q = q.strip()
        if len(q) > 500:
            from paperdesk.errors import QueryError

            raise QueryError("queries are limited to 500 characters")
        base: dict[str, Any] = {"query": q, "mode": mode, "sort": sort, "page": page,
                                "per_page": PER_SEARCH_PAGE, "total": 0, "pages": 0,
                                "hits": [], "facets": None, "took_ms": 0.0}
        if not q:
            return base
        rate_limit(request, "search")
        with search_index(request) as ix:
            res = ix.search(
                q, mode=mode, limit=PER_SEARCH_PAGE, offset=(page - 1) * PER_SEARCH_PAGE,
                sort=sort, facets=True,
            ).to_dict()
        res["mode_used"] = res.pop("mode")
        with_display_titles(request, res["hits"])
        return {**base, **res, "query": q,
                "pages": max(1, -(-res["total"] // PER_SEARCH_PAGE))}

    @app.get("/search", include_in_schema=False)
    @app.get("/search.json", include_in_schema=False)
    @app.get("/api/search", summary="Search works: hybrid (default), keyword or semantic")
    def search(
        request: Request, q: str = "", mode: str = Query("hybrid", pattern="^(hybrid|keyword|semantic)$"),
        page: int = Query(1, ge=1, le=500), sort: str = Query("relevance", pattern="^(relevance|date)$"),
    ) -> Response:
        data = search_data(request, q, mode, page, sort)
        return _page_or_json(request, "/search", "search.html", data)

    @app.get("/search.atom", include_in_schema=False)
    @app.get("/search.rss", include_in_schema=False)
    def search_feed(request: Request, q: str, mode: str = "hybrid") -> Response:
        data = search_data(request, q, mode, 1, "date")
        works = [{"work_id": h["work_id"], "title": h["title"], "abstract": h.get("snippet"),
                  "display_title": h["display_title"],
                  "authors": [{"name": a} for a in h["authors"]], "date": h["date"],
                  "subjects": [{"code": s, "name": s} for s in h["subjects"]]} for h in data["hits"]]
        kind = "rss" if request.url.path.endswith(".rss") else "atom"
        return feeds.response(request, kind, f"paperdesk: {q}", works, None)

    @app.get("/related", include_in_schema=False)
    @app.get("/related.json", include_in_schema=False)
    @app.get("/api/related", summary="Works related to a pasted text (an abstract)")
    def related(request: Request, text: str = Query("", max_length=5000)) -> Response:
        data: dict[str, Any] = {"text": text, "hits": []}
        if text.strip():
            rate_limit(request, "search")
            with search_index(request) as ix:
                data.update(ix.related(text, limit=20).to_dict())
            with_display_titles(request, data["hits"])
            data["text"] = text
        return _page_or_json(request, "/related", "related.html", data)
