"""The read queries behind the pages (daily feed, paper, subject lists), as the store's
`catalog` repository (`store.catalog`; `base.CatalogRepository`).

Works come from `work_records` once `resolve` has run; a record not yet resolved is shown
on its own under its record key (`arxiv:2501.00001`) as a pseudo work id — the same id
search uses — so a fresh ingest is browsable at once. Both backends run this class on their
connection (the common dialect, see `store/sql/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from paperdesk.model import SourceRecord
from paperdesk.store.codec import decode_record
from paperdesk.store.sql.connection import Conn, has_table, placeholders


def _codes_under(conn: Conn, prefix: str) -> list[str]:
    """The distinct codes starting with `prefix`, by a skip scan of the key (one index
    look-up per code, not one row visit per record)."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    out: list[str] = []
    code = conn.execute(
        "SELECT MIN(code) FROM record_categories WHERE code >= ? AND code < ?", (prefix, end)
    ).fetchone()[0]
    while code is not None:
        out.append(str(code))
        code = conn.execute(
            "SELECT MIN(code) FROM record_categories WHERE code > ? AND code < ?", (code, end)
        ).fetchone()[0]
    return out


class Catalog:
    """The catalog repository on one connection (the store's, or a reader's)."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self._tables: set[str] = set()

    def _has(self, table: str) -> bool:
        """Whether `table` exists; a table once there stays (no migration drops one), so
        a yes is kept: the probe was three round trips of every daily page on PostgreSQL."""
        if table not in self._tables and has_table(self.conn, table):
            self._tables.add(table)
        return table in self._tables

    def latest_day(self) -> str | None:
        """The newest day that has any record."""
        conn = self.conn
        return conn.execute("SELECT MAX(appeared) FROM records").fetchone()[0]

    def neighbour_days(self, day: str) -> tuple[str | None, str | None]:
        """The nearest earlier and later days that have papers (index seeks, not scans)."""
        conn = self.conn
        prev = conn.execute("SELECT MAX(appeared) FROM records WHERE appeared < ?", (day,))
        nxt = conn.execute("SELECT MIN(appeared) FROM records WHERE appeared > ?", (day,))
        return prev.fetchone()[0], nxt.fetchone()[0]

    def day_records(self, day: str) -> list[tuple[str, SourceRecord]]:
        """(work id, record) for every record that appeared on `day`."""
        conn = self.conn
        if self._has("work_records"):
            sql = (
                "SELECT COALESCE('W' || wr.work_id, r.key), r.data FROM records r"
                " LEFT JOIN work_records wr ON wr.record_key = r.key"
                " WHERE r.appeared = ? ORDER BY r.rowid"
            )
        else:
            sql = "SELECT r.key, r.data FROM records r WHERE r.appeared = ? ORDER BY r.rowid"
        return [(wid, decode_record(data)) for wid, data in conn.execute(sql, (day,))]

    def day_index(self, day: str) -> list[tuple[str, int, str | None]]:
        """(work id, record rowid, category code or None) for every record of `day`, in record
        order — enough to count and filter a day without decoding any record.

        The codes come from each record's JSON (SQLite's json_extract, in C): `record_categories`
        is keyed by code for the subject pages (migration 005), and a day is a few hundred
        records."""
        conn = self.conn
        if self._has("work_records"):
            wid = "COALESCE('W' || wr.work_id, r.key)"
            join = " LEFT JOIN work_records wr ON wr.record_key = r.key"
        else:
            wid, join = "r.key", ""
        codes = (  # the JSON array as text, each backend's way
            "convert_from(r.data, 'UTF8')::json ->> 'categories'"  # json: parsed once, not built
            if getattr(conn, "dialect", "sqlite") == "postgresql"
            else "json_extract(CAST(r.data AS TEXT), '$.categories')"
        )
        # Only fixed SQL fragments are interpolated.
        sql = f"SELECT {wid}, r.rowid, {codes} FROM records r{join} WHERE r.appeared = ? ORDER BY r.rowid"  # noqa: S608
        out: list[tuple[str, int, str | None]] = []
        for w, rowid, codes in conn.execute(sql, (day,)):
            listed: list[str | None] = (
                [c for c in orjson.loads(codes) if isinstance(c, str)] if codes else []
            )
            out.extend((w, int(rowid), c) for c in listed or [None])
        return out

    def work_records(self, work_ids: Sequence[str]) -> dict[str, list[SourceRecord]]:
        """Every record of each work (`W…` ids via work_records; a record key stands for the
        one-record work of a record not resolved yet)."""
        conn = self.conn
        out: dict[str, list[SourceRecord]] = {w: [] for w in work_ids}
        real = [int(w[1:]) for w in work_ids if w.startswith("W") and w[1:].isdigit()]
        pseudo = [w for w in work_ids if ":" in w]
        if real and self._has("work_records"):
            for i in range(0, len(real), 500):
                chunk = real[i : i + 500]
                marks = placeholders(len(chunk))
                sql = f"SELECT wr.work_id, r.data FROM work_records wr JOIN records r ON r.key = wr.record_key WHERE wr.work_id IN ({marks}) ORDER BY r.rowid"  # noqa: S608
                for wid, data in conn.execute(sql, chunk):
                    out[f"W{wid}"].append(decode_record(data))
        for i in range(0, len(pseudo), 500):
            keys = pseudo[i : i + 500]
            sql = f"SELECT key, data FROM records WHERE key IN ({placeholders(len(keys))})"  # noqa: S608
            for key, data in conn.execute(sql, keys):
                out[key].append(decode_record(data))
        return out

    def author_ids(self, keys: Sequence[str]) -> dict[tuple[str, int], str]:
        """{(record key, author position): author_id} after resolve (empty before)."""
        conn = self.conn
        if not keys or not self._has("author_signatures"):
            return {}
        out: dict[tuple[str, int], str] = {}
        for i in range(0, len(keys), 500):
            chunk = list(keys[i : i + 500])
            marks = placeholders(len(chunk))
            sql = f"SELECT record_key, position, author_id FROM author_signatures WHERE record_key IN ({marks})"  # noqa: S608
            for key, pos, aid in conn.execute(sql, chunk):
                out[(key, int(pos))] = aid
        return out

    def follow_work(self, work_id: str) -> str:
        """A merged work's current id (redirects), or the id itself."""
        conn = self.conn
        if not (work_id.startswith("W") and work_id[1:].isdigit()) or not self._has("work_redirects"):
            return work_id
        wid = int(work_id[1:])
        for _ in range(32):
            row = conn.execute("SELECT new_id FROM work_redirects WHERE old_id = ?", (wid,)).fetchone()
            if row is None:
                break
            wid = int(row[0])
        return f"W{wid}"

    def code_counts(self) -> dict[str, int]:
        """Records listing each category code as given (any position)."""
        conn = self.conn
        rows = conn.execute("SELECT code, COUNT(*) FROM record_categories GROUP BY code")
        return {str(code): int(n) for code, n in rows}

    def data_version(self) -> tuple[int, int]:
        """Changes whenever records change: a cheap key for caching derived counts.

        Every insert and update of a record bumps its `seq` past the store's highest and records
        are never deleted, so the highest `seq` and rowid (two index look-ups) say it; a COUNT(*)
        here scanned the whole table on every subject page (7 ms at 100k records)."""
        conn = self.conn
        row = conn.execute(
            "SELECT COALESCE((SELECT MAX(seq) FROM records), 0),"
            " COALESCE((SELECT MAX(rowid) FROM records), 0)"
        ).fetchone()
        return int(row[0]), int(row[1])

    def recent_in(
        self, codes: Sequence[str], prefix: str | None, limit: int
    ) -> list[tuple[str, SourceRecord]]:
        """(work id, record) of the newest records listing any of `codes` (or any code starting
        with `prefix`, for a whole archive such as `cs.`), newest feed day first.

        Why per code: one query over several codes (or a code range) must sort every matching
        row, with its record's JSON, to find the newest — 2.7 s for `cs.` on the 102k daily feed.
        Each code's rows are already in (feed day, record) order in `record_categories`' key, so
        the newest `limit` of each code is an index walk; a record among the newest `limit` of
        the union is among the newest `limit` of every code it lists, so merging those short
        lists gives the same answer. Only the winners' JSON is read.
        """
        conn = self.conn
        if limit <= 0:
            return []
        wanted = _codes_under(conn, prefix) if prefix else list(dict.fromkeys(codes))
        newest: dict[int, str] = {}
        for code in wanted:
            rows = conn.execute(
                "SELECT feed_date, record_rowid FROM record_categories WHERE code = ? "
                "ORDER BY feed_date DESC, record_rowid DESC LIMIT ?",
                (code, limit),
            )
            for day, rowid in rows:
                newest[int(rowid)] = str(day)
        top = sorted(newest.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:limit]
        if not top:
            return []
        join = (
            " LEFT JOIN work_records wr ON wr.record_key = r.key"
            if self._has("work_records") else ""
        )
        wid = "COALESCE('W' || wr.work_id, r.key)" if join else "r.key"
        rowids = [rowid for rowid, _ in top]
        # Only fixed SQL fragments and placeholders are interpolated below.
        sql = f"SELECT r.rowid, {wid}, r.data FROM records r{join} WHERE r.rowid IN ({placeholders(len(rowids))})"  # noqa: S608
        found = {int(rowid): (str(w), d) for rowid, w, d in conn.execute(sql, rowids)}
        return [(found[r][0], decode_record(found[r][1])) for r in rowids if r in found]
