"""A response cache for read-only pages, invalidated by any write to the database.

Pages are pure functions of the URL and the data, so a rendered page can be reused until
the database changes. "Changed" is judged by the store's change marker
(`paperdesk.store.change_marker`: on SQLite the modification time and size of the file and
its WAL, two `stat` calls; on PostgreSQL the server's current snapshot, which every commit
changes). Per-visitor
parts (the CSRF token in forms) are rendered as a placeholder and filled in per request.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from paperdesk.store import change_marker

CSRF_PLACEHOLDER = "__PAPERDESK_CSRF_TOKEN__"
rendering_for_cache: contextvars.ContextVar[bool] = contextvars.ContextVar("pd_cache", default=False)


class PageCache:
    def __init__(self, db: str | Path, size: int = 1024):
        self.generation = change_marker(db)
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[Any, tuple[Any, tuple[int, bytes, str | None, list[tuple[str, str]]]]] = OrderedDict()

    def get(self, key: Any) -> tuple[int, bytes, str | None, list[tuple[str, str]]] | None:
        gen = self.generation()
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0] != gen:
                return None
            self._entries.move_to_end(key)
            return hit[1]

    def put(self, key: Any, gen: tuple[int, ...], value: tuple[int, bytes, str | None, list[tuple[str, str]]]) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[key] = (gen, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


def cached(fn: Callable[..., Response]) -> Callable[..., Response]:
    """Decorate a GET route (sync, first parameter `request`) to serve from the cache."""

    @wraps(fn)
    def wrapper(request: Request, *args: Any, **kwargs: Any) -> Response:
        from paperdesk.web import security

        cache: PageCache = request.app.state.page_cache
        key = (request.url.path, request.url.query, request.headers.get("accept", "")[:64])
        entry = cache.get(key)
        if entry is None:
            gen = cache.generation()  # before reading: a write during rendering invalidates
            token = rendering_for_cache.set(True)
            try:
                resp = fn(request, *args, **kwargs)
            finally:
                rendering_for_cache.reset(token)
            headers = [(k, v) for k, v in resp.headers.items() if k not in ("content-length", "set-cookie")]
            entry = (resp.status_code, bytes(resp.body), resp.media_type, headers)
            if resp.status_code == 200:
                cache.put(key, gen, entry)
        status, body, media_type, headers = entry
        nonce = request.cookies.get(security.CSRF_COOKIE)
        new_nonce = nonce or security.new_nonce()
        placeholder = CSRF_PLACEHOLDER.encode()
        if placeholder in body:
            real = security.csrf_token(request.app.state.settings.secret_key, new_nonce)
            body = body.replace(placeholder, real.encode())
        out = Response(body, status_code=status, media_type=media_type, headers=dict(headers))
        if nonce is None and media_type and media_type.startswith("text/html"):
            out.set_cookie(security.CSRF_COOKIE, new_nonce, httponly=True, samesite="strict")
        return out

    return wrapper
