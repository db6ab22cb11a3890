"""The works repository on SQLite: `sql.works.Works` with the statements spelled in
SQLite's dialect (the two-argument `MAX`, subqueries without an alias, rowids that start
again after a fold)."""

from __future__ import annotations

from paperdesk.store.base import now
from paperdesk.store.sql.works import Works


class SQLiteWorks(Works):
    """The works repository of one SQLite connection."""

    def max_redirect_id(self) -> int:
        row = self.conn.execute(
            "SELECT MAX(m) FROM (SELECT MAX(old_id) m FROM work_redirects UNION ALL"
            " SELECT MAX(new_id) FROM work_redirects)"
        ).fetchone()
        return int(row[0] or 0)

    def first_new_id(self, base: int) -> int:
        """The id the next new work gets: above every work and redirected id (above `base`
        during a full run, whose ids are renumbered at its end)."""
        if base:
            row = self.conn.execute("SELECT MAX(id) FROM works").fetchone()
            return max(int(row[0] or 0) + 1, base)
        row = self.conn.execute(
            "SELECT MAX(m) FROM (SELECT MAX(id) m FROM works UNION ALL"
            " SELECT MAX(old_id) FROM work_redirects)"
        ).fetchone()
        return int(row[0] or 0) + 1

    def max_redirect_below(self, base: int) -> int:
        row = self.conn.execute(
            "SELECT MAX(m) FROM (SELECT MAX(old_id) m FROM work_redirects WHERE old_id < ?"
            " UNION ALL SELECT MAX(new_id) FROM work_redirects WHERE new_id < ?)",
            (base, base),
        ).fetchone()
        return int(row[0] or 0)

    def _merge_flags(self, old: int, new: int) -> None:
        """Work `new` is indexed for what either work was (SQLite's two-argument MAX)."""
        self.conn.execute(
            "UPDATE works SET indexed_title = MAX(indexed_title, (SELECT indexed_title FROM works"
            " WHERE id = ?)), indexed_abstract = MAX(indexed_abstract, (SELECT indexed_abstract"
            " FROM works WHERE id = ?)), updated_at = ? WHERE id = ?",
            (old, old, now(), new),
        )
