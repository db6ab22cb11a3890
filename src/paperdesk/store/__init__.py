"""The one package that talks to a database.

`open_store(target)` opens a store from a file path or a URL: the embedded SQLite backend
(the default; `store/sqlite/`) for a path or `sqlite:///PATH`, the PostgreSQL backend
(`store/postgres/`) for `postgresql://USER:PASS@HOST[:PORT]/DB` (or `postgres://`). Every
backend implements the `Store` interface of `base.py` (repositories returning plain data,
`transaction()`, `reader()`), both as subclasses of `sql.store.SQLStore` (what they share,
in the common SQL dialect: `store/sql/`); nothing outside this package writes SQL, so stages, CLI and
web do not know which backend they run on. A URL is never taken as a file name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paperdesk import settings
from paperdesk.errors import StoreError
from paperdesk.store.base import PutResult, Reject, Store
from paperdesk.store.sql.store import SQLStore
from paperdesk.store.sqlite import SQLiteStore

__all__ = [
    "PutResult",
    "change_marker",
    "files_base",
    "Reject",
    "SQLStore",
    "SQLiteStore",
    "Store",
    "default_db_path",
    "is_postgres",
    "open_store",
    "payload_lookup",
    "store_path",
    "target_text",
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


def target_text(target: str | Path) -> str:
    """A path or URL as text, with the `//` a path type took out of a URL put back."""
    text = str(target)
    mangled = _MANGLED.match(text)
    if mangled:  # `sqlite:/abs/path` was `sqlite:///abs/path`; `postgresql:/h/db` was `//h/db`
        scheme = mangled.group(1)
        rest = text[mangled.end() - 1 :] if scheme.lower() == "sqlite" else text[mangled.end() :]
        text = f"{scheme}://{rest}"
    return text


def is_postgres(target: str | Path) -> bool:
    return target_text(target).lower().startswith(("postgresql://", "postgres://"))


def store_path(target: str | Path) -> str:
    """The SQLite file a target names (`sqlite:///PATH` or a path); raises StoreError for
    a URL of any other backend."""
    text = target_text(target)
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
        raise StoreError(f"{scheme}://… names a PostgreSQL store, not a SQLite file")
    raise StoreError(
        f"unknown database URL scheme {scheme!r} (use a SQLite file path or postgresql://…)"
    )


def files_base(target: str | Path) -> Path:
    """The path a store's own files are named after (the search index is this plus
    `.index`, the web signing key plus `.secret`): a SQLite store's file; for a PostgreSQL
    store `$PAPERDESK_DATA_DIR/HOST-PORT-DB` (default `$XDG_DATA_HOME/paperdesk/…`)."""
    text = target_text(target)
    if is_postgres(text):
        from paperdesk.store.postgres import files_base as pg_files

        return Path(pg_files(text))
    return Path(store_path(text))


def change_marker(target: str | Path) -> Callable[[], tuple[int, ...]]:
    """A cheap callable whose value changes whenever a write is committed to the store
    (page caches compare it): the SQLite file's and its WAL's modification times and sizes
    (two `stat` calls: every commit touches the WAL); PostgreSQL's WAL position."""
    text = target_text(target)
    if is_postgres(text):
        from paperdesk.store.postgres import change_marker as pg_marker

        return pg_marker(text)
    path = Path(store_path(text))
    files = [path, path.with_name(path.name + "-wal")]

    def marker() -> tuple[int, ...]:
        out: list[int] = []
        for f in files:
            try:
                st = os.stat(f)
                out += [st.st_mtime_ns, st.st_size]
            except FileNotFoundError:
                out += [0, 0]
        return tuple(out)

    return marker


def payload_lookup(target: str | Path) -> Any:
    """An object whose `known(pairs)` answers `Store.known_payloads` on a read-only
    connection of its own, and `close()`: for an ingest worker process, which is handed
    the store's `target` (a SQLite path or a PostgreSQL URL), not the store."""
    text = target_text(target)
    if is_postgres(text):
        from paperdesk.store.postgres import PGStore

        return PGStore(text, readonly=True, migrate=False)
    from paperdesk.store.sqlite.records import PayloadLookup

    return PayloadLookup(store_path(text))


def open_store(target: str | Path | None = None, *, migrate: bool = True) -> SQLStore:
    """Open (creating and migrating as needed) the store a path or URL names: a
    `SQLiteStore` or a `PGStore`, the two subclasses of `sql.store.SQLStore`."""
    text = target_text(target or default_db_path())
    if is_postgres(text):
        from paperdesk.store.postgres import PGStore  # psycopg only when asked for

        return PGStore(text, migrate=migrate)
    return SQLiteStore(store_path(text))
