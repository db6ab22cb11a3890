"""Sign-in and corrections (merge/split of works and authors) over the web.

Every write is a POST that needs a curator (`auth.require_curator`) and, from a browser,
the page's CSRF token; the corrections themselves are the library's curations, logged with
who and when and kept as constraints on every later resolve.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store import curators
from paperdesk.web import auth, security
from paperdesk.web.pages import json_response, rate_limit, render, store_of

T = TypeVar("T")
_SPLIT = re.compile(r"[\s,]+")


def _safe_next(value: str | None) -> str:
    """Only same-site paths: never an open redirect."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/"


def _done(request: Request, target: str, data: dict[str, object]) -> Response:
    if request.url.path.startswith("/api/"):
        return json_response(data)
    return RedirectResponse(target, status_code=303)


def _apply(correction: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a library correction; one it refuses (an unknown record key, nothing left to
    split …) is the client's mistake: 400 with the library's reason (404 stays 404)."""
    try:
        return correction(*args, **kwargs)
    except NotFoundError:
        raise
    except PaperdeskError as exc:
        raise HTTPException(400, str(exc)) from None


def signed_in_response(request: Request, user: str, target: str) -> Response:
    """A new session for `user` (its cookie: signed, HttpOnly, SameSite=Strict) and a 303
    to `target`."""
    token = curators.start_session(store_of(request), user, auth.SESSION_MAX_AGE)
    done = RedirectResponse(target, status_code=303)
    done.set_cookie(auth.SESSION_COOKIE, auth.session_value(request, token), httponly=True,
                    samesite="strict", max_age=auth.SESSION_MAX_AGE,
                    secure=request.url.scheme == "https")
    return done


def signup_open(request: Request) -> bool:
    """Whether anyone may make an account at /signup (`PAPERDESK_SIGNUP`)."""
    return bool(request.app.state.settings.signup)


def register(app: FastAPI) -> None:
    @app.get("/login", include_in_schema=False)
    def login_form(request: Request, next: str = "/") -> Response:
        return render(request, "login.html", {"next": _safe_next(next), "who": auth.signed_in(request),
                                              "failed": False, "signup": signup_open(request)})

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        form = await auth.checked_form(request)
        rate_limit(request, "login", "sign-in attempts")
        user, password = str(form.get("username", "")), str(form.get("password", ""))
        target = _safe_next(str(form.get("next", "/")))
        backoff: security.Backoff = request.app.state.login_backoff
        wait = backoff.wait(user)  # per account, whichever clients the guesses come from
        if wait:
            raise HTTPException(
                429, f"too many failed sign-ins for this account: retry in {int(wait) + 1} s"
            )
        if not curators.check_login(store_of(request), user, password):
            backoff.failed(user)
            resp = render(request, "login.html", {"next": target, "who": None, "failed": True,
                                                  "signup": signup_open(request)})
            resp.status_code = 401
            return resp
        backoff.succeeded(user)
        return signed_in_response(request, user, target)

    @app.post("/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        await auth.checked_form(request)
        token = auth.session_token(request)
        if token:
            curators.end_session(store_of(request), token)  # the cookie is dead everywhere
        resp = RedirectResponse("/", status_code=303)
        resp.delete_cookie(auth.SESSION_COOKIE)
        return resp

    async def _field(request: Request, name: str) -> str:
        if "json" in request.headers.get("content-type", ""):
            try:
                body = await request.json()
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                raise HTTPException(400, f"the body is not valid JSON: {exc}") from None
            value = body.get(name) if isinstance(body, dict) else None
        else:
            value = (await request.form()).get(name)
        if not value or not isinstance(value, str):
            raise HTTPException(400, f"missing field {name!r}")
        return value.strip()

    @app.post("/papers/{work_id}/merge", include_in_schema=False)
    @app.post("/api/papers/{work_id}/merge", summary="Curate: merge another work into this one")
    async def work_merge(request: Request, work_id: str) -> Response:
        from paperdesk.resolve.works_curate import follow, merge_works, parse_id

        who = await auth.require_curator(request)
        other = await _field(request, "other")
        store = store_of(request)
        if follow(store.works, parse_id(work_id)) == follow(store.works, parse_id(other)):
            raise HTTPException(400, f"{work_id} and {other} are already one work: nothing to merge")
        kept = _apply(merge_works, store, work_id, other, who=who)
        return _done(request, f"/papers/{kept}", {"work_id": kept, "merged": other, "who": who})

    @app.post("/papers/{work_id}/split", include_in_schema=False)
    @app.post("/api/papers/{work_id}/split", summary="Curate: move records to a new work")
    async def work_split(request: Request, work_id: str) -> Response:
        from paperdesk.resolve.works_curate import split_work

        who = await auth.require_curator(request)
        keys = [k for k in _SPLIT.split(await _field(request, "records")) if k]
        new = _apply(split_work, store_of(request), work_id, keys, who=who)
        return _done(request, f"/papers/{new}", {"work_id": work_id, "new_work_id": new, "who": who})

    @app.post("/authors/{author_id}/merge", include_in_schema=False)
    @app.post("/api/authors/{author_id}/merge", summary="Curate: two profiles are one person")
    async def author_merge(request: Request, author_id: str) -> Response:
        from paperdesk.resolve.authors_curate import merge_authors

        who = await auth.require_curator(request)
        other = await _field(request, "other")
        out = _apply(merge_authors, store_of(request), author_id, other, who=who)
        return _done(request, f"/authors/{out['author_id']}", {**out, "who": who})

    @app.post("/authors/{author_id}/split", include_in_schema=False)
    @app.post("/api/authors/{author_id}/split", summary="Curate: these works are someone else's")
    async def author_split(request: Request, author_id: str) -> Response:
        from paperdesk.resolve.authors_curate import split_author

        who = await auth.require_curator(request)
        works = [k for k in _SPLIT.split(await _field(request, "works")) if k]
        out = _apply(split_author, store_of(request), author_id, works, who=who)
        return _done(request, f"/authors/{out['author_id']}", {**out, "who": who})
