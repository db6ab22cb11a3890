"""The desk's repository interface: user accounts and sessions, and each user's library,
own records, feedback, follows, saved searches, feed tokens and seen works (issue 20).

Kept apart from `base.py` so the desk can grow without touching the store's core
interface; a backend's `Store` exposes an implementation as `store.desk` (SQLite:
`store/sql/desk.py`, on both backends). Like every repository it takes and returns plain values and the
dataclasses below, never connections; every method that writes must be called inside
`store.transaction()` (they join it) or opens its own. Nothing here hashes passwords or
knows what a token means: `store/curators.py` and `paperdesk.desk` do.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class UserRow:
    username: str
    role: str
    """`user` or `curator` (curators may also apply corrections)."""
    created_at: str
    email: str | None = None
    digest: bool = False


@dataclass
class LibraryItem:
    item: str
    """`W123`, a record key `SOURCE:ID`, or `mine:<id>` (the user's own record)."""
    added_at: str
    tags: list[str] = field(default_factory=list)
    note: str | None = None
    read_at: str | None = None


@dataclass
class OwnRecord:
    id: int
    data: dict[str, Any]
    origin: str
    created_at: str


@dataclass
class SavedSearch:
    id: int
    name: str
    query: str
    created_at: str


@dataclass
class FeedToken:
    id: str
    """The first 12 hex digits of the token's hash: enough to name it for revoking."""
    scope: str
    created_at: str


@dataclass
class CandidateRow:
    """One record that appeared in a date range, with its work (None before resolve)."""

    key: str
    work_id: int | None
    appeared: str
    data: bytes


@dataclass
class FeatureRow:
    """One record that appeared in a range (or was asked for), with its work and its
    stored recommender features — None when missing or computed from another `seq` or
    format (the caller computes and stores them again)."""

    key: str
    work_id: int | None
    appeared: str | None
    seq: int
    terms: bytes | None
    meta: str | None


@dataclass
class FollowRow:
    kind: str
    """`author` or `subject`."""
    value: str
    """An author profile id (or, for a follow made with no profile to name, the name); a
    subject code."""
    label: str
    """What the user followed, for display (the author's name)."""


class DeskRepository(Protocol):
    # -- users and sessions --
    def create_user(self, username: str, password_hash: str, role: str, stamp: str) -> bool:
        """False when the name is taken."""
        ...

    def set_password(self, username: str, password_hash: str) -> bool:
        """Also ends every session of the user. False when there is no such user."""
        ...

    def set_role(self, username: str, role: str) -> bool: ...

    def set_email(self, username: str, email: str | None, digest: bool) -> bool: ...

    def remove_user(self, username: str) -> bool:
        """The user and everything of theirs (library, feedback, feeds, sessions)."""
        ...

    def user(self, username: str) -> UserRow | None: ...

    def users(self) -> list[UserRow]: ...

    def password_hash(self, username: str) -> str | None: ...

    def add_session(self, token_hash: str, username: str, created: str, expires: str) -> None:
        """Also drops sessions expired before `created`."""
        ...

    def session_user(self, token_hash: str, at: str) -> str | None: ...

    def delete_session(self, token_hash: str) -> None: ...

    # -- library --
    def add_items(self, username: str, items: Sequence[str], stamp: str) -> int:
        """Items not yet saved are saved; the number added."""
        ...

    def remove_items(self, username: str, items: Sequence[str]) -> int: ...

    def library(self, username: str) -> list[LibraryItem]: ...

    def update_item(
        self,
        username: str,
        item: str,
        *,
        tags: list[str] | None = None,
        note: str | None = None,
        read_at: str | None = None,
        unread: bool = False,
    ) -> bool:
        """Change the fields given (`unread` clears `read_at`). False when not saved."""
        ...

    def add_own(self, username: str, data: dict[str, Any], origin: str, stamp: str) -> int:
        """A user's own record; its id (the library item is `mine:<id>`)."""
        ...

    def own_records(self, username: str, ids: Sequence[int] | None = None) -> list[OwnRecord]: ...

    def delete_own(self, username: str, ids: Sequence[int]) -> None: ...

    # -- feedback and follows --
    def put_feedback(self, username: str, items: Sequence[str], label: int, stamp: str) -> None: ...

    def remove_feedback(self, username: str, items: Sequence[str]) -> int: ...

    def feedback(self, username: str) -> dict[str, int]: ...

    def follow(self, username: str, kind: str, value: str, stamp: str, label: str | None = None) -> bool: ...

    def unfollow(self, username: str, kind: str, value: str) -> bool:
        """Drop the follow whose value — or, for authors, label — is `value`."""
        ...

    def follows(self, username: str) -> list[FollowRow]: ...

    # -- saved searches and feed tokens --
    def add_search(self, username: str, name: str, query: str, stamp: str) -> int | None:
        """None when the user already has a search of that name."""
        ...

    def remove_search(self, username: str, name: str) -> bool: ...

    def searches(self, username: str) -> list[SavedSearch]: ...

    def add_token(self, token_hash: str, username: str, scope: str, stamp: str) -> None: ...

    def token_owner(self, token_hash: str) -> tuple[str, str] | None:
        """(username, scope) of a live token."""
        ...

    def revoke_tokens(self, username: str, token_id: str | None = None, scope: str | None = None) -> int:
        """Drop the user's token whose id (hash prefix) is `token_id`, or all of `scope`, or all."""
        ...

    def tokens(self, username: str) -> list[FeedToken]: ...

    # -- seen works --
    def mark_seen(self, username: str, items: Sequence[str], stamp: str) -> None: ...

    def seen(self, username: str, items: Sequence[str]) -> dict[str, str]:
        """item → when first shown, for the items among `items` already shown."""
        ...

    # -- reads over the catalog for import and recommendations --
    def records_by_ids(self, kind: str, values: Sequence[str]) -> dict[str, list[tuple[str, int | None]]]:
        """`kind` doi|arxiv: value → [(record key, work id or None)]."""
        ...

    def titles(self) -> Iterator[tuple[str, str]]:
        """(record key, title) of every titled record (title matching scans them once)."""
        ...

    def record_works(self, keys: Sequence[str]) -> dict[str, int]: ...

    def record_data(self, keys: Sequence[str]) -> dict[str, bytes]: ...

    def candidates(self, since: str, until: str) -> list[CandidateRow]:
        """Records that appeared on days `since`..`until` (inclusive, `YYYY-MM-DD`)."""
        ...

    def latest_day(self) -> str | None: ...

    def feature_rows(self, since: str, until: str, fmt: int) -> list[FeatureRow]:
        """Records that appeared on days `since`..`until`, with features of format `fmt`."""
        ...

    def feature_rows_of(self, keys: Sequence[str], fmt: int) -> list[FeatureRow]: ...

    def put_features(self, rows: Sequence[tuple[str, int, int, bytes, str]]) -> None:
        """(record key, seq, format, terms, meta) rows, replacing older ones."""
        ...

    def author_records(self, author_ids: Sequence[str]) -> dict[str, tuple[str, set[str]]]:
        """Followed profile id → (its id now, redirects followed; the record keys of its
        signatures), for the ids that still lead to a profile."""
        ...

    def vectors(self, refs: Sequence[str], model: str) -> dict[str, bytes]:
        """Stored search vectors (float16 bytes) of works / record keys indexed by `model`."""
        ...

    def users_with_digest(self) -> list[UserRow]: ...
