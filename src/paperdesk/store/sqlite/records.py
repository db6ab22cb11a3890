"""The records on SQLite: the `paperdesk_pack_ids` aggregate, multi-row inserts and payload
look-ups by key (the row format itself is `store/rows.py`)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from paperdesk.store.rows import pack_ids
from paperdesk.store.sql.connection import known_payloads


class PackIds:
    """SQL aggregate `paperdesk_pack_ids(id)`: the group's ids as `pack_ids` packs them."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def step(self, value: int) -> None:
        self.ids.append(value)

    def finalize(self) -> bytes:
        return pack_ids(self.ids)


class PayloadLookup:
    """`known_payloads` on a read-only connection of its own: what an ingest worker
    process asks before preparing a chunk (`paperdesk.store.payload_lookup`)."""

    def __init__(self, path: str):
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        # Each chunk looks up ~2,000 record keys and their payloads: keep the index pages it
        # reads cached instead of re-reading them with the default 2 MB cache.
        self.conn.execute("PRAGMA cache_size=-32768")

    def known(self, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        return known_payloads(self.conn, pairs)

    def close(self) -> None:
        self.conn.close()


# Rows a multi-row INSERT statement of `insert_rows` writes.
ROWS_PER_INSERT = 64


def insert_rows(conn: sqlite3.Connection, head: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """`head` (`INSERT OR FAIL INTO t (columns)`) for every row, `ROWS_PER_INSERT` rows a
    statement (`VALUES (…), (…), …`).

    Why: each run of a statement has a fixed cost (its cursors opened and closed, the
    program started and halted, the sqlite3 module's reset), about as much as the write
    of a small row: a category row one a statement took ~2 µs. `OR FAIL`, because with
    the default ABORT SQLite keeps a statement journal for a multi-row INSERT (to undo
    its own earlier rows on a conflict); the writer undoes its whole transaction on any
    error instead. Fast only in `rows_transaction` (see there)."""
    if not rows:
        return
    width = len(rows[0])
    one = "(" + ", ".join("?" * width) + ")"
    n = len(rows)
    full = n - n % ROWS_PER_INSERT
    chain = itertools.chain.from_iterable
    if full:
        conn.executemany(
            f"{head} VALUES {', '.join([one] * ROWS_PER_INSERT)}",
            [list(chain(rows[i : i + ROWS_PER_INSERT])) for i in range(0, full, ROWS_PER_INSERT)],
        )
    if full < n:
        conn.execute(f"{head} VALUES {', '.join([one] * (n - full))}", list(chain(rows[full:])))


