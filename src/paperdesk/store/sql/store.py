"""The store both backends share: `SQLStore`, the record methods (put, get, list, count,
changes), checkpoints, rejects, ingested files and derived formats, and the wiring of the
repositories whose SQL is portable (`desk`, `catalog`).

Its SQL is written in the common dialect and translated for PostgreSQL by
`postgres/dialect.py` (see `store/sql/__init__.py`). `SQLiteStore` (`store/sqlite/`) and
`PGStore` (`store/postgres/`) are its subclasses, siblings: each opens its own connection,
owns its transactions and migrations, and writes the few statements it spells its own
way (bulk inserts, the look-up of stored keys, paging through the records).

Durability: `put_rows` writes a batch's records, payloads, rejects and the caller's
checkpoint in one transaction (`rows_transaction`), so a SIGKILL at any instant leaves
either the whole batch or none of it; the next run skips payloads it already has (by
sha256) and resumes from the checkpoint.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Self

import orjson

from paperdesk.errors import NotFoundError
from paperdesk.model import SourceRecord
from paperdesk.store.authors_base import AuthorRepository
from paperdesk.store.base import (
    PutResult,
    Reject,
    SearchRepository,
    SubjectRepository,
    WorkRepository,
    now,
)
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
from paperdesk.store.sql.catalog import Catalog
from paperdesk.store.sql.connection import Conn, known_payloads
from paperdesk.store.sql.desk import Desk


class SQLStore(ABC):
    """What `SQLiteStore` and `PGStore` share. Construct either with `open_store`."""

    dialect: str
    """Which backend this is (`sqlite`, `postgresql`)."""
    runs_author_stage = True
    """The author stage runs on every backend now (PostgreSQL too); kept for the callers
    that still ask."""
    conn: Conn
    """The writer's connection (a reader's, for a view)."""
    path: str
    """The SQLite file, or the base name of a PostgreSQL store's own files."""
    readonly: bool
    applied: list[str]
    """The migrations this open applied (`paperdesk db init` names them)."""
    authors: AuthorRepository
    works: WorkRepository
    subjects: SubjectRepository
    search: SearchRepository
    """The backend's own repositories (`_repositories` sets them, then the shared ones)."""

    def _repositories(self) -> None:
        """The repositories whose SQL both backends run (after the backend's own)."""
        self.desk = Desk(self.conn, self.authors)  # store/desk_base.py: users' desks
        self.catalog = Catalog(self.conn)

    # -- what each backend does its own way ------------------------------------------
    @property
    @abstractmethod
    def target(self) -> str:
        """What `open_store` takes to open this store again (another process's)."""

    @property
    @abstractmethod
    def shared(self) -> bool:
        """Whether other processes can open views of this store (`reader()` in a worker)."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def reader(self) -> AbstractContextManager[SQLStore]:
        """A read-only view of this store, closed at the end of the block."""

    @abstractmethod
    def migrate(self) -> list[str]:
        """Apply the backend's migrations not yet recorded, in name order."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """`with store.transaction(): ...`: one write transaction; nested use joins it."""

    @abstractmethod
    def rows_transaction(self) -> AbstractContextManager[Any]:
        """The transaction `put_rows` writes in (a bulk ingest groups batches in one)."""

    @abstractmethod
    def restart_wal_if_large(self) -> None: ...

    @abstractmethod
    def refresh_statistics(self) -> None: ...

    @abstractmethod
    def _bulk_insert(self, table: str, columns: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Many rows into `table` (fixed names) in the writer's transaction."""

    @abstractmethod
    def _existing(self, keys: set[str]) -> dict[str, tuple[int, SourceRecord]]:
        """The stored records among `keys`: key → (rowid, record), in key order."""

    @abstractmethod
    def iter_records(
        self, source: str | None = None, *, after_rowid: int = 0, limit: int | None = None
    ) -> Iterator[tuple[int, SourceRecord]]:
        """(rowid, record) in insertion order, after `after_rowid`."""

    @abstractmethod
    def iter_changed(self, after_seq: int) -> Iterator[tuple[int, SourceRecord]]:
        """(seq, record) for records inserted or changed after `after_seq`, in seq order —
        how incremental stages (resolve, index, classify) find only new work."""

    # -- plumbing --------------------------------------------------------------------
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def has_records(self) -> bool:
        return self.conn.execute("SELECT 1 FROM records LIMIT 1").fetchone() is not None

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
