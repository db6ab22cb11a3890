"""The embedded SQLite store: one file, WAL journal, every write batch one transaction.

Durability model: `put_records` writes a batch of records, their raw payloads, rejects and
the caller's checkpoint in a single transaction, so a SIGKILL at any instant leaves either
the whole batch or none of it; the next run skips payloads it already has (by sha256) and
resumes from the checkpoint.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from paperdesk.errors import NotFoundError, StoreError
from paperdesk.model import SourceRecord
from paperdesk.store.base import PutResult, Reject, now
from paperdesk.store.codec import decode_record
from paperdesk.store.rows import (
    Row,
    payload_hash,
    plan_rows,
    prepare_row,
    record_rows,
    split_key,
    update_rows,
)
from paperdesk.store.sqlite.authors import SQLiteAuthors
from paperdesk.store.sqlite.catalog import SQLiteCatalog
from paperdesk.store.sqlite.connection import (
    _ASIDE_CHILD,
    BUSY_TIMEOUT_MS,
    CACHE_KIB,
    CHECKPOINT_ASIDE_BYTES,
    PAGE_SIZE,
    WAL_RESTART_BYTES,
    WAL_RESTART_WAIT_MS,
    Aside,
    _statements,
    _Tx,
    connect_readonly,
)
from paperdesk.store.sqlite.desk import SQLiteDesk
from paperdesk.store.sqlite.records import PackIds, insert_rows, known_payloads
from paperdesk.store.sqlite.search import SQLiteSearch
from paperdesk.store.sqlite.subjects import SQLiteSubjects
from paperdesk.store.sqlite.works import SQLiteWorks


class SQLiteStore:
    """The default backend. Construct with `open_store(path)`."""

    dialect = "sqlite"
    runs_author_stage = True
    """The author stage runs on every backend now (PostgreSQL too); kept for the callers
    that still ask."""

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
        """The migrations this open applied (`paperdesk db init` names them)."""

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
        self.subjects = SQLiteSubjects(self.conn)
        self.search = SQLiteSearch(self.conn)
        self.desk = SQLiteDesk(self.conn, self.authors)  # store/desk_base.py: users' desks
        self.catalog = SQLiteCatalog(self.conn)

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

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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

    @contextmanager
    def background_checkpoints(self) -> Iterator[None]:
        """For a bulk write: WAL checkpoints (copying the log into the database file, then
        an fsync) run in a thread on their own connection instead of inside the writer's
        commits, so the writer never waits for the disk. sqlite3 releases the GIL while
        SQLite works, and a PASSIVE checkpoint does not block the writer."""
        if self.path == ":memory:":
            yield
            return
        wal = Path(self.path + "-wal")
        page = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
        limit = int(self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) * page
        stop = threading.Event()

        def run() -> None:
            con = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            try:
                while not stop.wait(0.2):
                    try:
                        if wal.exists() and wal.stat().st_size > limit:
                            con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    except sqlite3.Error:
                        pass  # busy: the next round (or the writer's own) will do it
            finally:
                con.close()

        self.conn.execute("PRAGMA wal_autocheckpoint=0")
        thread = threading.Thread(target=run, name="paperdesk-checkpoint", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.conn.execute(f"PRAGMA wal_autocheckpoint={limit // page}")

    def refresh_statistics(self) -> None:
        """Planner statistics after a bulk load: nothing on SQLite, whose query plans are
        chosen without `sqlite_stat1` (the PostgreSQL store ANALYZEs)."""

    def has_records(self) -> bool:
        return self.conn.execute("SELECT 1 FROM records LIMIT 1").fetchone() is not None

    @contextmanager
    def checkpoint_aside(self, statements: Sequence[str] = ()) -> Iterator[Aside]:
        """Copy the WAL's committed frames into the database in another process while the
        caller goes on reading (and its forked workers compute), and wait for it at the
        end, before the caller writes. `statements` (SQL of our own, no parameters) run
        there first, in one write transaction: only work that changes nothing a reader can
        tell (the author deltas' fold), since the caller's reads may see either side of it.

        Why: a transaction that leaves the WAL under the autocheckpoint size is copied by
        the next writer's commit: the 1M day's works transaction (~5k pages of 16 KiB)
        was checkpointed inside the author stage's commit, its fsync included. A separate
        interpreter, not a thread or a fork: the author stage forks workers meanwhile, and a
        fork must not copy SQLite's locks in the middle of a checkpoint. PASSIVE: it
        neither waits for nor blocks this connection's reads."""
        done = Aside()
        if self.path == ":memory:":  # no other process can open it: here, now
            if statements:
                with self.transaction():
                    for sql in statements:
                        self.conn.execute(sql)
                done.ok = True
            yield done
            return
        try:
            size = Path(self.path + "-wal").stat().st_size
        except OSError:
            size = 0
        if size < CHECKPOINT_ASIDE_BYTES and not statements:
            yield done
            return
        proc = subprocess.Popen(
            [sys.executable, "-S", "-c", _ASIDE_CHILD, self.path, orjson.dumps(list(statements))],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield done
        finally:
            # A failure leaves the frames to the next commit and the statements undone.
            code = proc.wait()
            done.ok = code == 0 if statements else None

    def restart_wal_if_large(self) -> None:
        """Between two transactions of a bulk write: once the WAL has grown past
        `WAL_RESTART_BYTES`, checkpoint its last frames and truncate it.

        The background checkpointer (`background_checkpoints`) copies frames into the
        database but can never start the log over: SQLite restarts a WAL only when a write
        transaction begins with every frame already copied, and a bulk writer begins its
        next transaction right after each commit. So the WAL grew as large as the database
        (3.7 GB at 800k snapshot records: twice the disk, and a wal-index that every page
        look-up searches). Here the writer waits for the frames of about one transaction
        and an fsync, a few times per million records. A reader still reading old frames
        (a long export, say) would block the restart: then the writer gives up after
        `WAL_RESTART_WAIT_MS` and tries again only when the WAL has grown as much again."""
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

    # -- records ---------------------------------------------------------------------
    def known_payloads(self, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        return known_payloads(self.conn, pairs)

    def put_records(
        self,
        records: Sequence[SourceRecord],
        *,
        origin: str,
        checkpoint: tuple[str, Any] | None = None,
        rejects: Sequence[Reject] = (),
        hashes: Sequence[str] | None = None,
    ) -> PutResult:
        """See `Store.put_records`; `hashes` may pass payload digests already computed."""
        digests = hashes if hashes is not None else [payload_hash(r.raw) for r in records]
        rows = [prepare_row(r, d) for r, d in zip(records, digests, strict=True)]
        return self.put_rows(rows, origin=origin, checkpoint=checkpoint, rejects=rejects)

    def put_rows(
        self,
        rows: Sequence[Row],
        *,
        origin: str,
        checkpoint: tuple[str, Any] | None = None,
        rejects: Sequence[Reject] = (),
    ) -> PutResult:
        """`put_records` for records already encoded by `prepare_row` (possibly in another
        process: rows are plain tuples, cheap to pass between processes, unlike records).

        Rows are written in bulk (`_bulk_insert`) and rowids assigned here (safe: the write
        transaction holds the store's write lock). A key already stored is merged with
        `merge_records` (`plan_rows`)."""
        stamp = now()
        with self.rows_transaction():
            existing = self._existing({r[0] for r in rows})
            # (key, payload) pairs stored: asked only for records already stored (a fresh
            # record has none), and grown as the batch goes (a payload twice in one batch).
            known = self._payloads_of({rowid: key for key, (rowid, _) in existing.items()})
            seq = self._next_seq()
            next_rowid = int(
                self.conn.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM records").fetchone()[0]
            )
            plan = plan_rows(rows, existing, known, next_rowid, origin=origin, stamp=stamp)
            self._bulk_insert(
                "records",
                "rowid, key, source, source_id, data, title, year, doi, arxiv_id, feed_date,"
                " submitted, latest_version, created_at, modified_at, seq, appeared",
                record_rows(plan, stamp, seq),
            )
            self.conn.executemany(
                "UPDATE records SET data = ?, title = ?, year = ?, doi = ?, arxiv_id = ?,"
                " feed_date = ?, submitted = ?, latest_version = ?, modified_at = ?, seq = ?,"
                " appeared = COALESCE(?, appeared) WHERE rowid = ?",
                update_rows(plan, stamp, seq),
            )
            # A changed record's category rows go by their whole key (the table is keyed by
            # code, migration 005), from the record as it was stored: its rows were written
            # from the same record as its JSON.
            self.conn.executemany(
                "DELETE FROM record_categories"
                " WHERE code = ? AND feed_date = ? AND record_rowid = ? AND position = ?",
                plan.stale_category_rows(),
            )
            self._bulk_insert(
                "record_categories", "code, feed_date, record_rowid, position",
                plan.category_rows(),
            )
            self._bulk_insert(
                "payloads", "record_rowid, sha256, format, origin, received_at, body",
                plan.payloads,
            )
            self._add_rejects(rejects, stamp)
            if checkpoint is not None:
                self._set_checkpoint(*checkpoint, stamp=stamp)
        return plan.result

    def _bulk_insert(self, table: str, columns: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Many rows into `table` (fixed names) in the writer's transaction: multi-row
        `INSERT OR FAIL` statements here (`insert_rows`), COPY on PostgreSQL."""
        insert_rows(self.conn, f"INSERT OR FAIL INTO {table} ({columns})", rows)

    def _next_seq(self) -> int:
        row = self.conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM records").fetchone()
        return int(row[0])

    def _payloads_of(self, keys_by_rowid: dict[int, str]) -> set[tuple[str, str]]:
        """(record key, payload sha256) of every payload of the given stored records."""
        out: set[tuple[str, str]] = set()
        rowids = list(keys_by_rowid)
        for i in range(0, len(rowids), 500):
            chunk = rowids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for rowid, sha in self.conn.execute(
                f"SELECT record_rowid, sha256 FROM payloads WHERE record_rowid IN ({marks})",  # noqa: S608
                chunk,
            ):
                out.add((keys_by_rowid[rowid], sha))
        return out

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

    def get_record(self, key: str) -> SourceRecord:
        split_key(key)
        row = self.conn.execute(
            "SELECT r.data, (SELECT body FROM payloads p WHERE p.record_rowid = r.rowid"
            " ORDER BY p.id DESC LIMIT 1) FROM records r WHERE r.key = ?",
            (key,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no record {key}")
        return decode_record(row[0], row[1] or b"")

    def get_records(self, keys: Sequence[str]) -> dict[str, SourceRecord]:
        """Several records at once (without raw payloads), by key."""
        return {k: v for k, (_, v) in self._existing(set(keys)).items()}

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

    def derived_format(self, name: str) -> int | None:
        """The format version of stage `name`'s derived tables (None: never recorded)."""
        row = self.conn.execute("SELECT version FROM derived_formats WHERE name = ?", (name,))
        found = row.fetchone()
        return None if found is None else int(found[0])

    def set_derived_format(self, name: str, version: int) -> None:
        """Record that stage `name`'s tables are in format `version` (inside the caller's
        transaction, with the rebuild that made them so)."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO derived_formats (name, version, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET version = excluded.version,"
                " updated_at = excluded.updated_at",
                (name, version, now()),
            )

    def count_changed(self, after_seq: int) -> int:
        """Records inserted or changed after `after_seq`."""
        row = self.conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (after_seq,))
        return int(row.fetchone()[0])

    def record_payloads(self, key: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT p.format, p.origin, p.received_at, p.sha256, p.body FROM payloads p"
            " JOIN records r ON r.rowid = p.record_rowid WHERE r.key = ? ORDER BY p.id",
            (key,),
        ).fetchall()
        return [
            {"format": f, "origin": o, "received_at": t, "sha256": h, "body": b}
            for f, o, t, h, b in rows
        ]

    def count_records(self, source: str | None = None) -> int:
        if source:
            row = self.conn.execute("SELECT COUNT(*) FROM records WHERE source = ?", (source,))
        else:
            row = self.conn.execute("SELECT COUNT(*) FROM records")
        return int(row.fetchone()[0])

    def list_records(
        self, source: str | None = None, *, limit: int = 50, offset: int = 0
    ) -> list[SourceRecord]:
        """A page of records, newest rowid first."""
        sql = "SELECT data FROM records"
        args: list[Any] = []
        if source:
            sql += " WHERE source = ?"
            args.append(source)
        sql += " ORDER BY rowid DESC LIMIT ? OFFSET ?"
        args += [limit, offset]
        return [decode_record(d) for (d,) in self.conn.execute(sql, args)]

    # -- bookkeeping -----------------------------------------------------------------
    def get_checkpoint(self, name: str) -> Any | None:
        row = self.conn.execute("SELECT value FROM checkpoints WHERE name = ?", (name,))
        found = row.fetchone()
        return orjson.loads(found[0]) if found else None

    def set_checkpoint(self, name: str, value: Any) -> None:
        with self.transaction():
            self._set_checkpoint(name, value, stamp=now())

    def _set_checkpoint(self, name: str, value: Any, *, stamp: str) -> None:
        self.conn.execute(
            "INSERT INTO checkpoints (name, value, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT(name) DO UPDATE SET value = excluded.value,"
            " updated_at = excluded.updated_at",
            (name, orjson.dumps(value).decode(), stamp),
        )

    def add_rejects(self, rejects: Iterable[Reject]) -> None:
        with self.transaction():
            self._add_rejects(rejects, now())

    def _add_rejects(self, rejects: Iterable[Reject], stamp: str) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO rejects (origin, record_no, error, snippet, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            [(r.origin, r.record_no, r.error, r.snippet[:500], stamp) for r in rejects],
        )

    def list_rejects(self, limit: int = 100) -> list[Reject]:
        rows = self.conn.execute(
            "SELECT origin, record_no, error, snippet FROM rejects ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [Reject(o, n, e, s or "") for o, n, e, s in rows]

    def file_done(self, digest: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM ingested_files WHERE sha256 = ?", (digest,))
        return row.fetchone() is not None

    def mark_file_done(
        self, digest: str, path: str, size: int, records: int, rejected: int
    ) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO ingested_files"
                " (sha256, path, size, records, rejected, finished_at) VALUES (?, ?, ?, ?, ?, ?)",
                (digest, path, size, records, rejected, now()),
            )

    def stats(self) -> dict[str, Any]:
        by_source = dict(
            self.conn.execute(
                "SELECT source, COUNT(*) FROM records GROUP BY source ORDER BY source"
            ).fetchall()
        )
        by_format = dict(
            self.conn.execute(
                "SELECT format, COUNT(*) FROM payloads GROUP BY format ORDER BY format"
            ).fetchall()
        )
        one = self.conn.execute
        dates = one("SELECT MIN(feed_date), MAX(feed_date) FROM records").fetchone()
        return {
            "db": self.path,
            "records": sum(by_source.values()),
            "records_by_source": by_source,
            "payloads": int(one("SELECT COUNT(*) FROM payloads").fetchone()[0]),
            "payloads_by_format": by_format,
            "rejected": int(one("SELECT COUNT(*) FROM rejects").fetchone()[0]),
            "files_ingested": int(one("SELECT COUNT(*) FROM ingested_files").fetchone()[0]),
            "feed_dates": {"first": dates[0], "last": dates[1]},
            "checkpoints": {
                n: orjson.loads(v)
                for n, v in one("SELECT name, value FROM checkpoints ORDER BY name")
            },
        }

