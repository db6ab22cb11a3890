"""Who may write: signed-in users (local accounts, scrypt-hashed) to their own desk,
signed-in curators (users with the `curator` role) or an admin token to corrections.

- Browsers sign in at /login; the session is a signed, HttpOnly, SameSite=Strict cookie
  holding a random token that the store knows (`curators.start_session`): signing out, a
  password change or a reset deletes it, so a copied cookie stops working then.
  Every POST from a browser must also carry the page's CSRF token.
- Scripts send `Authorization: Bearer $PAPERDESK_ADMIN_TOKEN`; a browser never attaches
  that header by itself, so token requests need no CSRF token.
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import HTTPException, Request
from itsdangerous import BadSignature, URLSafeTimedSerializer

from paperdesk.store import curators
from paperdesk.web import security
from paperdesk.web.pages import store_of

SESSION_COOKIE = "pd_session"
SESSION_MAX_AGE = 7 * 24 * 3600


def _serializer(request: Request) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(request.app.state.settings.secret_key, salt="pd-session")


def session_value(request: Request, token: str) -> str:
    """The cookie for a session token (`curators.start_session`)."""
    return _serializer(request).dumps({"t": token})


def session_token(request: Request) -> str | None:
    """The session token the request's cookie carries, when its signature is good."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    try:
        data: Any = _serializer(request).loads(cookie, max_age=SESSION_MAX_AGE)
        token = data["t"]
    except (BadSignature, KeyError, TypeError):
        return None
    return token if isinstance(token, str) else None


def signed_in(request: Request) -> str | None:
    """The user whose live session the request's cookie carries, whatever their role."""
    token = session_token(request)
    return curators.session_user(store_of(request), token) if token else None


def curator(request: Request) -> tuple[str | None, bool]:
    """(who, by_token): the signed-in curator or "admin" for the token; (None, False) for
    anyone else, a signed-in user without the curator role included."""
    token = request.app.state.settings.admin_token
    header = request.headers.get("authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:], token):
        return "admin", True
    who = signed_in(request)
    if who is not None and curators.role_of(store_of(request), who) == "curator":
        return who, False
    return None, False


def check_csrf(request: Request, form_token: str | None) -> None:
    token = form_token or request.headers.get("x-csrf-token")
    nonce = request.cookies.get(security.CSRF_COOKIE)
    if not security.csrf_ok(request.app.state.settings.secret_key, nonce, token):
        raise HTTPException(403, "missing or invalid CSRF token: reload the page and try again")


async def checked_form(request: Request) -> Any:
    """A browser's posted form, its CSRF token checked (403 otherwise)."""
    form = await request.form()
    check_csrf(request, str(form.get("csrf") or "") or None)
    return form


async def require_user(request: Request) -> str:
    """The signed-in user a desk write is for (always with the page's CSRF token: the
    admin token names no user); 401/403 otherwise."""
    who = signed_in(request)
    if who is None:
        raise HTTPException(401, "sign in to change your desk")
    ctype = request.headers.get("content-type", "")
    form = await request.form() if "form" in ctype else {}
    check_csrf(request, str(form.get("csrf") or "") or None)
    return who


async def require_curator(request: Request) -> str:
    """The curator allowed to write (checks CSRF for browser sessions); 401/403 otherwise."""
    who, by_token = curator(request)
    if who is None:
        raise HTTPException(401, "sign in as a curator (or send the admin token) to apply corrections")
    if not by_token:
        form = await request.form() if "form" in request.headers.get("content-type", "") else {}
        check_csrf(request, str(form.get("csrf") or "") or None)
    return who
