"""The search bookkeeping of both backends: which works are indexed under which number, and
their vectors (the `search_*` tables, migration 050_search.sql). The search package
(`paperdesk.search.indexer`, `engine`) calls these as `store.search`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from paperdesk.store.sql.connection import Conn

VEC_DTYPE = np.dtype("<f2")


class Search:
    """The search repository of one connection; `orphan_docnos` is each backend's."""

    def __init__(self, conn: Conn):
        self.conn = conn

    def _rows_in(
        self, sql: str, values: Sequence[object], params: Sequence[object] = ()
    ) -> Iterator[tuple]:
        """Rows of `sql` (whose `IN ({marks})` is filled in) for `values`, 500 at a time:
        SQLite caps the number of placeholders in one statement."""
        vs = list(values)
        for i in range(0, len(vs), 500):
            chunk = vs[i : i + 500]
            yield from self.conn.execute(sql.format(marks=",".join("?" * len(chunk))), [*params, *chunk])

    def doc_hashes(self, work_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """work id → (docno, content hash) for the given works that are indexed."""
        sql = "SELECT work_id, docno, content_hash FROM search_docs WHERE work_id IN ({marks})"
        return {w: (int(d), h) for w, d, h in self._rows_in(sql, work_ids)}

    def upsert_docs(self, rows: Iterable[tuple[str, str]]) -> dict[str, int]:
        """Record (work id, content hash) pairs; returns work id → docno (new ids get new numbers).

        One executemany and one lookup per batch: a statement with RETURNING per work was a
        tenth of the keyword build's Python time."""
        pairs = list(rows)
        self.conn.executemany(
            "INSERT INTO search_docs (work_id, content_hash) VALUES (?, ?) "
            "ON CONFLICT(work_id) DO UPDATE SET content_hash = excluded.content_hash",
            pairs,
        )
        return {w: d for w, (d, _) in self.doc_hashes([w for w, _ in pairs]).items()}

    def delete_docs(self, docnos: Sequence[int]) -> None:
        self.conn.executemany("DELETE FROM search_docs WHERE docno = ?", [(d,) for d in docnos])

    def docno_of(self, work_id: str) -> int | None:
        row = self.conn.execute("SELECT docno FROM search_docs WHERE work_id = ?", (work_id,)).fetchone()
        return int(row[0]) if row else None

    def work_ids(self, docnos: Sequence[int]) -> dict[int, str]:
        sql = "SELECT docno, work_id FROM search_docs WHERE docno IN ({marks})"
        return {int(d): w for d, w in self._rows_in(sql, docnos)}

    def count_docs(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM search_docs").fetchone()[0])

    def all_docnos(self) -> list[int]:
        return [int(r[0]) for r in self.conn.execute("SELECT docno FROM search_docs ORDER BY docno")]

    def vector_hashes(self, model: str, docnos: Sequence[int] | None = None
    ) -> dict[int, bytes]:
        """docno → hash of the text its stored vector was computed from (this model only;
        only the given docnos when named, instead of every stored vector)."""
        if docnos is None:
            rows: Iterable[tuple[int, bytes]] = self.conn.execute(
                "SELECT docno, text_hash FROM search_vectors WHERE model = ?", (model,)
            )
            return {int(d): bytes(h) for d, h in rows}
        sql = "SELECT docno, text_hash FROM search_vectors WHERE model = ? AND docno IN ({marks})"
        return {int(d): bytes(h) for d, h in self._rows_in(sql, docnos, (model,))}

    def vectors_by_hash(self, hashes: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """Vectors already computed for identical text (a work renumbered or merged keeps its vector)."""
        sql = "SELECT text_hash, vector FROM search_vectors WHERE text_hash IN ({marks})"
        return {bytes(h): np.frombuffer(v, dtype=VEC_DTYPE).astype(np.float32) for h, v in self._rows_in(sql, hashes)}

    def put_vectors(self, model: str, rows: Iterable[tuple[int, bytes, np.ndarray]]
    ) -> None:
        """Store (docno, text hash, vector) rows; the caller wraps a batch in one transaction."""
        self.conn.executemany(
            "INSERT INTO search_vectors (docno, model, text_hash, vector) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(docno) DO UPDATE SET model = excluded.model, "
            "text_hash = excluded.text_hash, vector = excluded.vector",
            [(d, model, h, np.asarray(v, dtype=VEC_DTYPE).tobytes()) for d, h, v in rows],
        )

    def iter_vectors(self, model: str, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(docnos, float32 matrix) in batches: how the ANN index is rebuilt from the store."""
        cur = self.conn.execute(
            "SELECT docno, vector FROM search_vectors WHERE model = ? ORDER BY docno", (model,)
        )
        while rows := cur.fetchmany(batch):
            keys = np.array([r[0] for r in rows], dtype=np.uint64)
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=VEC_DTYPE).reshape(len(rows), -1)
            yield keys, mat.astype(np.float32)

    def count_vectors(self, model: str) -> int:
        return int(
            self.conn.execute("SELECT count(*) FROM search_vectors WHERE model = ?", (model,)).fetchone()[0]
        )

    def reset_hashes(self) -> None:
        """Mark every indexed work as changed (for `reindex`), keeping docnos and vectors:
        recomputing vectors is what costs time, and unchanged text keeps its vector."""
        self.conn.execute("UPDATE search_docs SET content_hash = ''")

    def delete_vectors(self, docnos: Sequence[int]) -> None:
        self.conn.executemany("DELETE FROM search_vectors WHERE docno = ?", [(d,) for d in docnos])

    # -- works (read only) --
    def has_works(self) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'work_records'"
            ).fetchone()
            is not None
        )

    def work_members(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """`W<n>` → every record key of the works that the given records belong to (keys not
        resolved yet are absent)."""
        out: dict[str, list[str]] = {}
        ks = list(keys)
        for i in range(0, len(ks), 500):
            chunk = ks[i : i + 500]
            marks = ",".join("?" * len(chunk))
            inner = f"SELECT work_id FROM work_records WHERE record_key IN ({marks})"  # noqa: S608 - placeholders only
            query = f"SELECT m.work_id, m.record_key FROM work_records m WHERE m.work_id IN ({inner})"  # noqa: S608
            for w, k in self.conn.execute(query, chunk):
                out.setdefault(f"W{int(w)}", []).append(k)
        return out

    def works_updated_after(self, stamp: str) -> tuple[list[str], str]:
        """Record keys of works changed (merged, split, curated) after `stamp`, and the newest
        stamp seen — how a merge that changed no record still reaches the index."""
        keys: list[str] = []
        newest = stamp
        for k, u in self.conn.execute(
            "SELECT r.record_key, w.updated_at FROM works w JOIN work_records r ON r.work_id = w.id "
            "WHERE w.updated_at > ?",
            (stamp,),
        ):
            keys.append(k)
            newest = max(newest, u)
        return keys, newest
