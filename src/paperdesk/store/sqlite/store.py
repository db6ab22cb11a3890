"""The embedded SQLite store: one file, WAL journal, every write batch one transaction.

`SQLiteStore` is `sql.store.SQLStore` (the record methods and repositories both backends
share; its durability model) on a SQLite connection: the connection and its pragmas,
`BEGIN IMMEDIATE` transactions, the migrations of `store/migrations/`, the WAL's
checkpoints, and the statements spelled in SQLite's dialect (multi-row `INSERT OR FAIL`,
stored keys looked up through `json_each`, records read on a cursor).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from paperdesk.errors import StoreError
from paperdesk.model import SourceRecord
from paperdesk.store.base import now
from paperdesk.store.codec import decode_record
from paperdesk.store.sql.store import SQLStore
from paperdesk.store.sql.subjects import Subjects
from paperdesk.store.sqlite.authors import SQLiteAuthors
from paperdesk.store.sqlite.connection import (
    BUSY_TIMEOUT_MS,
    CACHE_KIB,
    PAGE_SIZE,
    WAL_RESTART_BYTES,
    WAL_RESTART_WAIT_MS,
    _statements,
    _Tx,
    connect_readonly,
)
from paperdesk.store.sqlite.records import PackIds, insert_rows
from paperdesk.store.sqlite.search import SQLiteSearch
from paperdesk.store.sqlite.works import SQLiteWorks


class SQLiteStore(SQLStore):
    """The default backend. Construct with `open_store(path)`."""

    dialect = "sqlite"
    conn: sqlite3.Connection

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = str(path)
        self.readonly = readonly
        self.applied: list[str] = []
        self._wal_retry_at = 0  # WAL size at which `restart_wal_if_large` tries again
        if readonly:
            self.conn = connect_readonly(self.path)
            self._repositories()
            return
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc
        self._repositories()
        # The one Python function in SQL: a full author run (and migration 038) packs each
        # profile's members with it (SQLite-only; PostgreSQL aggregates with array_agg).
        self.conn.create_aggregate("paperdesk_pack_ids", 1, PackIds)  # type: ignore[arg-type]  # typeshed: finalize -> int; bytes work
        if self.conn.execute("PRAGMA page_count").fetchone()[0] == 0:
            # A new database gets 16 KiB pages (only possible before its first write): a
            # record row (~2 KB of JSON) and its payload (~2 KB) rarely spill into overflow
            # pages, and committing a batch writes a quarter as many WAL frames. Measured on
            # the daily feed: the writer's commit cost fell from ~25 to ~5 µs a record.
            self.conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        self.conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        # Checkpoint the WAL every ~80 MB instead of 4 MB: bulk ingest spends far less time
        # in checkpoint fsyncs, and readers are unaffected.
        page = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
        self.conn.execute(f"PRAGMA wal_autocheckpoint={(80 << 20) // page}")
        self.applied = self.migrate()

    @property
    def target(self) -> str:
        """What `open_store` takes to open this store again (another process's)."""
        return self.path

    @property
    def shared(self) -> bool:
        """Whether other processes can open views of this store (`reader()` in a worker):
        not an in-memory database."""
        return self.path != ":memory:"

    def _repositories(self) -> None:
        self.authors = SQLiteAuthors(self.conn)
        self.works = SQLiteWorks(self.conn)
        self.subjects = Subjects(self.conn)
        self.search = SQLiteSearch(self.conn)
        super()._repositories()

    # -- plumbing --------------------------------------------------------------------
    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def reader(self) -> Iterator[SQLiteStore]:
        """A read-only view of this store on its own connection (`mode=ro`), closed at the
        end of the block; an in-memory store has only its own connection."""
        if self.path == ":memory:":
            yield self
            return
        view = SQLiteStore(self.path, readonly=True)
        try:
            yield view
        finally:
            view.close()

    def migrate(self) -> list[str]:
        """Apply every `migrations/NNN_name.sql` not yet recorded, in name order, each in
        its own transaction. Other packages' tables arrive the same way."""
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
        )
        done = {r[0] for r in self.conn.execute("SELECT name FROM migrations")}
        applied = []
        folder = resources.files("paperdesk.store").joinpath("migrations")
        for item in sorted(folder.iterdir(), key=lambda p: p.name):
            if not item.name.endswith(".sql") or item.name in done:
                continue
            script = item.read_text(encoding="utf-8")
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                for stmt in _statements(script):
                    self.conn.execute(stmt)
                self.conn.execute(
                    "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (item.name, now())
                )
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self.conn.execute("ROLLBACK")
                raise StoreError(f"migration {item.name} failed: {exc}") from exc
            applied.append(item.name)
        return applied

    def refresh_statistics(self) -> None:
        """Planner statistics after a bulk load: nothing on SQLite, whose query plans are
        chosen without `sqlite_stat1` (the PostgreSQL store ANALYZEs)."""

    def restart_wal_if_large(self) -> None:
        """Between two transactions of a bulk write: once the WAL has grown past
        `WAL_RESTART_BYTES`, checkpoint its last frames and truncate it.

        The writer's own checkpoints (SQLite's autocheckpoint, PASSIVE, at each commit past
        80 MiB of log) start the log over only when no reader still uses old frames: a
        long reader beside a bulk write (an export, the web server) pins them, and the WAL
        would grow as large as the database (3.7 GB at 800k snapshot records: twice the
        disk, and a wal-index that every page look-up searches). Here the writer waits for
        the frames of about one transaction and an fsync. A reader still reading old frames
        would block the restart: then the writer gives up after `WAL_RESTART_WAIT_MS` and
        tries again only when the WAL has grown as much again."""
        if self.path == ":memory:" or self.conn.in_transaction:
            return
        try:
            size = Path(self.path + "-wal").stat().st_size
        except OSError:
            return
        if size > max(WAL_RESTART_BYTES, self._wal_retry_at):
            self.conn.execute(f"PRAGMA busy_timeout={WAL_RESTART_WAIT_MS}")
            try:
                busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.OperationalError:  # locked: the same as blocked
                busy = 1
            finally:
                self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._wal_retry_at = size + WAL_RESTART_BYTES if busy else 0

    def transaction(self) -> _Tx:
        """`with store.transaction(): ...` — BEGIN IMMEDIATE … COMMIT, ROLLBACK on error."""
        return _Tx(self.conn)

    def rows_transaction(self) -> _Tx:
        """The transaction `put_rows` writes in, for a caller that groups several batches
        in one (bulk ingest): references not checked by SQLite.

        Why: with foreign keys enforced, SQLite keeps a statement journal for every
        multi-row INSERT into `payloads` and `record_categories` (each page the statement
        changes copied aside first, ~12 KB a snapshot record written to a temporary file),
        and looks every row's record up. `put_rows` gives each payload and category row
        the rowid of a record it inserted or read in the same transaction, under the write
        lock, so the references hold by construction (tests check `foreign_key_check`)."""
        return _Tx(self.conn, foreign_keys=False)

    # -- records: what SQLite spells its own way ---------------------------------------
    def _bulk_insert(self, table: str, columns: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Many rows into `table` (fixed names) in the writer's transaction: multi-row
        `INSERT OR FAIL` statements here (`insert_rows`), COPY on PostgreSQL."""
        insert_rows(self.conn, f"INSERT OR FAIL INTO {table} ({columns})", rows)

    def _existing(self, keys: set[str]) -> dict[str, tuple[int, SourceRecord]]:
        """The stored records among `keys`, 500 keys a query, each query's in key order.

        The keys go in as one JSON array (`json_each`) instead of 500 parameters: SQLite
        then neither binds each key nor builds and sorts a temporary index of the list
        for `IN (…)` (a bulk ingest asks for every key it writes, nearly all absent: 0.4-0.7
        -> 0.15-0.25 µs a key)."""
        out: dict[str, tuple[int, SourceRecord]] = {}
        ks = list(keys)
        for i in range(0, len(ks), 500):
            found = self.conn.execute(
                "SELECT r.key, r.rowid, r.data FROM json_each(?) j"
                " JOIN records r ON r.key = j.value",
                (orjson.dumps(ks[i : i + 500]).decode(),),
            ).fetchall()
            for key, rowid, data in sorted(found):  # by key (unique), as `IN` gave them
                out[key] = (rowid, decode_record(data))
        return out

    def iter_records(
        self, source: str | None = None, *, after_rowid: int = 0, limit: int | None = None
    ) -> Iterator[tuple[int, SourceRecord]]:
        sql = "SELECT rowid, data FROM records WHERE rowid > ?"
        args: list[Any] = [after_rowid]
        if source:
            sql += " AND source = ?"
            args.append(source)
        sql += " ORDER BY rowid"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        # A separate cursor, fetched in chunks, so callers may write while iterating.
        cur = self.conn.execute(sql, args)
        while rows := cur.fetchmany(1000):
            for rowid, data in rows:
                yield rowid, decode_record(data)

    def iter_changed(self, after_seq: int) -> Iterator[tuple[int, SourceRecord]]:
        """(seq, record) for records inserted or changed after `after_seq`, in seq order —
        how incremental stages (resolve, index, classify) find only new work."""
        cur = self.conn.execute(
            "SELECT seq, data FROM records WHERE seq > ? ORDER BY seq, rowid", (after_seq,)
        )
        while rows := cur.fetchmany(1000):
            for seq, data in rows:
                yield seq, decode_record(data)
