"""Curator accounts (scrypt-hashed passwords) for signing in to apply corrections, and
their web sessions: a random token in the cookie, its sha256 here, so that signing out, a
password change or a reset ends a session wherever its cookie was copied to."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import UTC, datetime, timedelta

from paperdesk.errors import PaperdeskError
from paperdesk.store.sqlite import SQLiteStore, now

_N, _R, _P = 2**14, 8, 1
USERNAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        _, n, r, p, salt, digest = stored.split("$")
        got = hashlib.scrypt(
            password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=32
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got.hex(), digest)


def add_curator(store: SQLiteStore, username: str, password: str) -> None:
    """Create or reset an account (a password of at least 10 characters)."""
    if not USERNAME.match(username):
        raise PaperdeskError("usernames are 1-64 letters, digits or . _ @ -")
    if len(password) < 10:
        raise PaperdeskError("passwords must have at least 10 characters")
    with store.transaction():
        store.conn.execute(
            "INSERT INTO curators (username, password_hash, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT(username) DO UPDATE SET password_hash = excluded.password_hash",
            (username, hash_password(password), now()),
        )
        # A new password ends every session signed in with the old one.
        store.conn.execute("DELETE FROM curator_sessions WHERE username = ?", (username,))


def check_login(store: SQLiteStore, username: str, password: str) -> bool:
    row = store.conn.execute(
        "SELECT password_hash FROM curators WHERE username = ?", (username,)
    ).fetchone()
    if row is None:
        hash_password(password)  # same time as a real check: no user enumeration by timing
        return False
    return verify_password(password, row[0])


def list_curators(store: SQLiteStore) -> list[dict[str, str]]:
    rows = store.conn.execute("SELECT username, created_at FROM curators ORDER BY username")
    return [{"username": u, "created_at": t} for u, t in rows]


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def start_session(store: SQLiteStore, username: str, max_age: int) -> str:
    """A new session for `username` lasting `max_age` seconds: the token for its cookie."""
    token = secrets.token_urlsafe(32)
    at = datetime.now(UTC)
    with store.transaction():
        store.conn.execute("DELETE FROM curator_sessions WHERE expires_at < ?", (_stamp(at),))
        store.conn.execute(
            "INSERT INTO curator_sessions (token_hash, username, created_at, expires_at)"
            " VALUES (?, ?, ?, ?)",
            (_token_hash(token), username, _stamp(at), _stamp(at + timedelta(seconds=max_age))),
        )
    return token


def session_user(store: SQLiteStore, token: str) -> str | None:
    """Who a live session token belongs to; None when it was ended, expired or never was."""
    row = store.conn.execute(
        "SELECT username FROM curator_sessions WHERE token_hash = ? AND expires_at >= ?",
        (_token_hash(token), now()),
    ).fetchone()
    return None if row is None else str(row[0])


def end_session(store: SQLiteStore, token: str) -> None:
    """Sign out: the token no longer opens a session."""
    with store.transaction():
        store.conn.execute("DELETE FROM curator_sessions WHERE token_hash = ?", (_token_hash(token),))
