"""Author look-ups that pages, the CLI and curations make, and the curation log.

Part of both backends' author repositories (`sql.authors.Authors`), split from
`authors_tables` (what the resolve stage writes and reads) so that neither module passes
the 800-line limit. Its SQL is the common dialect (see `store/sql/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from paperdesk.store.authors_base import Curation
from paperdesk.store.base import now
from paperdesk.store.profiles_codec import unpack_time
from paperdesk.store.sql.authors_tables import AuthorTables, _select


def _by_records(hits: str) -> str:
    """SQL ranking the profiles of `hits` (a query of their ids, maybe repeated) that have
    a row: most records first, then by id; one `LIMIT ?` parameter follows."""
    return (
        f"SELECT author_id FROM author_profiles WHERE author_id IN ({hits})"  # noqa: S608
        " ORDER BY n_records DESC, author_id LIMIT ?"
    )


class AuthorLookups(AuthorTables):
    """Profile pages, name look-ups and search, redirects and the curation log."""

    def follow_redirects(self, author_id: str) -> str:
        seen = {author_id}
        while True:
            row = self.conn.execute(
                "SELECT new_id FROM author_redirects WHERE old_id = ?", (author_id,)
            ).fetchone()
            if row is None or row[0] in seen:
                return author_id
            author_id = row[0]
            seen.add(author_id)

    def get_profile_row(self, author_id: str) -> dict[str, Any] | None:
        cols = "author_id, name, block, n_signatures, n_records, created_at, updated_at"
        row = self.conn.execute(
            _select("author_profiles", cols, "author_id = ?"), (author_id,)
        ).fetchone()
        if row is None:
            return None
        keys = ("author_id", "name", "block", "n_signatures", "n_records", "created_at", "updated_at")
        return dict(zip(keys, (*row[:5], unpack_time(row[5]), unpack_time(row[6])), strict=True))

    def profiles_by_name(self, name_folded: str, limit: int = 50) -> list[str]:
        """Profiles having a signature written exactly so (folded), most records first."""
        hits = _select("author_names", "author_id", "name_folded = ?")
        rows = self.conn.execute(_by_records(hits), (name_folded, limit))
        return [r[0] for r in rows]

    def profiles_in_block(self, block: str, limit: int = 200) -> list[str]:
        rows = self.conn.execute(
            _select("author_profiles", "author_id, n_records", "block = ?")
            + " ORDER BY n_records DESC, author_id LIMIT ?",
            (block, limit),
        )
        return [r[0] for r in rows]

    def search_profiles(self, words: Sequence[str], limit: int = 50) -> list[str]:
        """Profiles with a name variant containing every word (folded, as a substring)."""
        if not words:
            return []
        cond = " AND ".join("name_folded LIKE ? ESCAPE '\\'" for _ in words)
        args: list[Any] = [
            "%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            for w in words
        ]
        hits = _select("author_names", "author_id", cond)
        rows = self.conn.execute(_by_records(hits), [*args, limit])
        return [r[0] for r in rows]

    def add_curation(
        self,
        action: str,
        groups: Sequence[Sequence[str]],
        *,
        apart: bool,
        args: dict[str, Any],
        who: str,
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO author_curations (action, groups, apart, args, who, at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                action,
                orjson.dumps([list(g) for g in groups]).decode(),
                int(apart),
                orjson.dumps(args).decode(),
                who,
                now(),
            ),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def list_curations(self, after_id: int = 0) -> list[Curation]:
        rows = self.conn.execute(
            "SELECT id, action, groups, apart, args, who, at FROM author_curations"
            " WHERE id > ? ORDER BY id",
            (after_id,),
        )
        return [
            Curation(i, a, orjson.loads(g), bool(p), orjson.loads(x), w, t)
            for i, a, g, p, x, w, t in rows
        ]

    def max_curation_id(self) -> int:
        return int(self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM author_curations").fetchone()[0])

    def record_authors(self, record_key: str) -> list[dict[str, Any]]:
        """A record's authors in order, each with the `author_id` of its profile (after
        resolve; an empty list before)."""
        rows = self.conn.execute(
            "SELECT position, name, author_id FROM author_signatures WHERE record_key = ?"
            " ORDER BY position",
            (record_key,),
        )
        return [{"position": p, "name": n, "author_id": a} for p, n, a in rows]
