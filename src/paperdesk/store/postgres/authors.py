"""The author repository on PostgreSQL: the shared one (`sql/authors.py`, its SQL run
through the dialect layer) with what PostgreSQL does its own way.

- A run's staged signature rows: SQLite keeps them in a temp table of its one writer
  connection from the first read on; here statements outside a transaction run on any
  pooled connection, so the rows wait in a spill file of this process (`stage_put`,
  pickled batches: a full run stages ~5 signatures a record) and go by COPY into temp
  tables that live only inside the run's write transaction (`stage_commit`).
- Signature ids: SQLite gives a new row `MAX(id) + 1`; the identity column would count on
  across full runs (past the 32 bits a member list packs), so the rows get those same ids
  explicitly, in the order SQLite would have inserted them.
- Member lists: `array_agg` instead of the Python aggregate `paperdesk_pack_ids`; id sets
  bound as one array (`id = ANY(…)`) instead of a JSON list read by `json_each`.
- No per-worker stage files (ATTACH): a full run reads in one process (`streams_parts`).
- Changed records are read by keyset pages (`PGConn` fetches a result whole).
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import IO, Any

import psycopg

from paperdesk.errors import StoreError
from paperdesk.store.authors_base import PartStage
from paperdesk.store.postgres.connection import PGConn
from paperdesk.store.rows import pack_ids
from paperdesk.store.sql.authors import Authors
from paperdesk.store.sql.authors_tables import _SIG_COLS

_PAGE = 2000
"""Records a keyset page of `changed_records` fetches."""

_STAGE_TABLES = (
    "CREATE TEMP TABLE author_stage (ord BIGINT, sig_id TEXT COLLATE \"C\","
    " record_key TEXT COLLATE \"C\", position BIGINT, name TEXT COLLATE \"C\","
    " name_folded TEXT COLLATE \"C\", block TEXT COLLATE \"C\", given TEXT COLLATE \"C\","
    " unit BIGINT) ON COMMIT DROP",
    "CREATE TEMP TABLE author_stage_map (unit BIGINT PRIMARY KEY,"
    " author_id TEXT COLLATE \"C\" NOT NULL) ON COMMIT DROP",
)


class PGAuthors(Authors):
    """Author signatures, profiles, samples, redirects, curations and staged rows in a
    PostgreSQL database."""

    conn: PGConn

    _IN_IDS = "id = ANY(?)"
    _VARIANT_ORDER = "author_id, name, name_folded, given NULLS FIRST, block"
    """SQLite's group order, which PostgreSQL does not promise without being asked."""
    streams_parts: bool = False

    def __init__(self, conn: Any):
        super().__init__(conn)
        self._spill: IO[bytes] | None = None
        self._staged = 0

    def _ids(self, ids: Sequence[int]) -> Any:
        return list(ids)

    def _pinned(self) -> psycopg.Connection:
        conn = self.conn.pinned
        if conn is None:
            raise StoreError("author rows are written inside store.transaction()")
        return conn

    def _copy(self, table: str, columns: str, rows: Iterable[Sequence[Any]]) -> None:
        """COPY rows into `table` (fixed names) on the transaction's connection."""
        with self._pinned().cursor() as cur, cur.copy(
            f"COPY {table} ({columns}) FROM STDIN"  # fixed names
        ) as copy:
            for row in rows:
                copy.write_row(row)

    def _members_rebuild(self) -> None:
        """`author_members` packed again from every signature (after a bulk write)."""
        self.conn.execute("DELETE FROM author_members")
        rows = self.conn.raw(
            "SELECT author_id, array_agg(id) FROM author_signatures"
            " GROUP BY author_id ORDER BY author_id"
        ).fetchall()
        self._copy("author_members", "author_id, ids", ((a, pack_ids(ids)) for a, ids in rows))

    # -- staging ---------------------------------------------------------------------------
    def stage_reset(self) -> None:
        if self._spill is not None:
            self._spill.close()
        self._spill = tempfile.TemporaryFile(prefix="paperdesk-authors-stage-")
        self._staged = 0

    def stage_put(self, rows: Iterable[tuple[Any, ...]]) -> None:
        batch = list(rows)
        if batch:
            if self._spill is None:
                self.stage_reset()
            assert self._spill is not None
            pickle.dump(batch, self._spill, protocol=pickle.HIGHEST_PROTOCOL)
            self._staged += len(batch)

    def _staged_rows(self) -> Iterator[tuple[Any, ...]]:
        """(order, *row) of every staged row, in the order they were staged."""
        if self._spill is None:
            return
        self._spill.seek(0)
        k = 0
        while True:
            try:
                batch = pickle.load(self._spill)  # noqa: S301 (our own file of this run)
            except EOFError:
                return
            for row in batch:
                yield (k, *row)
                k += 1

    def stage_commit(self, unit_author: Iterable[tuple[int, str]], *, bulk: bool = False) -> None:
        """The staged rows by COPY into temp tables of this transaction, then into the
        tables as on SQLite (`_stage_write`)."""
        conn = self._pinned()
        conn.execute("DROP TABLE IF EXISTS author_stage, author_stage_map")
        for sql in _STAGE_TABLES:
            conn.execute(sql)
        self._copy(
            "author_stage",
            "ord, sig_id, record_key, position, name, name_folded, block, given, unit",
            self._staged_rows(),
        )
        self._copy("author_stage_map", "unit, author_id", unit_author)
        conn.execute("ANALYZE author_stage")
        conn.execute("ANALYZE author_stage_map")
        self._stage_write(bulk)
        conn.execute("DROP TABLE author_stage, author_stage_map")
        if self._spill is not None:
            self._spill.close()
        self._spill, self._staged = None, 0

    def _stage_write(self, bulk: bool) -> None:
        """As SQLite's, the ids given explicitly: `MAX(id) + 1` on, in SQLite's insertion
        order (key order in bulk, else staging order)."""
        order = "s.record_key, s.position" if bulk else "s.ord"
        if not bulk:
            self._count(self._counted_rows("sig_id IN (SELECT sig_id FROM author_stage)", ()), -1)
        self.conn.raw(
            f"INSERT INTO author_signatures (id, {_SIG_COLS})"  # noqa: S608
            " SELECT (SELECT COALESCE(MAX(id), 0) FROM author_signatures)"
            f" + row_number() OVER (ORDER BY {order}), s.sig_id, s.record_key, s.position,"
            " s.name, s.name_folded, s.block, m.author_id, s.given"
            f" FROM author_stage s JOIN author_stage_map m ON m.unit = s.unit ORDER BY {order}"
        )
        if bulk:
            self._names_rebuild()
            self._members_rebuild()
            # Tables just filled whole: statistics now, not when autovacuum comes round
            # (the run's later look-ups by id and block would otherwise scan them).
            for table in ("author_signatures", "author_names", "author_blocks", "author_members"):
                self.conn.raw(f"ANALYZE {table}")
        else:
            self._count(self._counted_rows("sig_id IN (SELECT sig_id FROM author_stage)", ()), 1)

    # -- no per-worker stage files -----------------------------------------------------------
    def open_parts(self, parts: int) -> PartStage:
        raise StoreError("PostgreSQL stages a full run in one process (streams_parts)")

    def part_writer(self, stage: PartStage, part: int) -> Any:
        raise StoreError("PostgreSQL stages a full run in one process (streams_parts)")

    def parts_attached(self, stage: PartStage) -> AbstractContextManager[None]:
        raise StoreError("PostgreSQL stages a full run in one process (streams_parts)")

    def map_parts(self, unit_author: Iterable[tuple[int, int, str]]) -> None:
        raise StoreError("PostgreSQL stages a full run in one process (streams_parts)")

    def commit_parts(self, stage: PartStage) -> None:
        raise StoreError("PostgreSQL stages a full run in one process (streams_parts)")

    # -- reads -----------------------------------------------------------------------------
    def changed_records(self, since: int) -> Iterator[tuple[int, str, bytes]]:
        """(seq, key, data) changed after `since` in (seq, rowid) order, a page at a time."""
        seq, rowid = since, (1 << 63) - 1  # first page: seq > since, whatever the rowid
        while True:
            rows = self.conn.raw(
                "SELECT rowid, seq, key, data FROM records WHERE (seq, rowid) > (%s, %s)"
                " ORDER BY seq, rowid LIMIT %s",
                (seq, rowid, _PAGE),
            ).fetchall()
            for _, s, key, data in rows:
                yield int(s), key, bytes(data)
            if len(rows) < _PAGE:
                return
            rowid, seq = int(rows[-1][0]), int(rows[-1][1])
