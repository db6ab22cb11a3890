"""User accounts: scrypt-hashed passwords, roles and web sessions (issue 20).

Every account is a user with a desk (library, recommendations, feeds); accounts with the
`curator` role may also apply corrections. Passwords are hashed with scrypt (memory-hard:
n=2^14, r=8 takes 16 MiB per guess) with a per-account salt. A web session is a random
token in the cookie and its sha256 in the store, so that signing out, a password change
or a reset ends a session wherever its cookie was copied to. The SQL is the desk
repository's (`store.desk`, `store/desk_base.py`); this module holds the rules.

The old names (`add_curator`, `list_curators`) stay: they make or reset curator accounts.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store.base import Store, now

_N, _R, _P = 2**14, 8, 1
USERNAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
ROLES = ("user", "curator")
MIN_PASSWORD = 10


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


def check_username(username: str) -> str:
    if not USERNAME.match(username or ""):
        raise PaperdeskError("usernames are 1-64 letters, digits or . _ @ -")
    return username


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise PaperdeskError(f"passwords must have at least {MIN_PASSWORD} characters")
    if len(password) > 1024:
        raise PaperdeskError("passwords are limited to 1024 characters")
    return password


def add_user(store: Store, username: str, password: str, role: str = "user") -> None:
    """Create an account; raises PaperdeskError when the name is taken."""
    check_username(username)
    check_password(password)
    if role not in ROLES:
        raise PaperdeskError(f"role must be one of {', '.join(ROLES)}")
    if not store.desk.create_user(username, hash_password(password), role, now()):
        raise PaperdeskError(f"user {username!r} exists (use `paperdesk user password` to reset it)")


def set_password(store: Store, username: str, password: str) -> None:
    """A new password; every session signed in with the old one ends."""
    check_password(password)
    if not store.desk.set_password(username, hash_password(password)):
        raise NotFoundError(f"no user {username!r}")


def set_role(store: Store, username: str, role: str) -> None:
    if role not in ROLES:
        raise PaperdeskError(f"role must be one of {', '.join(ROLES)}")
    if not store.desk.set_role(username, role):
        raise NotFoundError(f"no user {username!r}")


def remove_user(store: Store, username: str) -> None:
    """The account and all of its desk: library, own records, feedback, feeds, sessions."""
    if not store.desk.remove_user(username):
        raise NotFoundError(f"no user {username!r}")


def list_users(store: Store) -> list[dict[str, Any]]:
    return [asdict(u) for u in store.desk.users()]


def role_of(store: Store, username: str) -> str | None:
    user = store.desk.user(username)
    return None if user is None else user.role


def add_curator(store: Store, username: str, password: str) -> None:
    """Create a curator account, or reset an existing account's password and make it a
    curator (what `paperdesk curator add` always did)."""
    check_username(username)
    check_password(password)
    with store.transaction():
        if not store.desk.create_user(username, hash_password(password), "curator", now()):
            store.desk.set_password(username, hash_password(password))
            store.desk.set_role(username, "curator")


def list_curators(store: Store) -> list[dict[str, str]]:
    return [{"username": u.username, "created_at": u.created_at}
            for u in store.desk.users() if u.role == "curator"]


_DUMMY = hash_password("not a password of anyone", b"\0" * 16)


def check_login(store: Store, username: str, password: str) -> bool:
    stored = store.desk.password_hash(username)
    if stored is None:
        verify_password(password, _DUMMY)  # same time as a real check: no user enumeration
        return False
    return verify_password(password, stored)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def start_session(store: Store, username: str, max_age: int) -> str:
    """A new session for `username` lasting `max_age` seconds: the token for its cookie."""
    token = secrets.token_urlsafe(32)
    at = datetime.now(UTC)
    store.desk.add_session(_token_hash(token), username, _stamp(at),
                           _stamp(at + timedelta(seconds=max_age)))
    return token


def session_user(store: Store, token: str) -> str | None:
    """Who a live session token belongs to; None when it was ended, expired or never was."""
    return store.desk.session_user(_token_hash(token), now())


def end_session(store: Store, token: str) -> None:
    """Sign out: the token no longer opens a session."""
    store.desk.delete_session(_token_hash(token))
