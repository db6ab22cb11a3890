"""The author repository on SQLite (`store.authors`): the shared tables, look-ups and reads
(`sql/authors.py`) with a run's staged rows (`authors_stage`) and the statements spelled in
SQLite's dialect (ids bound as a JSON list, member lists packed by `paperdesk_pack_ids`).
The interface is `paperdesk.store.authors_base.AuthorRepository`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from paperdesk.store.sqlite.authors_stage import AuthorStage

__all__ = ["SQLiteAuthors"]


class SQLiteAuthors(AuthorStage):
    """Author signatures, profiles, samples, redirects, curations and staged rows of one
    SQLite connection (the store's writer or a reader)."""

    _IN_IDS = "id IN (SELECT value FROM json_each(?))"
    """Rows whose id is in a JSON list bound as one parameter (`_ids`)."""

    def _ids(self, ids: Sequence[int]) -> Any:
        """The one parameter `_IN_IDS` takes for these (sorted) ids."""
        return orjson.dumps(list(ids)).decode()

    def _members_rebuild(self) -> None:
        """`author_members` packed again from every signature (after a bulk write)."""
        self.conn.execute("DELETE FROM author_members")
        self.conn.execute(
            "INSERT INTO author_members (author_id, ids)"
            " SELECT author_id, paperdesk_pack_ids(id) FROM author_signatures"
            " GROUP BY author_id ORDER BY author_id"
        )
