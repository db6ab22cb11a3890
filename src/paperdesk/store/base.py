"""The narrow interface every store backend implements (SQLite now, PostgreSQL later).

Nothing outside `paperdesk.store` writes SQL; sources, resolution, search and web code call
these methods only, so a backend can be swapped without touching them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from paperdesk.model import SourceRecord


@dataclass
class PutResult:
    """What one `put_records` call did."""

    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    keys: list[str] = field(default_factory=list)
    """Keys of records inserted or updated (what downstream stages must re-process)."""


@dataclass
class Reject:
    """A record that could not be ingested, kept so users can see and fix it."""

    origin: str
    record_no: int | None
    error: str
    snippet: str = ""


class Store(Protocol):
    path: str

    def close(self) -> None: ...

    # -- source records --
    def known_payloads(self, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """The subset of (record key, payload sha256 hex) pairs whose record already holds
        that payload."""
        ...

    def put_records(
        self,
        records: Sequence[SourceRecord],
        *,
        origin: str,
        checkpoint: tuple[str, Any] | None = None,
        rejects: Sequence[Reject] = (),
        hashes: Sequence[str] | None = None,
    ) -> PutResult:
        """Insert or merge records, their raw payloads, rejects and an optional checkpoint
        in ONE transaction: after a crash either all of it is stored or none of it."""
        ...

    def get_record(self, key: str) -> SourceRecord:
        """The record `SOURCE:ID`; raises NotFoundError."""
        ...

    def iter_records(
        self, source: str | None = None, *, after_rowid: int = 0, limit: int | None = None
    ) -> Iterator[tuple[int, SourceRecord]]:
        """(rowid, record) in insertion order; `after_rowid` lets stages resume incrementally."""
        ...

    def record_payloads(self, key: str) -> list[dict[str, Any]]:
        """Every raw payload received for a record: format, origin, received_at, body."""
        ...

    # -- bookkeeping --
    def get_checkpoint(self, name: str) -> Any | None: ...

    def set_checkpoint(self, name: str, value: Any) -> None: ...

    def add_rejects(self, rejects: Iterable[Reject]) -> None: ...

    def stats(self) -> dict[str, Any]: ...
