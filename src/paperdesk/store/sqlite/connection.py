"""The SQLite connection: opening it with the store's pragmas, transactions, migrations.

Every `sqlite3.connect` of the package is here (`connect`, `connect_readonly`), so every
connection gets the same settings.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import cast

from paperdesk.errors import StoreError
from paperdesk.store.sql.connection import Tx

# CPython 3.11's sqlite3 looks every parameter that is not an int, float, str or bytearray up
# in its adapter registry before binding it; with nothing registered for `bytes` or `None`
# that look-up ends in an AttributeError raised and cleared (from `type_getattro`), ~0.5-1 µs
# a parameter, and every record binds two blobs (its JSON and its raw payload) and a few
# NULLs. Identity adapters turn the look-up into a dict hit; the values bind exactly as
# before (a blob, a NULL). The writer on feed rows: 161k -> 149k instructions a record.
sqlite3.register_adapter(bytes, bytes.__bytes__)
sqlite3.register_adapter(type(None), cast("Callable[[None], None]", {}.get))  # C, gives None

PAGE_SIZE = 16384
# A bulk write starts the WAL over once it is this large (see `restart_wal_if_large`), waiting
# at most WAL_RESTART_WAIT_MS for readers and checkpoints in progress.
WAL_RESTART_BYTES = 512 << 20
WAL_RESTART_WAIT_MS = 2000
BUSY_TIMEOUT_MS = 30000
# The page cache of a connection, KiB (SQLite's default is 2 MB). Folding the author deltas
# needs it: its updates of `author_profiles_fit` come in id order, at random places of the
# index, and with 2 MB each dirty page was spilled to the WAL and read back again many times.
CACHE_KIB = 65536


def connect_readonly(path: str) -> sqlite3.Connection:
    """A read-only connection (`mode=ro`: it can never write, nor create the file)."""
    try:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {path} to read: {exc}") from exc
    return conn


class _Tx(Tx):
    """`sql.connection.Tx` on SQLite, with `foreign_keys=False`: SQLite does not check this
    transaction's references (the pragma can change only outside a transaction; it is back
    on when the transaction ends, however it ends)."""

    def __init__(self, conn: sqlite3.Connection, *, foreign_keys: bool = True):
        super().__init__(conn)
        self.foreign_keys = foreign_keys

    def _begin(self) -> None:
        if not self.foreign_keys:
            self.conn.execute("PRAGMA foreign_keys=OFF")
        try:
            super()._begin()
        except BaseException:
            self._ended()
            raise

    def _ended(self) -> None:
        if not self.foreign_keys:
            self.conn.execute("PRAGMA foreign_keys=ON")


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (sqlite3.complete_statement knows quoting)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in buf.splitlines()
    ):
        out.append(buf.strip())
    return out
