"""The search repository on SQLite: `sql.search.Search` with the statement spelled in
SQLite's dialect (`GLOB`)."""

from __future__ import annotations

from paperdesk.store.sql.search import Search


class SQLiteSearch(Search):
    """The search repository of one SQLite connection."""

    def orphan_docnos(self) -> list[int]:
        """Indexed documents that no longer stand for a live work: a `W<n>` merged away (or
        split to nothing), or a record indexed on its own that has since joined a work."""
        return [
            int(r[0])
            for r in self.conn.execute(
                "SELECT s.docno FROM search_docs s WHERE "
                "(s.work_id GLOB 'W[0-9]*' AND NOT EXISTS (SELECT 1 FROM work_records m "
                "  WHERE m.work_id = CAST(substr(s.work_id, 2) AS INTEGER))) "
                "OR (s.work_id NOT GLOB 'W[0-9]*' AND EXISTS (SELECT 1 FROM work_records m "
                "  WHERE m.record_key = s.work_id))"
            )
        ]
