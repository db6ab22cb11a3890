"""The one package that talks to a database.

`open_store(target)` opens a store from a file path or a URL: the embedded SQLite backend
(the default; `store/sqlite/`) for a path or `sqlite:///PATH`. Every backend implements
the `Store` interface of `base.py` (repositories returning plain data, `transaction()`,
`reader()`); nothing outside this package writes SQL, so stages, CLI and web do not know
which backend they run on. PostgreSQL (`postgresql://…`) is issue 17: until then such a
URL is refused with a clear error instead of being taken as a file name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from paperdesk import settings
from paperdesk.errors import StoreError
from paperdesk.store.base import PutResult, Reject, Store
from paperdesk.store.sqlite import SQLiteStore

__all__ = [
    "PutResult",
    "Reject",
    "SQLiteStore",
    "Store",
    "default_db_path",
    "open_store",
    "store_path",
]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_MANGLED = re.compile(r"^(sqlite|postgres|postgresql|mysql|mariadb):/(?!/)", re.IGNORECASE)
"""A URL that a path type has collapsed (`Path("postgresql://h/db")` is `postgresql:/h/db`)."""


def default_db_path() -> str | Path:
    """`$PAPERDESK_DB` (a path or a URL), else `$XDG_DATA_HOME/paperdesk/paperdesk.db`."""
    env = settings.DB.get()
    if env:
        return env if _URL.match(env) else Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "paperdesk" / "paperdesk.db"


def store_path(target: str | Path) -> str:
    """The SQLite file a target names (`sqlite:///PATH` or a path); raises StoreError for
    a URL of any other backend."""
    text = str(target)
    mangled = _MANGLED.match(text)
    if mangled:  # put the `//` back
        text = f"{mangled.group(1)}://{text[mangled.end() - 1 :]}"
    m = _URL.match(text)
    if m is None:
        return text
    scheme = m.group(1).lower()
    if scheme == "sqlite":
        path = text[m.end() :]
        if not path:
            raise StoreError(f"{text!r} names no file (use sqlite:///path/to/paperdesk.db)")
        return path
    if scheme in ("postgresql", "postgres"):
        raise StoreError(
            f"PostgreSQL stores ({scheme}://…) are not supported yet (issue 17); "
            "use a SQLite file path"
        )
    raise StoreError(f"unknown database URL scheme {scheme!r} (use a SQLite file path)")


def open_store(target: str | Path | None = None) -> SQLiteStore:
    """Open (creating and migrating as needed) the store a path or URL names."""
    return SQLiteStore(store_path(target or default_db_path()))
