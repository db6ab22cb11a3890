"""The author repository on SQLite (`store.authors`): the tables the resolve stage writes
and reads (`authors_tables`), the look-ups and curation log (`authors_lookup`) and a run's
staged rows (`authors_stage`), as one object on one connection. The interface is
`paperdesk.store.authors_base.AuthorRepository`."""

from __future__ import annotations

from paperdesk.store.sqlite.authors_lookup import AuthorLookups
from paperdesk.store.sqlite.authors_stage import AuthorStage
from paperdesk.store.sqlite.authors_tables import FOLD_MIN, FOLD_SHARE

__all__ = ["FOLD_MIN", "FOLD_SHARE", "SQLiteAuthors"]


class SQLiteAuthors(AuthorStage, AuthorLookups):
    """Author signatures, profiles, samples, redirects, curations and staged rows of one
    connection (the store's writer or a reader)."""
