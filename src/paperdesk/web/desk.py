"""The personal desk on the web: sign-up (when `PAPERDESK_SIGNUP` is on), the star on every
paper, the "for you" day, the desk page (library, import, export, follows, saved searches,
feed addresses, digest) and the private Atom feeds.

Every write is a POST from a signed-in user with the page's CSRF token
(`auth.require_user`); pages only ever show the signed-in user's own desk, whatever the
URL says, and are never cached (the shared pages carry no per-user markup: stars are
filled in by app.js from /api/me). A feed is opened by its secret token alone, because
feed readers carry no cookies.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from paperdesk.desk import digest, feeds, importer, library, recommend
from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store import curators
from paperdesk.web import auth
from paperdesk.web import feeds as atom
from paperdesk.web.curation import _safe_next, signed_in_response, signup_open
from paperdesk.web.pages import (
    client_wait,
    json_response,
    rate_limit,
    render,
    search_index,
    store_of,
)

PRIVATE = {"Cache-Control": "private, no-store"}


def _api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


async def _fields(request: Request) -> dict[str, Any]:
    if "json" in request.headers.get("content-type", ""):
        try:
            body = await request.json()
        except ValueError as exc:
            raise HTTPException(400, f"the body is not valid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise HTTPException(400, "the body must be a JSON object")
        return body
    return dict(await request.form())


def _text(fields: dict[str, Any], name: str, required: bool = True) -> str:
    value = fields.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise HTTPException(400, f"missing field {name!r}")
        return ""
    if not isinstance(value, str):
        raise HTTPException(400, f"field {name!r} must be text")
    return value.strip()


def _done(request: Request, fields: dict[str, Any], data: Any, default: str = "/desk") -> Response:
    if _api(request):
        return json_response(data)
    return RedirectResponse(_safe_next(str(fields.get("next") or default)), status_code=303)


@contextmanager
def _refusals() -> Iterator[None]:
    """What the desk library refuses, as the HTTP error it is: 404 for what is not
    found, 400 for the rest (the library's reason as the detail)."""
    try:
        yield
    except PaperdeskError as exc:
        raise HTTPException(404 if isinstance(exc, NotFoundError) else 400, str(exc)) from None


def _page(request: Request, template: str, data: dict[str, Any]) -> Response:
    resp = render(request, template, data)
    resp.headers.update(PRIVATE)
    return resp


def _private_json(data: Any) -> Response:
    resp = json_response(data)
    resp.headers.update(PRIVATE)
    return resp


def _page_or_json(request: Request, template: str, data: dict[str, Any]) -> Response:
    """`data` as JSON on /api/…, else the page `template`; private (never cached) both."""
    return _private_json(data) if _api(request) else _page(request, template, data)


async def _login_first(request: Request, default: str) -> Response | None:
    """A browser's POST without a session goes to the sign-in page, and from there back
    to the form's `next` (else `default`); None when signed in, or for the API."""
    if auth.signed_in(request) is not None or _api(request):
        return None
    form = await request.form()
    target = quote(_safe_next(str(form.get("next") or default)), safe="/")
    return RedirectResponse(f"/login?next={target}", status_code=303)


def _sign_in_first(request: Request) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target, safe='/')}", status_code=303)


def register(app: FastAPI) -> None:
    # -- accounts ----------------------------------------------------------------------
    @app.get("/signup", include_in_schema=False)
    def signup_form(request: Request) -> Response:
        if not signup_open(request):
            raise HTTPException(404, "sign-up is switched off here: ask for an account")
        return _page(request, "signup.html", {"error": None, "username": ""})

    @app.post("/signup", include_in_schema=False)
    async def signup(request: Request) -> Response:
        if not signup_open(request):
            raise HTTPException(404, "sign-up is switched off here: ask for an account")
        form = await auth.checked_form(request)
        rate_limit(request, "login", "attempts")
        user, password = str(form.get("username", "")).strip(), str(form.get("password", ""))
        error = None
        if password != str(form.get("password2", "")):
            error = "the two passwords differ"
        else:
            try:
                curators.add_user(store_of(request), user, password)
            except PaperdeskError as exc:
                error = str(exc)
        if error:
            resp = _page(request, "signup.html", {"error": error, "username": user})
            resp.status_code = 400
            return resp
        return signed_in_response(request, user, "/desk")

    @app.get("/api/me", summary="The signed-in user and the ids of their saved works")
    def me(request: Request) -> Response:
        who = auth.signed_in(request)
        store = store_of(request)
        if who is None:
            return Response(b'{"user":null,"saved":[]}', media_type="application/json", headers=PRIVATE)
        return _private_json({"user": who, "role": curators.role_of(store, who),
                              "saved": sorted(library.saved_set(store, who))})

    # -- the desk page -------------------------------------------------------------------
    def desk_data(store: Any, who: str, **extra: Any) -> dict[str, Any]:
        user = store.desk.user(who)
        return {
            "user": who, "role": user.role if user else None,
            "email": user.email if user else None, "digest": bool(user and user.digest),
            "library": library.items(store, who), "follows": recommend.follows(store, who),
            "searches": feeds.searches(store, who), "tokens": feeds.tokens(store, who),
            "new_token": None, "import_report": None, "password_error": None, **extra,
        }

    @app.get("/desk", include_in_schema=False)
    @app.get("/api/desk", summary="The signed-in user's desk: library, follows, searches, feeds")
    def desk_page(request: Request) -> Response:
        who = auth.signed_in(request)
        if who is None:
            if _api(request):
                raise HTTPException(401, "sign in to see your desk")
            return _sign_in_first(request)
        return _page_or_json(request, "desk.html", desk_data(store_of(request), who))

    @app.get("/desk/library.{fmt}", include_in_schema=False)
    def library_export(request: Request, fmt: str) -> Response:
        who = auth.signed_in(request)
        if who is None:
            raise HTTPException(401, "sign in to export your library")
        kinds = {"bib": ("bibtex", "application/x-bibtex; charset=utf-8"),
                 "ris": ("ris", "application/x-research-info-systems"),
                 "csl.json": ("csl", "application/vnd.citationstyles.csl+json")}
        if fmt not in kinds:
            raise HTTPException(404, "export as library.bib, library.ris or library.csl.json")
        name, media = kinds[fmt]
        body = library.export_library(store_of(request), who, name)
        return Response(body, media_type=media, headers={
            **PRIVATE, "Content-Disposition": f'attachment; filename="library.{fmt}"'})

    # -- writes (each: a signed-in user and the CSRF token) -------------------------------
    async def _write(request: Request) -> tuple[str, dict[str, Any]]:
        who = await auth.require_user(request)
        return who, await _fields(request)

    @app.post("/desk/library/add", include_in_schema=False)
    @app.post("/api/library/add", summary="Save works (star)")
    async def library_add(request: Request) -> Response:
        if (login := await _login_first(request, "/")) is not None:
            return login
        who, f = await _write(request)
        with _refusals():
            out = library.add(store_of(request), who, [_text(f, "item")])
        return _done(request, f, out[0], default="/")

    @app.post("/desk/library/remove", include_in_schema=False)
    @app.post("/api/library/remove", summary="Unsave works")
    async def library_remove(request: Request) -> Response:
        who, f = await _write(request)
        out = library.remove(store_of(request), who, [_text(f, "item")])
        return _done(request, f, out[0])

    @app.post("/desk/library/update", include_in_schema=False)
    @app.post("/api/library/update", summary="Tags, note and read mark of a saved work")
    async def library_update(request: Request) -> Response:
        who, f = await _write(request)
        tags = f.get("tags")
        if isinstance(tags, str):
            tags = tags.replace(",", " ").split()
        read = f.get("read")
        with _refusals():
            out = library.update(
                store_of(request), who, _text(f, "item"), tags=tags if isinstance(tags, list) else None,
                note=f.get("note") if isinstance(f.get("note"), str) else None,
                read=None if read in (None, "") else str(read).lower() in ("1", "true", "yes", "on"),
            )
        return _done(request, f, out)

    @app.post("/desk/library/import", include_in_schema=False)
    @app.post("/api/library/import", summary="Import BibTeX, RIS, CSL-JSON or Zotero JSON")
    async def library_import(request: Request) -> Response:
        who = await auth.require_user(request)
        form = await request.form()
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise HTTPException(400, "choose a file to import")
        data = await upload.read()
        with _refusals():
            report = importer.import_library(store_of(request), who, data)
        if _api(request):
            return json_response(report)
        return _page(request, "desk.html", desk_data(store_of(request), who, import_report=report))

    @app.post("/desk/feedback", include_in_schema=False)
    @app.post("/api/feedback", summary="Rate a work relevant (1), not relevant (-1) or clear (0)")
    async def rate(request: Request) -> Response:
        who, f = await _write(request)
        label = {"1": 1, "-1": -1, "0": None}.get(str(f.get("label", "")).strip())
        if str(f.get("label", "")).strip() not in ("1", "-1", "0"):
            raise HTTPException(400, "label is 1 (relevant), -1 (not relevant) or 0 (clear)")
        with _refusals():
            out = recommend.feedback(store_of(request), who, [_text(f, "item")], label)
        return _done(request, f, out[0], default="/for-you")

    @app.post("/desk/follow", include_in_schema=False)
    @app.post("/api/follow", summary="Follow (or with on=0 stop following) an author or subject")
    async def follow(request: Request) -> Response:
        if (login := await _login_first(request, "/desk")) is not None:
            return login
        who, f = await _write(request)
        kind = _text(f, "kind")
        on = str(f.get("on", "1")) not in ("0", "false", "")
        with _refusals():
            out = recommend.follow(store_of(request), who, kind, _text(f, "value"), on=on)
        return _done(request, f, out)

    @app.post("/desk/searches", include_in_schema=False)
    @app.post("/api/searches", summary="Save a search")
    async def search_add(request: Request) -> Response:
        who, f = await _write(request)
        with _refusals():
            out = feeds.save_search(store_of(request), who, _text(f, "name"), _text(f, "query"))
        return _done(request, f, out)

    @app.post("/desk/searches/remove", include_in_schema=False)
    @app.post("/api/searches/remove", summary="Delete a saved search")
    async def search_remove(request: Request) -> Response:
        who, f = await _write(request)
        with _refusals():
            feeds.remove_search(store_of(request), who, _text(f, "name"))
        return _done(request, f, {"removed": f.get("name")})

    @app.post("/desk/tokens", include_in_schema=False)
    @app.post("/api/tokens", summary="A new secret feed address (shown once)")
    async def token_new(request: Request) -> Response:
        who, f = await _write(request)
        search = _text(f, "search", required=False) or None
        with _refusals():
            out = feeds.new_token(store_of(request), who, search)
        out["url"] = request.app.state.settings.base_url + out["path"].lstrip("/")
        if _api(request):
            return json_response(out)
        # shown once: in this answer, never again
        return _page(request, "desk.html", desk_data(store_of(request), who, new_token=out))

    @app.post("/desk/tokens/revoke", include_in_schema=False)
    @app.post("/api/tokens/revoke", summary="Revoke a feed address")
    async def token_revoke(request: Request) -> Response:
        who, f = await _write(request)
        with _refusals():
            n = feeds.revoke(store_of(request), who, _text(f, "id"))
        return _done(request, f, {"revoked": n})

    @app.post("/desk/email", include_in_schema=False)
    @app.post("/api/email", summary="The digest's address and whether it is sent")
    async def email(request: Request) -> Response:
        who, f = await _write(request)
        address = _text(f, "email", required=False) or None
        on = str(f.get("digest", "")) in ("1", "on", "true")
        with _refusals():
            digest.set_email(store_of(request), who, address, on)
        return _done(request, f, {"email": address, "digest": on and address is not None})

    @app.post("/desk/password", include_in_schema=False)
    @app.post("/api/password", summary="Change the signed-in user's password (ends every session)")
    async def password(request: Request) -> Response:
        """The current password again (a stolen session alone cannot lock the owner out),
        then the new one twice. Every session of the account ends; this browser gets a
        new one."""
        who, f = await _write(request)
        backoff = request.app.state.login_backoff
        wait = client_wait(request, "login") or backoff.wait(who)
        if wait:
            raise HTTPException(429, f"too many attempts: retry in {int(wait) + 1} s")
        store = store_of(request)
        error = None
        if not curators.check_login(store, who, str(f.get("current") or "")):
            backoff.failed(who)
            error = "the current password is not right"
        elif str(f.get("password") or "") != str(f.get("password2") or ""):
            error = "the two new passwords differ"
        else:
            try:
                curators.set_password(store, who, str(f.get("password") or ""))
            except PaperdeskError as exc:
                error = str(exc)
        if error:
            if _api(request):
                raise HTTPException(403 if "current" in error else 400, error)
            resp = _page(request, "desk.html", desk_data(store, who, password_error=error))
            resp.status_code = 403 if "current" in error else 400
            return resp
        backoff.succeeded(who)
        done = signed_in_response(request, who, "/desk")
        if _api(request):
            body = json_response({"user": who, "changed": True})
            body.raw_headers.extend((k, v) for k, v in done.raw_headers if k == b"set-cookie")
            return body
        return done

    # -- for you ----------------------------------------------------------------------------
    @app.get("/for-you", include_in_schema=False)
    @app.get("/api/for-you", summary="A day's works ranked for the signed-in user, with reasons")
    def for_you(request: Request, day: str | None = None, subject: str | None = None,
                new: int = 0) -> Response:
        who = auth.signed_in(request)
        if who is None:
            if _api(request):
                raise HTTPException(401, "sign in for your recommendations")
            return _sign_in_first(request)
        store = store_of(request)
        day = day or store.desk.latest_day()
        data = recommend.recommend(store, who, since=day, until=day, subject=subject or None,
                                   limit=200, new_only=bool(new), mark_seen=True)
        data["new_only"] = bool(new)
        data["prev_day"], data["next_day"] = store.catalog.neighbour_days(day) if day else (None, None)
        data["new_count"] = sum(1 for h in data["hits"] if h["new"])
        return _page_or_json(request, "foryou.html", data)

    # -- private feeds -----------------------------------------------------------------------
    @app.get("/feeds/{name}", include_in_schema=False)
    def private_feed(request: Request, name: str) -> Response:
        if not name.endswith(".atom"):
            raise HTTPException(404, "no such feed")
        store = store_of(request)
        token = name[: -len(".atom")]
        try:
            with search_index(request) as ix:
                feed = feeds.feed_of(store, token, index=ix)
        except NotFoundError:
            raise HTTPException(404, "no such feed") from None
        base = request.app.state.settings.base_url
        self_url = base + "feeds/" + quote(name)
        fg = atom.build(base, self_url, feed["title"], feed["works"], store.desk.latest_day())
        fg.author({"name": "paperdesk"})
        return Response(fg.atom_str(pretty=True), media_type="application/atom+xml", headers=PRIVATE)

