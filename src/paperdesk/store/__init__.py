"""The one package that talks to a database.

`open_store(path)` gives the embedded SQLite backend (the default). A PostgreSQL backend
implements the same `Store` interface (see `base.py`); nothing outside this package writes
SQL, so the backend is swappable without touching sources, resolution, search or web.
"""

from __future__ import annotations

import os
from pathlib import Path

from paperdesk.store.base import PutResult, Reject, Store
from paperdesk.store.sqlite import SQLiteStore

__all__ = ["open_store", "default_db_path", "PutResult", "Reject", "Store", "SQLiteStore"]


def default_db_path() -> Path:
    """`$PAPERDESK_DB`, else `$XDG_DATA_HOME/paperdesk/paperdesk.db` (~/.local/share/…)."""
    env = os.environ.get("PAPERDESK_DB")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "paperdesk" / "paperdesk.db"


def open_store(path: str | Path | None = None) -> SQLiteStore:
    """Open (creating and migrating as needed) the store at `path`."""
    return SQLiteStore(path or default_db_path())
