"""The web site and JSON API: `create_app(db)` returns the ASGI app `paperdesk serve` runs.

Every page is a view that returns a plain dict (from `paperdesk.catalog`); the HTML route
renders it with an autoescaping template, its twin (`/papers/W1.json`, `/api/papers/W1`)
returns the same dict as JSON. Errors have one shape everywhere:
`{"error": {"status": 404, "title": "Not Found", "detail": "…"}}` (HTML pages show the same).
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.exceptions import HTTPException

from paperdesk import __version__
from paperdesk import settings as declared
from paperdesk.errors import NotFoundError, PaperdeskError, QueryError, SettingError
from paperdesk.normalize.links import safe_link
from paperdesk.store import files_base, open_store, target_text
from paperdesk.store.base import Store
from paperdesk.web import fragments, security, texmarkup
from paperdesk.web.cache import PageCache
from paperdesk.web.pages import SharedSearch as pages_search


@dataclass
class WebSettings:
    """Server settings, each from an environment variable (`paperdesk.settings`)."""

    admin_token: str | None = field(default_factory=declared.ADMIN_TOKEN.get)
    secret_key: bytes = b""
    max_body_bytes: int = field(default_factory=declared.MAX_BODY.get)
    expensive_per_minute: int = field(default_factory=declared.RATE_PER_MINUTE.get)
    page_cache_entries: int = field(default_factory=declared.PAGE_CACHE.get)
    signup: bool = field(default_factory=lambda: bool(declared.SIGNUP.get()))
    """Anyone may make an account at /signup (`PAPERDESK_SIGNUP`)."""
    base_url: str = field(default_factory=lambda: declared.BASE_URL.get() or DEFAULT_BASE_URL)
    """The site's public address: the absolute links in feeds start with it (never with
    the request's Host header, which any client can set). `paperdesk serve` defaults it
    to http://HOST:PORT/ of its own options."""

    def __post_init__(self) -> None:
        try:
            self.base_url = declared.base_url(self.base_url)
        except ValueError as exc:
            raise SettingError(f"{declared.BASE_URL.env}: {exc}") from None


DEFAULT_BASE_URL = "http://127.0.0.1:8000/"


def _secret_for(db: Path) -> bytes:
    """A per-installation signing key kept next to the database (0600), so CSRF tokens and
    sessions survive restarts; `PAPERDESK_SECRET_KEY` overrides."""
    env = declared.SECRET_KEY.get()
    if env:
        return env.encode()
    path = db.with_name(db.name + ".secret")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        key = secrets.token_hex(32).encode()
        path.parent.mkdir(parents=True, exist_ok=True)  # a PostgreSQL store's data dir
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return key


class Stores:
    """One SQLite connection per server thread (sqlite3 objects are not shared)."""

    def __init__(self, db: str | Path):
        self.db = db
        self.local = threading.local()
        """Per-thread objects: the store, and what is built on it (the search index)."""

    def get(self) -> Store:
        store = getattr(self.local, "store", None)
        if store is None:
            store = open_store(self.db)
            self.local.store = store
        return store


def wants_json(request: Request) -> bool:
    path = request.url.path
    if path.startswith("/api/") or path.endswith(".json"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def error_body(status: int, detail: str) -> dict[str, Any]:
    from http import HTTPStatus

    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    return {"error": {"status": status, "title": title, "detail": detail}}


def create_app(db: str | Path, settings: WebSettings | None = None) -> FastAPI:
    db = target_text(db)  # a URL stays a URL (a Path would make `postgresql:/h/db` of it)
    settings = settings or WebSettings()
    if not settings.secret_key:
        settings.secret_key = _secret_for(files_base(db))
    app = FastAPI(
        title="paperdesk",
        version=__version__,
        description="A self-hosted index of research papers: JSON API.",
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.stores = Stores(db)
    app.state.page_cache = PageCache(db, size=settings.page_cache_entries)
    app.state.search = pages_search(db)
    app.state.settings = settings
    app.state.limiter = security.RateLimiter(settings.expensive_per_minute, 60.0)
    app.state.login_backoff = security.Backoff()
    env = Environment(
        loader=PackageLoader("paperdesk.web", "templates"),
        autoescape=select_autoescape(["html", "xml"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # the templates ship with the package: no stat() per render
    )
    env.globals["version"] = __version__
    # Every href to an original goes through this (defence in depth: ingest already
    # stores only http(s) links, but a record stored before that check may not be).
    env.filters["safe_url"] = safe_link
    env.filters["tex"] = texmarkup.render  # text-mode LaTeX / Markdown → safe HTML
    for name in ("work_title", "work_star", "author_list", "subject_list", "work_entry", "author_works"):
        env.globals[name] = getattr(fragments, name)
    app.state.templates = env

    static = resources.files("paperdesk.web").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    def render_error(
        request: Request, status: int, detail: str, extra: Mapping[str, str] | None = None
    ) -> Response:
        body = error_body(status, detail)
        headers = dict(extra or {})
        if status == 429:
            headers["Retry-After"] = detail.rsplit(" ", 2)[-2] if "retry in" in detail else "60"
        if wants_json(request):
            return JSONResponse(body, status_code=status, headers=headers)
        html = env.get_template("error.html").render(
            request=request, query=dict(request.query_params), path=request.url.path, **body
        )
        return HTMLResponse(html, status_code=status, headers=headers)

    @app.exception_handler(NotFoundError)
    async def _not_found(request: Request, exc: NotFoundError) -> Response:
        return render_error(request, 404, str(exc))

    @app.exception_handler(QueryError)
    async def _bad_query(request: Request, exc: QueryError) -> Response:
        return render_error(request, 400, str(exc))

    @app.exception_handler(PaperdeskError)
    async def _internal(request: Request, exc: PaperdeskError) -> Response:
        return render_error(request, 500, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        parts = []
        for e in exc.errors():
            loc = ".".join(str(x) for x in e.get("loc", ()) if x not in ("query", "path", "body"))
            parts.append(f"{loc}: {e.get('msg')}" if loc else str(e.get("msg")))
        return render_error(request, 400, "; ".join(parts) or "invalid request")

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        # Starlette's own headers travel on (a 405's `Allow` above all; HEAD is answered
        # wherever GET is, by security.HeadAsGet, so it is allowed there too).
        headers = dict(exc.headers or {})
        allow = [m.strip() for m in headers.get("Allow", "").split(",") if m.strip()]
        if "GET" in allow and "HEAD" not in allow:
            headers["Allow"] = ", ".join([*allow, "HEAD"])
        return render_error(request, exc.status_code, str(exc.detail), headers)

    from paperdesk.web import pages

    pages.register(app)
    pages.register_subjects(app)
    pages.register_authors(app)
    pages.register_search(app)
    from paperdesk.web import curation

    curation.register(app)
    from paperdesk.web import desk

    desk.register(app)
    from paperdesk.web import status

    status.register(app)
    app.add_middleware(security.BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(security.SecurityHeaders)
    app.add_middleware(security.ServerTiming)
    app.add_middleware(security.HeadAsGet)
    return app
