"""The repositories on PostgreSQL: the shared ones (`store/sql/`, their SQL run through the
dialect layer) with the statements that PostgreSQL spells its own way, each with
PostgreSQL's own SQL (`PGConn.raw`), and bulk band-key writes by COPY.

The look-ups a day's works stage makes by many keys at once (band keys, works, record
keys, identifiers) are one statement with the keys bound as arrays (`= ANY(%s)`,
`unnest`) instead of SQLite's `IN (?, …)` lists of 500–999: each of those was a round trip
whose planning of ~1,000 parameters cost more than its index look-ups (~34 ms each), where
SQLite's calls are in-process. They return the same rows, in the order the SQLite
statements give (where it is defined)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from paperdesk.store.base import now, whole_seqs
from paperdesk.store.postgres.connection import PGConn
from paperdesk.store.sql.search import Search
from paperdesk.store.sql.works import Works

_AFTER_ALL = (1 << 63) - 1
"""Above every rowid (BIGINT's largest)."""


def changed_pages(
    conn: PGConn, after_seq: int, batch: int
) -> Iterator[list[tuple[int, int, bytes]]]:
    """Pages of (rowid, seq, data) changed after `after_seq`, in (seq, rowid) order, by
    keyset: a page at a time instead of the whole result (1M records are ~2.5 GB)."""
    seq, rowid = after_seq, _AFTER_ALL  # first page: seq > after_seq, whatever the rowid
    while True:
        rows = conn.raw(
            "SELECT rowid, seq, data FROM records WHERE (seq, rowid) > (%s, %s)"
            " ORDER BY seq, rowid LIMIT %s",
            (seq, rowid, batch),
        ).fetchall()
        if rows:
            yield [(int(r), int(s), bytes(d)) for r, s, d in rows]
        if len(rows) < batch:
            return
        rowid, seq = int(rows[-1][0]), int(rows[-1][1])


def _one(conn: PGConn, text: str, params: Sequence[object] = ()) -> int:
    row = conn.raw(text, params).fetchone()
    return int(row[0] or 0) if row else 0


class PGWorks(Works):
    """The works repository on PostgreSQL."""

    conn: PGConn

    def changed_rows(self, after_seq: int, batch: int) -> Iterator[list[tuple[int, int, bytes]]]:
        return whole_seqs(changed_pages(self.conn, after_seq, batch))

    def lsh_rows(self, keys: Sequence[int]) -> np.ndarray:
        """As SQLite's, in one statement for every key."""
        ks = [int(k) for k in keys]
        if not ks:
            return np.zeros((0, 4), dtype=np.int64)
        found = self.conn.raw(
            "SELECT rowid, band_key, record_rowid, work_id FROM work_lsh"
            " WHERE band_key = ANY(%s::int8[])",
            (ks,),
        ).fetchall()
        return np.array(found, dtype=np.int64).reshape(-1, 4)

    def works_of(self, keys: Sequence[str]) -> dict[str, int]:
        rows = self.conn.raw(
            "SELECT record_key, work_id FROM work_records WHERE record_key = ANY(%s::text[])",
            (list(keys),),
        )
        return {k: int(w) for k, w in rows}

    def keys_of(self, work_ids: Iterable[int]) -> dict[int, dict[str, set[str]]]:
        out: dict[int, dict[str, set[str]]] = {}
        for w, k, v in self.conn.raw(
            "SELECT work_id, kind, value FROM work_keys WHERE work_id = ANY(%s::int8[])",
            (sorted({int(w) for w in work_ids}),),
        ):
            out.setdefault(int(w), {}).setdefault(k, set()).add(v)
        return out

    def registry(self, idents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """As SQLite's, the pairs joined as two arrays instead of an `OR` of 400 pairs."""
        if not idents:
            return {}
        rows = self.conn.raw(
            "SELECT k.kind, k.value, k.work_id FROM work_keys k"
            " JOIN unnest(%s::text[], %s::text[]) AS u(kind, value)"
            " ON k.kind = u.kind AND k.value = u.value",
            ([k for k, _ in idents], [v for _, v in idents]),
        )
        return {(k, v): int(w) for k, v, w in rows}

    def flags(self, work_ids: Iterable[int]) -> dict[int, list[bool]]:
        rows = self.conn.raw(
            "SELECT id, indexed_title, indexed_abstract FROM works WHERE id = ANY(%s::int8[])",
            ([int(w) for w in work_ids],),
        )
        return {int(w): [bool(t), bool(a)] for w, t, a in rows}

    def record_data(self, keys: Sequence[str]) -> list[bytes]:
        rows = self.conn.raw("SELECT data FROM records WHERE key = ANY(%s::text[])", (list(keys),))
        return [bytes(d) for (d,) in rows]

    def docs(self, rowids: Sequence[int]) -> Iterator[tuple[int, bytes]]:
        rows = self.conn.raw(
            "SELECT record_rowid, doc FROM work_docs WHERE record_rowid = ANY(%s::int8[])",
            ([int(r) for r in rowids],),
        )
        for rowid, blob in rows:
            yield int(rowid), blob

    def max_redirect_id(self) -> int:
        return _one(
            self.conn,
            "SELECT GREATEST((SELECT MAX(old_id) FROM work_redirects),"
            " (SELECT MAX(new_id) FROM work_redirects))",
        )

    def first_new_id(self, base: int) -> int:
        if base:
            return max(_one(self.conn, "SELECT MAX(id) FROM works") + 1, base)
        return (
            _one(
                self.conn,
                "SELECT GREATEST((SELECT MAX(id) FROM works),"
                " (SELECT MAX(old_id) FROM work_redirects))",
            )
            + 1
        )

    def max_redirect_below(self, base: int) -> int:
        return _one(
            self.conn,
            "SELECT GREATEST((SELECT MAX(old_id) FROM work_redirects WHERE old_id < %s),"
            " (SELECT MAX(new_id) FROM work_redirects WHERE new_id < %s))",
            (base, base),
        )

    def add_lsh(self, rows: np.ndarray) -> None:
        """(band key, record rowid, work) rows by COPY, in their order (their `rowid`)."""
        conn = self.conn.pinned
        if conn is None or not len(rows):
            super().add_lsh(rows)
            return
        with conn.cursor() as cur, cur.copy(
            "COPY work_lsh (band_key, record_rowid, work_id) FROM STDIN"
        ) as copy:
            for row in rows.tolist():
                copy.write_row(row)
        self.conn.wrote("work_lsh", len(rows))

    def _merge_flags(self, old: int, new: int) -> None:
        self.conn.raw(
            "UPDATE works SET indexed_title = GREATEST(indexed_title, (SELECT indexed_title"
            " FROM works WHERE id = %s)), indexed_abstract = GREATEST(indexed_abstract,"
            " (SELECT indexed_abstract FROM works WHERE id = %s)), updated_at = %s WHERE id = %s",
            (old, old, now(), new),
        )


class PGSearch(Search):
    """The search repository on PostgreSQL."""

    def orphan_docnos(self) -> list[int]:
        conn: PGConn = self.conn  # type: ignore[assignment]
        return [
            int(r[0])
            for r in conn.raw(
                "SELECT s.docno FROM search_docs s WHERE "
                "(s.work_id ~ '^W[0-9]' AND NOT EXISTS (SELECT 1 FROM work_records m"
                "  WHERE m.work_id = CASE WHEN s.work_id ~ '^W[0-9]+$'"
                "  THEN substr(s.work_id, 2)::bigint END)) "
                "OR (s.work_id !~ '^W[0-9]' AND EXISTS (SELECT 1 FROM work_records m"
                "  WHERE m.record_key = s.work_id))"
            )
        ]
