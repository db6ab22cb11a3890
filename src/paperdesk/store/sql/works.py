"""The works tables of both backends: works, their records and identifiers, redirects, curations
and the LSH band keys the works resolver keeps (`paperdesk.resolve.works_run` decides;
this module only reads and writes, one method per question or change).

Writes run inside the caller's `store.transaction()`. Record rows are named by their
`rowid` (`records.rowid`), works by their integer id (`W<id>` for users).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import orjson

from paperdesk.store.base import CurationRow, WorkRecordRow, now, whole_seqs
from paperdesk.store.sql.connection import Conn, chunks, placeholders

_CHUNK = 500  # SQLite host-parameter chunk
_LSH_CHUNK = 999
"""Band keys asked per query of a band key table."""
DERIVED_TABLES = (
    "work_records", "work_keys", "work_lsh", "work_docs", "work_related", "works"
)
"""What a full run empties and rebuilds (curations, constraints and redirects stay)."""




class Works:
    """The works repository of one connection (the store's writer or a reader). The
    statements each backend spells its own way are in its subclass (`_merge_flags`,
    `first_new_id`, the redirect maxima)."""

    def __init__(self, conn: Conn):
        self.conn = conn

    # -- look-ups ------------------------------------------------------------------------
    def redirect_of(self, work_id: int) -> int | None:
        row = self.conn.execute(
            "SELECT new_id FROM work_redirects WHERE old_id = ?", (work_id,)
        ).fetchone()
        return None if row is None else int(row[0])

    def redirects(self) -> dict[int, int]:
        return {int(o): int(n) for o, n in self.conn.execute("SELECT old_id, new_id FROM work_redirects")}

    def work_of(self, key: str) -> int | None:
        row = self.conn.execute(
            "SELECT work_id FROM work_records WHERE record_key = ?", (key,)
        ).fetchone()
        return int(row[0]) if row else None

    def works_of(self, keys: Sequence[str]) -> dict[str, int]:
        """key → work id for the keys already resolved."""
        out: dict[str, int] = {}
        for part in chunks(list(keys)):
            sql = f"SELECT record_key, work_id FROM work_records WHERE record_key IN ({placeholders(len(part))})"  # noqa: S608
            out.update((k, int(w)) for k, w in self.conn.execute(sql, list(part)))
        return out

    def assignment(self) -> dict[str, int]:
        """Every resolved record's work."""
        return {k: int(w) for k, w in self.conn.execute("SELECT record_key, work_id FROM work_records")}

    def exists(self, work_id: int) -> bool:
        return self.conn.execute("SELECT 1 FROM works WHERE id = ?", (work_id,)).fetchone() is not None

    def members(self, work_id: int) -> list[str]:
        """The work's record keys, sorted."""
        return [
            k
            for (k,) in self.conn.execute(
                "SELECT record_key FROM work_records WHERE work_id = ? ORDER BY record_key", (work_id,)
            )
        ]

    def members_unordered(self, work_id: int) -> list[str]:
        return [
            k
            for (k,) in self.conn.execute(
                "SELECT record_key FROM work_records WHERE work_id = ?", (work_id,)
            )
        ]

    def members_in_record_order(self, work_id: int) -> list[str]:
        """The work's record keys in the order the records were stored."""
        return [
            k
            for (k,) in self.conn.execute(
                "SELECT wr.record_key FROM work_records wr JOIN records r ON r.key = wr.record_key"
                " WHERE wr.work_id = ? ORDER BY r.rowid",
                (work_id,),
            )
        ]

    def keys_of(self, work_ids: Iterable[int]) -> dict[int, dict[str, set[str]]]:
        """work → identifier kind → values."""
        out: dict[int, dict[str, set[str]]] = {}
        for part in chunks(list(set(work_ids))):
            sql = f"SELECT work_id, kind, value FROM work_keys WHERE work_id IN ({placeholders(len(part))})"  # noqa: S608
            for w, k, v in self.conn.execute(sql, list(part)):
                out.setdefault(int(w), {}).setdefault(k, set()).add(v)
        return out

    def registry(self, idents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """(kind, value) → work for the identifiers already registered."""
        out: dict[tuple[str, str], int] = {}
        for part in chunks(idents, 400):
            cond = " OR ".join(["(kind = ? AND value = ?)"] * len(part))
            args = [x for kv in part for x in kv]
            sql = f"SELECT kind, value, work_id FROM work_keys WHERE {cond}"  # noqa: S608
            for k, v, w in self.conn.execute(sql, args):
                out[(k, v)] = int(w)
        return out

    def constraints(self, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """Curated (key_a, key_b, must|cannot) pairs naming any of `keys`."""
        out = []
        for part in chunks(list(keys)):
            m = placeholders(len(part))
            sql = (
                f"SELECT key_a, key_b, kind FROM work_constraints WHERE key_a IN ({m})"  # noqa: S608
                f" UNION SELECT key_a, key_b, kind FROM work_constraints WHERE key_b IN ({m})"
            )
            out.extend(self.conn.execute(sql, [*part, *part]).fetchall())
        return out

    def flags(self, work_ids: Iterable[int]) -> dict[int, list[bool]]:
        """work → [title indexed, abstract indexed]."""
        out: dict[int, list[bool]] = {}
        for part in chunks(list(work_ids)):
            sql = f"SELECT id, indexed_title, indexed_abstract FROM works WHERE id IN ({placeholders(len(part))})"  # noqa: S608
            for w, t, a in self.conn.execute(sql, list(part)):
                out[int(w)] = [bool(t), bool(a)]
        return out

    def identifiers(self, work_id: int) -> list[tuple[str, str]]:
        return self.conn.execute(
            "SELECT kind, value FROM work_keys WHERE work_id = ? ORDER BY kind, value", (work_id,)
        ).fetchall()

    def merged_from(self, work_id: int) -> list[int]:
        return [
            int(o)
            for (o,) in self.conn.execute(
                "SELECT old_id FROM work_redirects WHERE new_id = ? ORDER BY old_id", (work_id,)
            )
        ]

    def record_rows(self, work_id: int) -> list[WorkRecordRow]:
        """The work's records, oldest year first, then in stored order."""
        return [
            WorkRecordRow(k, h, s, bytes(d))
            for k, h, s, d in self.conn.execute(
                "SELECT wr.record_key, wr.how, wr.score, r.data FROM work_records wr"
                " JOIN records r ON r.key = wr.record_key WHERE wr.work_id = ?"
                " ORDER BY r.year, r.rowid",
                (work_id,),
            )
        ]

    def record_data(self, keys: Sequence[str]) -> list[bytes]:
        """The stored documents of the records `keys` (in no particular order)."""
        out: list[bytes] = []
        for chunk in chunks(list(keys)):
            sql = f"SELECT data FROM records WHERE key IN ({placeholders(len(chunk))})"  # noqa: S608
            out += [bytes(d) for (d,) in self.conn.execute(sql, list(chunk))]
        return out

    def curations(self) -> list[CurationRow]:
        rows = self.conn.execute(
            "SELECT id, action, work_a, work_b, records, who, note, created_at FROM work_curations"
            " ORDER BY id"
        ).fetchall()
        return [
            CurationRow(i, a, wa, wb, orjson.loads(rec), who, note, at)
            for i, a, wa, wb, rec, who, note, at in rows
        ]

    # -- what a run reads --------------------------------------------------------------------
    def count_changed(self, after_seq: int) -> int:
        return int(
            self.conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (after_seq,)).fetchone()[0]
        )

    def changed_rows(self, after_seq: int, batch: int) -> Iterator[list[tuple[int, int, bytes]]]:
        """Batches of (rowid, seq, stored document) changed after `after_seq`, in seq order,
        of about `batch` rows each, never ending inside a seq (`base.whole_seqs`)."""
        cur = self.conn.execute(
            "SELECT rowid, seq, data FROM records WHERE seq > ? ORDER BY seq, rowid", (after_seq,)
        )
        pages = iter(lambda: [(int(r), int(s), bytes(d)) for r, s, d in cur.fetchmany(batch)], [])
        yield from whole_seqs(pages)

    def first_new_id(self, base: int) -> int:
        """The id the next new work gets: above every work and redirected id (above `base`
        during a full run, whose ids are renumbered at its end)."""
        raise NotImplementedError

    def lsh_all(self) -> np.ndarray:
        """Every stored band key row as (band key, record rowid, work), int64 (n, 3)."""
        sql = "SELECT band_key, record_rowid, work_id FROM work_lsh"
        return np.array(self.conn.execute(sql).fetchall(), dtype=np.int64).reshape(-1, 3)

    def lsh_rows(self, keys: Sequence[int]) -> np.ndarray:
        """The stored rows of the band keys `keys` as (stored order, band key, record rowid,
        work), int64 (n, 4), in no particular order (the stored order is the rowid)."""
        found: list[tuple[int, int, int, int]] = []
        for part in chunks(keys, _LSH_CHUNK):
            found += self.conn.execute(
                "SELECT rowid, band_key, record_rowid, work_id FROM work_lsh"  # noqa: S608
                f" WHERE band_key IN ({placeholders(len(part))})",
                part,
            ).fetchall()
        return np.array(found, dtype=np.int64).reshape(-1, 4)

    def docs(self, rowids: Sequence[int]) -> Iterator[tuple[int, bytes]]:
        """(record rowid, packed features) kept for the indexed records among `rowids`."""
        for part in chunks(rowids):
            sql = f"SELECT record_rowid, doc FROM work_docs WHERE record_rowid IN ({placeholders(len(part))})"  # noqa: S608
            for rowid, blob in self.conn.execute(sql, list(part)):
                yield int(rowid), blob

    def docs_missing(self) -> list[int]:
        """Indexed record rowids of a store resolved before `work_docs` existed (empty when
        the table has rows, or nothing is indexed)."""
        if self.conn.execute("SELECT 1 FROM work_docs LIMIT 1").fetchone() is not None:
            return []
        return [
            r
            for (r,) in self.conn.execute("SELECT DISTINCT record_rowid FROM work_lsh")
        ]

    def record_data_by_rowid(self, rowids: Sequence[int]) -> list[tuple[int, bytes]]:
        sql = f"SELECT rowid, data FROM records WHERE rowid IN ({placeholders(len(rowids))})"  # noqa: S608
        return [(int(r), bytes(d)) for r, d in self.conn.execute(sql, list(rowids))]

    # -- what a run writes -------------------------------------------------------------------
    def clear(self) -> None:
        """Empty the derived works tables (a full run rebuilds them)."""
        for table in DERIVED_TABLES:
            self.conn.execute(f"DELETE FROM {table}")  # noqa: S608 (fixed names)

    def add_works(self, ids: Sequence[int], stamp: str) -> None:
        self.conn.executemany(
            "INSERT INTO works (id, created_at, updated_at) VALUES (?, ?, ?)",
            [(w, stamp, stamp) for w in ids],
        )

    def new_work(self) -> int:
        """A new empty work with the next id."""
        stamp = now()
        wid = self.first_new_id(0)
        self.add_works([wid], stamp)
        return wid

    def set_flags(self, rows: Sequence[tuple[int, bool, bool]], stamp: str) -> None:
        """(work, title indexed, abstract indexed) for each touched work."""
        self.conn.executemany(
            "UPDATE works SET indexed_title = ?, indexed_abstract = ?, updated_at = ? WHERE id = ?",
            [(int(t), int(a), stamp, w) for w, t, a in rows],
        )

    def put_records(self, rows: Sequence[tuple[str, int, str, float | None]]) -> None:
        """(record key, work, how it joined, score): insert or move."""
        self.conn.executemany(
            "INSERT INTO work_records (record_key, work_id, how, score) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(record_key) DO UPDATE SET work_id = excluded.work_id,"
            " how = excluded.how, score = excluded.score",
            rows,
        )

    def add_keys(self, rows: Sequence[tuple[str, str, int]]) -> None:
        """(kind, value, work): identifiers registered for their first work."""
        self.conn.executemany(
            "INSERT OR IGNORE INTO work_keys (kind, value, work_id) VALUES (?, ?, ?)", rows
        )

    def add_related(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """(referring record key, referred record key, kind) links; a link already held
        keeps its kind."""
        self.conn.executemany(
            "INSERT OR IGNORE INTO work_related (from_key, to_key, kind) VALUES (?, ?, ?)", rows
        )

    def related_of(self, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """(from key, to key, kind) of the links touching any of `keys`, in key order."""
        out: set[tuple[str, str, str]] = set()
        for part in chunks(list(keys)):
            marks = placeholders(len(part))
            sql = (
                "SELECT from_key, to_key, kind FROM work_related"  # noqa: S608 (placeholders)
                f" WHERE from_key IN ({marks}) UNION"
                f" SELECT from_key, to_key, kind FROM work_related WHERE to_key IN ({marks})"
            )
            out.update((str(a), str(b), str(k)) for a, b, k in self.conn.execute(sql, [*part, *part]))
        return sorted(out)

    def put_docs(self, rows: Sequence[tuple[int, bytes]]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO work_docs (record_rowid, doc) VALUES (?, ?)", rows
        )

    def add_lsh(self, rows: np.ndarray) -> None:
        """(band key, record rowid, work) rows, appended in their order."""
        self.conn.executemany(
            "INSERT INTO work_lsh (band_key, record_rowid, work_id) VALUES (?, ?, ?)",
            rows.tolist(),
        )

    def merge(self, old: int, new: int, reason: str) -> None:
        """Move everything of work `old` into `new` and leave a redirect."""
        for table in ("work_records", "work_keys", "work_lsh"):
            self.conn.execute(f"UPDATE {table} SET work_id = ? WHERE work_id = ?", (new, old))  # noqa: S608
        self._merge_flags(old, new)
        self.conn.execute("DELETE FROM works WHERE id = ?", (old,))
        self.conn.execute("UPDATE work_redirects SET new_id = ? WHERE new_id = ?", (new, old))
        self.add_redirects([(old, new, reason)])

    def _merge_flags(self, old: int, new: int) -> None:
        """Work `new` is indexed for what either work was."""
        raise NotImplementedError

    def add_redirects(self, rows: Sequence[tuple[int, int, str]]) -> None:
        stamp = now()
        self.conn.executemany(
            "INSERT OR REPLACE INTO work_redirects (old_id, new_id, reason, created_at)"
            " VALUES (?, ?, ?, ?)",
            [(o, n, r, stamp) for o, n, r in rows],
        )

    def renumber(self, remap: dict[int, int], base: int) -> None:
        """After a full run: the works numbered from `base` get their final ids (`remap`),
        and redirects made between temporary ids point at final ids."""
        conn = self.conn
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS _remap (tmp INTEGER PRIMARY KEY, final INTEGER)")
        conn.execute("DELETE FROM _remap")
        conn.executemany("INSERT INTO _remap VALUES (?, ?)", list(remap.items()))
        for table, col in (
            ("work_records", "work_id"),
            ("work_keys", "work_id"),
            ("work_lsh", "work_id"),
            ("works", "id"),
        ):
            conn.execute(
                f"UPDATE {table} SET {col} = (SELECT final FROM _remap WHERE tmp = {col})"  # noqa: S608
                f" WHERE {col} >= ?",
                (base,),
            )

    def finish_renumber(self, base: int) -> None:
        conn = self.conn
        conn.execute("DELETE FROM work_redirects WHERE old_id >= ?", (base,))
        conn.execute(
            "UPDATE work_redirects SET new_id = (SELECT final FROM _remap WHERE tmp = new_id)"
            " WHERE new_id >= ?",
            (base,),
        )
        conn.execute("DELETE FROM work_redirects WHERE old_id IN (SELECT id FROM works)")
        conn.execute("DELETE FROM _remap")

    # -- curations ---------------------------------------------------------------------------
    def log_curation(
        self,
        action: str,
        a: int,
        b: int | None,
        records: dict[str, list[str]],
        who: str,
        note: str | None,
    ) -> int:
        rows = self.conn.execute(  # RETURNING (SQLite 3.35+): portable, unlike lastrowid
            "INSERT INTO work_curations (action, work_a, work_b, records, who, note, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (action, a, b, orjson.dumps(records).decode(), who, note, now()),
        ).fetchall()  # to the statement's end: nothing left running at COMMIT
        return int(rows[0][0])

    def set_curation_work_b(self, cid: int, work: int) -> None:
        self.conn.execute("UPDATE work_curations SET work_b = ? WHERE id = ?", (work, cid))

    def constrain(self, pairs: Iterable[tuple[str, str, str]], cid: int) -> None:
        """Record (key, key, must|cannot) constraints of curation `cid`; each overrides the
        opposite one between the same two records."""
        rows = []
        for a, b, kind in pairs:
            x, y = sorted((a, b))
            rows.append((x, y, kind, cid))
            self.conn.execute(
                "DELETE FROM work_constraints WHERE key_a = ? AND key_b = ? AND kind = ?",
                (x, y, "cannot" if kind == "must" else "must"),
            )
        self.conn.executemany(
            "INSERT OR REPLACE INTO work_constraints (key_a, key_b, kind, curation_id)"
            " VALUES (?, ?, ?, ?)",
            rows,
        )

    def drop_cannot(self, a: str, b: str) -> None:
        p, q = sorted((a, b))
        self.conn.execute(
            "DELETE FROM work_constraints WHERE key_a = ? AND key_b = ? AND kind = 'cannot'",
            (p, q),
        )

    def mark_curated(self, work_id: int) -> None:
        self.conn.execute("UPDATE work_records SET how = 'curation' WHERE work_id = ?", (work_id,))

    def move_records(self, keys: Sequence[str], work_id: int) -> None:
        """The records `keys` (and their band keys) to `work_id`, marked curated."""
        for part in chunks(list(keys)):
            m = placeholders(len(part))
            self.conn.execute(
                f"UPDATE work_records SET work_id = ?, how = 'curation' WHERE record_key IN ({m})",  # noqa: S608
                [work_id, *part],
            )
            self.conn.execute(
                "UPDATE work_lsh SET work_id = ? WHERE record_rowid IN"  # noqa: S608
                f" (SELECT rowid FROM records WHERE key IN ({m}))",
                [work_id, *part],
            )

    def move_key(self, kind: str, value: str, work_id: int) -> None:
        self.conn.execute(
            "UPDATE work_keys SET work_id = ? WHERE kind = ? AND value = ?", (work_id, kind, value)
        )

    def mark_indexed(self, work_id: int) -> None:
        """Never index band keys for this work (a split-off work: its records keep theirs)."""
        self.conn.execute(
            "UPDATE works SET indexed_title = 1, indexed_abstract = 1 WHERE id = ?", (work_id,)
        )
