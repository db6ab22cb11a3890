"""The connection as the shared repositories use it, and the helpers of their SQL.

`Conn` is the subset of `sqlite3.Connection` they call (`execute`, `executemany`,
`in_transaction`); the PostgreSQL backend's `PGConn` offers the same, running each
statement through the dialect layer. `Tx` is the explicit transaction a repository write
opens or joins. `chunks` and `placeholders` build `IN (…)` lists in bounded chunks: SQLite
caps the bound parameters of one statement (32,766 since 3.32, 999 before), and the
PostgreSQL backend runs the same statements (binding each list as one array).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Conn(Protocol):
    """What the shared repositories call on a connection."""

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Any, /) -> Any: ...


class Tx:
    """`BEGIN IMMEDIATE` (take the write lock up front) … `COMMIT`, `ROLLBACK` on any
    error; nested use joins the outer transaction. PostgreSQL's `PGConn` takes these
    statements as SQLite-style explicit transactions (its writer lock, then `BEGIN`)."""

    def __init__(self, conn: Conn):
        self.conn = conn
        self.outer = False

    def __enter__(self) -> Any:
        self.outer = not self.conn.in_transaction
        if self.outer:
            self._begin()
        return self.conn

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if not self.outer:
            return
        try:
            if exc_type is None:
                self.conn.execute("COMMIT")
            else:
                self.conn.execute("ROLLBACK")
        finally:
            if not self.conn.in_transaction:  # a failed COMMIT leaves it open
                self._ended()

    def _begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def _ended(self) -> None:
        """After the outer transaction ended (a backend's own settings go back)."""


def has_table(conn: Conn, table: str) -> bool:
    """Whether `table` exists (the `sqlite_master` probe; PostgreSQL's is `pg_tables`)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return row is not None


def chunks(items: Sequence[T], n: int = 500) -> Iterator[Sequence[T]]:
    """`items` in slices of at most `n`."""
    for i in range(0, len(items), n):
        yield items[i : i + n]


def placeholders(n: int) -> str:
    """`?,?,…` for `n` parameters."""
    return ",".join("?" * n)


_KNOWN_SQL = (
    "SELECT r.key, p.sha256 FROM records r JOIN payloads p ON p.record_rowid = r.rowid"
    " WHERE r.key IN ({})"
)


def known_payloads(conn: Conn, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """The subset of `(record key, payload sha256 hex)` pairs whose record holds that
    payload, on any connection (the ingest workers ask on read-only ones).

    Asked by key because a payload belongs to the record its parser made of it: the
    record's key is final before normalising (`finish` never changes source or id), the
    `records` key index is written nearly in order (new ids arrive in order) and a
    record's payloads sit together in `payloads_record`. A random digest index, written at
    a random place for every payload, was the one index that a bulk ingest rewrote nearly
    whole in every transaction (migration 006)."""
    wanted = set(pairs)
    keys = list({k for k, _ in wanted})
    found: set[tuple[str, str]] = set()
    for chunk in chunks(keys):
        sql = _KNOWN_SQL.format(placeholders(len(chunk)))
        found.update(pair for pair in conn.execute(sql, chunk) if pair in wanted)
    return found
