"""PostgreSQL connections: one pool per database and process, and `PGConn`, the facade with
the subset of `sqlite3.Connection` the shared repositories use (`execute`, `executemany`,
`in_transaction`), running their SQL through the dialect layer.

Why a pool and a facade instead of one connection per store, as on SQLite: a web worker
opens a store per thread (up to ~40 threads), four workers would hold 160 idle server
connections. Here a statement outside a transaction borrows a pooled connection for itself
(autocommit; its rows are fetched whole, as psycopg's client-side cursors do anyway) and
a transaction or a reader block pins one connection until it ends. Every psycopg import of
the package is in `postgres/`.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg import conninfo, sql
from psycopg.adapt import Loader
from psycopg.types.numeric import FloatDumper, Int8Dumper
from psycopg_pool import ConnectionPool, PoolTimeout

from paperdesk import settings
from paperdesk.errors import StoreError
from paperdesk.store.postgres.dialect import bind_arrays, in_arrays, make_translator

WRITER_LOCK = 0x70617065  # "pape": the high half of the writer lock's key
"""The advisory lock every write transaction takes is `WRITER_LOCK << 32 | OID` of the
store's schema (`current_schema()`): one writer at a time per store, while two stores in
two schemas of one database (advisory locks are per database) do not wait for each other."""
_TAKE_WRITER_LOCK = (
    "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(%s::int8 << 32"
    " | COALESCE((SELECT oid::int8 FROM pg_catalog.pg_namespace"
    " WHERE nspname = current_schema()), 0))"
)
"""One round trip: the wait's limit for this transaction, then the store's writer lock."""
LOCK_TIMEOUT = "30s"
"""How long a writer waits for another (SQLite's busy timeout is 30 s as well)."""
ANALYZE_MIN = 5000
"""Rows written to a table before `PGConn.wrote` may ANALYZE it."""
CONNECT_TIMEOUT = 10


_COLUMNS = (
    " FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid"
    " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v')"
    " AND a.attnum > 0 AND NOT a.attisdropped"
)
"""The columns of this schema's tables, from the catalog: `information_schema.columns`
says the same after ~150 ms of checking privileges row by row (a day's run asked it
three times)."""


class _NumberLoader(Loader):
    """`numeric` (what SUM and AVG of integers give) as an int when whole, else a float:
    the SQLite backend gives plain numbers, and Decimal would leak into JSON and maths."""

    def load(self, data: Any) -> int | float:
        text = bytes(data).decode()
        if "." in text or "e" in text.lower() or text in ("NaN", "Infinity", "-Infinity"):
            return float(text)
        return int(text)


def describe(url: str) -> str:
    """`user@host:port/dbname` of a URL, without its password (for messages and `path`)."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise StoreError(f"not a PostgreSQL URL: {exc}") from exc
    host = str(parts.get("host") or "localhost")
    port = str(parts.get("port") or "5432")
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"{user}{host}:{port}/{parts.get('dbname') or ''}"


def _configure(conn: psycopg.Connection) -> None:
    conn.autocommit = True
    conn.adapters.register_loader("numeric", _NumberLoader)
    ints: tuple[type, ...] = (np.int64, np.int32, np.int16, np.uint32, np.uint64)
    for t in ints:
        conn.adapters.register_dumper(t, Int8Dumper)
    floats: tuple[type, ...] = (np.float64, np.float32)
    for t in floats:
        conn.adapters.register_dumper(t, FloatDumper)


class Database:
    """One PostgreSQL database of this process: its pool and its SQL translator."""

    def __init__(self, url: str):
        self.url = url
        self.name = describe(url)
        try:  # one direct connection first: a clear error, not a pool timing out
            probe = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.Error as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreError(f"cannot connect to PostgreSQL at {self.name}: {reason}") from exc
        probe.close()
        self.pool = self._pool(url, "")
        self._ro_pool: ConnectionPool | None = None
        self._keys: dict[str, tuple[str, ...]] | None = None
        self._columns: dict[str, tuple[str, ...]] | None = None
        self._identity: dict[str, str] | None = None
        self._types: dict[str, dict[str, str]] | None = None
        self.translate = make_translator(self.primary_keys, self.columns)
        self.grown: dict[str, int] = {}
        """Rows this process wrote to a table since it last ANALYZEd it (`PGConn.wrote`)."""
        self.sized: dict[str, float] = {}
        """A table's rows as of that ANALYZE (first: the server's `reltuples`)."""

    def _pool(self, url: str, kind: str) -> ConnectionPool:
        return ConnectionPool(
            url,
            min_size=1,
            max_size=settings.PG_POOL.get(),
            kwargs={"connect_timeout": CONNECT_TIMEOUT},
            configure=_configure,
            open=True,
            name=f"paperdesk{kind} {self.name}",
        )

    def readers(self) -> ConnectionPool:
        """The pool of read-only connections (`default_transaction_read_only`: the server
        refuses any write on them, at no cost per statement), opened on first use."""
        if self._ro_pool is None:
            given = conninfo.conninfo_to_dict(self.url).get("options") or ""
            url = conninfo.make_conninfo(
                self.url, options=f"{given} -c default_transaction_read_only=on".strip()
            )
            self._ro_pool = self._pool(url, " readers")
        return self._ro_pool

    def primary_keys(self, table: str) -> tuple[str, ...]:
        if self._keys is None:
            with self.pool.connection() as c:
                rows = c.execute(
                    "SELECT t.relname, array_agg(a.attname ORDER BY k.ord)"
                    " FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid"
                    " JOIN pg_namespace n ON n.oid = t.relnamespace"
                    " CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)"
                    " JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum"
                    " WHERE i.indisprimary AND n.nspname = current_schema() GROUP BY t.relname"
                ).fetchall()
            self._keys = {str(t): tuple(cols) for t, cols in rows}
        return self._keys.get(table, ())

    def identity(self, table: str) -> str | None:
        """The identity column a table's rows get their id from (`lastrowid`), if any."""
        if self._identity is None:
            with self.pool.connection() as c:
                rows = c.execute(
                    "SELECT c.relname, a.attname" + _COLUMNS + " AND a.attidentity <> ''"
                ).fetchall()
            self._identity = {str(t): str(col) for t, col in rows}
        return self._identity.get(table)

    def columns(self, table: str) -> tuple[str, ...]:
        """A table's columns in order (for an INSERT without a column list)."""
        if self._columns is None:
            with self.pool.connection() as c:
                rows = c.execute(
                    "SELECT c.relname, array_agg(a.attname::text ORDER BY a.attnum)"
                    + _COLUMNS
                    + " GROUP BY c.relname"
                ).fetchall()
            self._columns = {str(t): tuple(cols) for t, cols in rows}
        return self._columns.get(table, ())

    def column_types(self, table: str) -> dict[str, str]:
        """A table's column types by name (`udt_name`: int8, text, bytea, …), for COPY in
        binary format."""
        if self._types is None:
            with self.pool.connection() as c:
                rows = c.execute(
                    "SELECT c.relname, a.attname, t.typname" + _COLUMNS.replace(
                        " WHERE", " JOIN pg_catalog.pg_type t ON t.oid = a.atttypid WHERE", 1
                    )
                ).fetchall()
            types: dict[str, dict[str, str]] = {}
            for t, col, udt in rows:
                types.setdefault(str(t), {})[str(col)] = str(udt)
            self._types = types
        return self._types.get(table, {})

    def forget_schema(self) -> None:
        """After a migration: keys and columns are read again when next needed (and SQL
        translated again)."""
        self._keys = None
        self._columns = None
        self._identity = None
        self._types = None
        self.translate.cache_clear()  # type: ignore[attr-defined]

    @contextmanager
    def connection(self, *, readonly: bool = False) -> Iterator[psycopg.Connection]:
        pool = self.readers() if readonly else self.pool
        try:
            with pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreError(
                f"no free connection to PostgreSQL at {self.name} within"
                f" {pool.timeout:.0f} s (PAPERDESK_PG_POOL={pool.max_size})"
            ) from exc

    def close(self) -> None:
        self.pool.close()
        if self._ro_pool is not None:
            self._ro_pool.close()


_DATABASES: dict[tuple[str, int], Database] = {}
_LOCK = threading.Lock()


def database(url: str) -> Database:
    """The process's `Database` for `url` (a new process — a spawned worker — makes its own)."""
    key = (url, os.getpid())
    with _LOCK:
        db = _DATABASES.get(key)
        if db is None:
            db = _DATABASES[key] = Database(url)
        return db


def close_all() -> None:
    with _LOCK:
        for key in [k for k in _DATABASES if k[1] == os.getpid()]:
            _DATABASES.pop(key).close()


def forget(url: str) -> None:
    """Close this process's pools of `url` (a test dropping its schema)."""
    with _LOCK:
        db = _DATABASES.pop((url, os.getpid()), None)
    if db is not None:
        db.close()


class Result:
    """What `PGConn.execute` gives: the rows, fetched, with the cursor methods callers use."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int, lastrowid: int | None = None):
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount
        self.lastrowid = lastrowid
        """The id an INSERT gave its row (a table with an identity column), as sqlite3's."""

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchmany(self, n: int = 1) -> list[tuple[Any, ...]]:
        out = self._rows[self._at : self._at + n]
        self._at += len(out)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        out = self._rows[self._at :]
        self._at = len(self._rows)
        return out

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row


_TX_VERBS = {
    "BEGIN": "BEGIN", "BEGIN IMMEDIATE": "BEGIN", "BEGIN TRANSACTION": "BEGIN",
    "COMMIT": "COMMIT", "END": "COMMIT", "ROLLBACK": "ROLLBACK",
}  # fmt: skip
_VALUES = re.compile(r"\bVALUES\b", re.IGNORECASE)
_NOT_VALUES = re.compile(r"\bSELECT\b|\bRETURNING\b", re.IGNORECASE)
_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


def _run(cur: psycopg.Cursor, text: str, params: Sequence[Any] | None) -> Result:
    cur.execute(text, params)  # translated at run time
    rows = cur.fetchall() if cur.description is not None else []
    return Result(rows, cur.rowcount)


class PGConn:
    """A store's view of its database: the methods of `sqlite3.Connection` the repositories
    call, on a pooled connection per statement or the one pinned by a transaction."""

    dialect = "postgresql"
    """Read by the few shared queries that spell one expression per backend."""

    def __init__(self, db: Database, *, readonly: bool = False):
        self.db = db
        self.readonly = readonly
        self.pinned: psycopg.Connection | None = None
        self._depth = 0
        self._open: ExitStack | None = None
        """A transaction opened by a `BEGIN` statement, until its COMMIT or ROLLBACK."""

    @property
    def in_transaction(self) -> bool:
        return self.pinned is not None

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        if self.pinned is not None:
            yield self.pinned
        else:
            with self.db.connection(readonly=self.readonly) as conn:
                yield conn

    def execute(self, text: str, params: Sequence[Any] | None = ()) -> Result:
        verb = _TX_VERBS.get(" ".join(text.split()).upper())
        if verb is not None:
            self._explicit(verb)
            return Result([], -1)
        query, spans = in_arrays(self.db.translate(text))
        params = bind_arrays(spans, params)
        m = _INSERT.match(text)  # INSERT … VALUES of one statement: sqlite3's `lastrowid`
        key = (
            self.db.identity(m.group(1))
            if m and _VALUES.search(text) and not _NOT_VALUES.search(text)
            else None
        )
        with self._conn() as conn:
            try:
                if key is None:
                    return _run(conn.cursor(), query, params)
                got = _run(conn.cursor(), f"{query} RETURNING {key}", params)
                row = got.fetchone()
                return Result([], got.rowcount, int(row[0]) if row else None)
            except psycopg.Error as exc:
                raise _error(exc, self.db, text) from exc

    def _explicit(self, verb: str) -> None:
        """SQLite-style `BEGIN IMMEDIATE` / `COMMIT` / `ROLLBACK` statements (code written
        for SQLite's explicit transactions, e.g. `_Tx`): a `pin` opened and closed by hand."""
        if verb == "BEGIN":
            if self._open is not None:
                raise StoreError("BEGIN inside a transaction")
            opened = ExitStack()
            opened.enter_context(self.pin(write=not self.readonly))
            self._open = opened
            return
        stack, self._open = self._open, None
        if stack is None:
            raise StoreError(f"{verb} without a transaction")
        if verb == "COMMIT":
            stack.close()
        else:  # psycopg.Rollback: the transaction block rolls back and swallows it
            stack.__exit__(psycopg.Rollback, psycopg.Rollback(), None)

    def executemany(self, text: str, rows: Sequence[Sequence[Any]] | Iterator[Any]) -> Result:
        rows = list(rows)
        if not rows:
            return Result([], 0)
        query = self.db.translate(text)
        with self._conn() as conn:
            try:
                with conn.cursor() as cur:
                    if self.pinned is None:
                        with conn.transaction():
                            cur.executemany(query, rows)
                    else:
                        cur.executemany(query, rows)
                    result = Result([], cur.rowcount)
            except psycopg.Error as exc:
                raise _error(exc, self.db, text) from exc
        m = _INSERT.match(text)
        if m:
            self.wrote(m.group(1), len(rows))
        return result

    def wrote(self, table: str, n: int) -> None:
        """Count `n` rows written to `table` (fixed names only); ANALYZE it once the rows
        written since its statistics are more than it held then (and ≥ ANALYZE_MIN).

        Why: a table filled in one run (the works stage's band keys, a fresh store's
        records) has no statistics until autovacuum comes round, after commits, a minute
        later; the planner then takes the default 0.5 % per value of an `IN (…)` list of
        hundreds of keys for all of the table and scans it. A 20k-record works stage on a
        fresh PostgreSQL store took 121 s (0.5–0.7 s a band-key look-up) instead of 11.
        ANALYZE samples a fixed number of rows, and doubling makes it O(log n) per run."""
        db = self.db
        db.grown[table] = db.grown.get(table, 0) + n
        if table not in db.sized:
            row = self.raw(
                "SELECT reltuples FROM pg_catalog.pg_class WHERE oid = to_regclass(%s)", (table,)
            ).fetchone()
            db.sized[table] = max(0.0, float(row[0])) if row and row[0] is not None else 0.0
        if db.grown[table] < max(ANALYZE_MIN, db.sized[table]):
            return
        self.raw(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
        db.sized[table] += db.grown.pop(table)

    def raw(self, query: str | sql.Composed, params: Sequence[Any] | None = None) -> Result:
        """PostgreSQL's own SQL (already in its dialect), for the backend's overrides."""
        with self._conn() as conn:
            try:
                return _run(conn.cursor(), query, params)  # type: ignore[arg-type]
            except psycopg.Error as exc:
                raise _error(exc, self.db, str(query)) from exc

    @contextmanager
    def pin(self, *, write: bool) -> Iterator[psycopg.Connection]:
        """One transaction on one connection for the block (nested use joins it). A write
        transaction first takes the store's writer lock (keyed by its schema): one writer
        at a time per store, as on SQLite (`BEGIN IMMEDIATE`); a second waits for it up to
        `LOCK_TIMEOUT`."""
        if self.pinned is not None:
            self._depth += 1
            try:
                yield self.pinned
            finally:
                self._depth -= 1
            return
        with self.db.connection(readonly=self.readonly) as conn:
            try:
                with conn.transaction():
                    self.pinned = conn
                    if write:
                        conn.execute(_TAKE_WRITER_LOCK, (LOCK_TIMEOUT, WRITER_LOCK))
                    else:
                        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    yield conn
            except psycopg.Error as exc:
                raise _error(exc, self.db, "COMMIT") from exc
            finally:
                self.pinned = None


def _error(exc: psycopg.Error, db: Database, text: str) -> StoreError:
    if isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None:
        return StoreError(f"lost the connection to PostgreSQL at {db.name}: {exc}")
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return StoreError(f"another writer holds the store at {db.name} (waited {LOCK_TIMEOUT})")
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return StoreError(f"a read-only view cannot write: readonly ({db.name})")
    first = " ".join(text.split())[:160]
    return StoreError(f"PostgreSQL at {db.name}: {' '.join(str(exc).split())} [{first}]")
