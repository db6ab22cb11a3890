"""The PostgreSQL store: `open_store("postgresql://USER:PASS@HOST/DB")`.

`PGStore` is `sql.store.SQLStore` (the record methods and repositories both backends share,
in the common dialect, run through `dialect.py`) on a PostgreSQL connection facade, a sibling
of `SQLiteStore`. What PostgreSQL does its own way is here and in `repositories.py` and
`authors.py`: the schema and its migrations (`schema/NNN_name.sql`, recorded in the same `migrations` table),
transactions (one writer at a time by an advisory lock, as `BEGIN IMMEDIATE` on SQLite),
read-only views on pooled connections, bulk writes by COPY, and paging through the
records by key instead of holding a whole table's rows.

Durability: `put_rows` writes a batch's records, payloads, rejects and checkpoint in one
transaction, as on SQLite; PostgreSQL's commit is durable (WAL, fsync) by default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg
import psycopg.sql
from psycopg import conninfo

from paperdesk import settings
from paperdesk.errors import StoreError
from paperdesk.model import SourceRecord
from paperdesk.store.base import now
from paperdesk.store.codec import decode_record
from paperdesk.store.postgres.authors import PGAuthors
from paperdesk.store.postgres.connection import PGConn, database, describe
from paperdesk.store.postgres.repositories import PGSearch, PGWorks, changed_pages
from paperdesk.store.sql.store import SQLStore
from paperdesk.store.sql.subjects import Subjects

_PAGE = 2000
"""Records a keyset page of `iter_records` / `iter_changed` fetches."""



def data_dir() -> Path:
    """Where a PostgreSQL store's files (search indexes) live: `$PAPERDESK_DATA_DIR`, else
    `$XDG_DATA_HOME/paperdesk`."""
    env = settings.DATA_DIR.get()
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "paperdesk"


def files_base(url: str) -> str:
    """The path the store's files are named after: `DATA_DIR/HOST-PORT-DB` (the search
    index is this plus `.index`, as it is the SQLite file's name plus `.index`), and
    `-SCHEMA` for a store in a schema of its own (`options=-csearch_path=SCHEMA`)."""
    name = describe(url).rpartition("@")[2]
    options = str(conninfo.conninfo_to_dict(url).get("options") or "")
    schema = re.search(r"search_path\s*=\s*([A-Za-z0-9_]+)", options)
    if schema:
        name += f"-{schema.group(1)}"
    return str(data_dir() / re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-"))


class PGStore(SQLStore):
    """A store in a PostgreSQL database. Construct with `open_store(url)`."""

    dialect = "postgresql"
    conn: PGConn

    def __init__(self, url: str, *, readonly: bool = False, migrate: bool = True):
        self.url = url
        self.db = database(url)
        self.name = self.db.name
        self.path = files_base(url)
        """Not a file: the base name of the store's own files (search indexes)."""
        self.readonly = readonly
        self.conn = PGConn(self.db, readonly=readonly)
        self._repositories()
        self.applied: list[str] = []
        if migrate and not readonly:
            self.applied = self.migrate()

    @property
    def target(self) -> str:
        """What `open_store` takes to open this store again (another process's)."""
        return self.url

    @property
    def shared(self) -> bool:
        """Always: other processes open their own views of the database."""
        return True

    def known(self, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """`known_payloads`, as `paperdesk.store.payload_lookup` objects answer it."""
        return self.known_payloads(pairs)

    def _repositories(self) -> None:
        self.authors = PGAuthors(self.conn)
        self.works = PGWorks(self.conn)
        self.subjects = Subjects(self.conn)
        self.search = PGSearch(self.conn)
        super()._repositories()

    @property
    def pg(self) -> PGConn:
        return self.conn

    # -- plumbing --------------------------------------------------------------------
    def close(self) -> None:
        """Nothing to close: connections go back to the process's pool after each use."""

    @contextmanager
    def reader(self) -> Iterator[PGStore]:
        """A read-only view: each statement on a connection of the read-only pool, seeing
        what was committed when it started (never half a batch), as SQLite's `mode=ro`
        reader does; the server refuses any write on it."""
        yield PGStore(self.url, readonly=True, migrate=False)

    def migrate(self) -> list[str]:
        """Apply every `postgres/schema/NNN_name.sql` not yet recorded, in name order, each
        in its own transaction (under the writer lock: two processes opening a new
        database at once apply each file once)."""
        folder = resources.files("paperdesk.store.postgres").joinpath("schema")
        files = sorted(
            (p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name
        )
        with self.db.connection() as conn:  # only reads when all is applied: no DDL rights
            row = conn.execute("SELECT to_regclass('migrations')").fetchone()
            done = (
                {r[0] for r in conn.execute("SELECT name FROM migrations")}
                if row and row[0] is not None
                else set()
            )
        applied: list[str] = []
        for item in files:
            if item.name in done:
                continue
            with self.pg.pin(write=True) as conn:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
                )
                if conn.execute("SELECT 1 FROM migrations WHERE name = %s", (item.name,)).fetchone():
                    continue  # another process applied it meanwhile
                try:
                    conn.execute(item.read_text(encoding="utf-8"))
                except psycopg.Error as exc:
                    raise StoreError(f"migration {item.name} failed: {exc}") from exc
                conn.execute(
                    "INSERT INTO migrations (name, applied_at) VALUES (%s, %s)", (item.name, now())
                )
            applied.append(item.name)
        if applied:
            self.db.forget_schema()
        return applied

    def restart_wal_if_large(self) -> None:
        """Nothing to do: the server manages its WAL."""

    def transaction(self) -> AbstractContextManager[Any]:
        """One write transaction on a pinned connection, after the writer lock."""
        return self._tx()

    def rows_transaction(self) -> AbstractContextManager[Any]:
        return self._tx()

    @contextmanager
    def _tx(self) -> Iterator[PGConn]:
        if self.readonly:
            raise StoreError(f"a read-only view cannot write: readonly ({self.name})")
        with self.pg.pin(write=True):
            yield self.pg

    # -- records ---------------------------------------------------------------------
    def _bulk_insert(self, table: str, columns: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """COPY: `put_rows` (shared, the same plan as on SQLite) writes records,
        categories and payloads through this, in binary format: their values have the
        columns' types (`prepare_row`), and the records' and payloads' bytes then go as
        they are instead of as hex text that the server parses back."""
        self._copy(table, columns, rows, binary=True)

    def _copy(
        self, table: str, columns: str, rows: Iterable[Sequence[Any]], *, binary: bool = False
    ) -> None:
        """COPY rows into `table` on the transaction's connection (fixed names only)."""
        conn = self.pg.pinned
        assert conn is not None, "COPY runs inside a transaction"
        n = 0
        try:
            with conn.cursor() as cur, cur.copy(
                f"COPY {table} ({columns}) FROM STDIN"  # fixed names
                + (" (FORMAT BINARY)" if binary else "")
            ) as copy:
                if binary:
                    types = self.db.column_types(table)
                    copy.set_types([types[c.strip()] for c in columns.split(",")])
                for row in rows:
                    copy.write_row(row)
                    n += 1
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL at {self.name}: {exc} [COPY {table}]") from exc
        self.pg.wrote(table, n)

    def _existing(self, keys: set[str]) -> dict[str, tuple[int, SourceRecord]]:
        out: dict[str, tuple[int, SourceRecord]] = {}
        ks = sorted(keys)
        for i in range(0, len(ks), 5000):
            found = self.pg.raw(
                "SELECT key, rowid, data FROM records WHERE key = ANY(%s)", (ks[i : i + 5000],)
            ).fetchall()
            for key, rowid, data in sorted(found):
                out[key] = (int(rowid), decode_record(data))
        return out

    def iter_records(
        self, source: str | None = None, *, after_rowid: int = 0, limit: int | None = None
    ) -> Iterator[tuple[int, SourceRecord]]:
        """(rowid, record) in insertion order, a page of `_PAGE` at a time (keyset)."""
        left = limit
        last = after_rowid
        while left is None or left > 0:
            n = _PAGE if left is None else min(_PAGE, left)
            if source:
                rows = self.pg.raw(
                    "SELECT rowid, data FROM records WHERE rowid > %s AND source = %s"
                    " ORDER BY rowid LIMIT %s",
                    (last, source, n),
                ).fetchall()
            else:
                rows = self.pg.raw(
                    "SELECT rowid, data FROM records WHERE rowid > %s ORDER BY rowid LIMIT %s",
                    (last, n),
                ).fetchall()
            for rowid, data in rows:
                yield int(rowid), decode_record(data)
            if len(rows) < n:
                return
            last = int(rows[-1][0])
            if left is not None:
                left -= len(rows)

    def iter_changed(self, after_seq: int) -> Iterator[tuple[int, SourceRecord]]:
        for batch in changed_pages(self.pg, after_seq, _PAGE):
            for _, seq, data in batch:
                yield seq, decode_record(data)

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        out["db"] = f"postgresql://{self.name}"
        return out

    def copy_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Bulk-load rows into a table inside the caller's transaction (`db copy`)."""
        self._copy(table, ", ".join(columns), rows)

    def fix_identities(self) -> None:
        """After rows were loaded with their ids (`db copy`): every identity column's
        sequence continues above the largest id stored."""
        for table, column in self.pg.raw(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'"
        ).fetchall():
            self.pg.raw(
                psycopg.sql.SQL(
                    "SELECT setval(pg_get_serial_sequence({t}, {c}),"
                    " COALESCE((SELECT MAX({col}) FROM {tab}), 0) + 1, false)"
                ).format(
                    t=psycopg.sql.Literal(table),
                    c=psycopg.sql.Literal(column),
                    col=psycopg.sql.Identifier(column),
                    tab=psycopg.sql.Identifier(table),
                )
            )


    def refresh_statistics(self) -> None:
        """ANALYZE every table of this store's schema: after a bulk load (`db copy`) the
        planner has no statistics until autovacuum comes round, and picks sequential scans
        (the daily page took 250 ms instead of 40 on a copied feed store)."""
        for (table,) in self.pg.raw(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
        ).fetchall():
            self.pg.raw(psycopg.sql.SQL("ANALYZE {}").format(psycopg.sql.Identifier(table)))


def change_marker(url: str) -> Callable[[], tuple[int, ...]]:
    """A callable whose value changes whenever a transaction commits (or starts writing):
    what a page cache compares to know that its pages may be stale. It is the server's
    current snapshot (`xmin:xmax:in-progress ids`), which every commit changes and which
    reads, having no transaction id, never move. (The WAL position it replaces moved with
    every row an ingest wrote before its commit: under an ingest no page stayed cached.)"""
    db = database(url)

    def marker() -> tuple[int, ...]:
        with db.connection() as conn:
            row = conn.execute("SELECT pg_current_snapshot()::text").fetchone()
        if not row:
            return (0,)
        xmin, xmax, running = str(row[0]).split(":")
        return (int(xmin), int(xmax), *(int(x) for x in running.split(",") if x))

    return marker
