"""The records on SQLite: the `paperdesk_pack_ids` aggregate, multi-row inserts and payload
look-ups by key (the row format itself is `store/rows.py`)."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from paperdesk.store.rows import pack_ids


class PackIds:
    """SQL aggregate `paperdesk_pack_ids(id)`: the group's ids as `pack_ids` packs them."""

    def __init__(self) -> None:
        self.ids: list[int] = []

    def step(self, value: int) -> None:
        self.ids.append(value)

    def finalize(self) -> bytes:
        return pack_ids(self.ids)


_KNOWN_SQL = (
    "SELECT r.key, p.sha256 FROM records r JOIN payloads p ON p.record_rowid = r.rowid"
    " WHERE r.key IN ({})"
)


def known_payloads(
    conn: sqlite3.Connection, pairs: Iterable[tuple[str, str]]
) -> set[tuple[str, str]]:
    """The subset of `(record key, payload sha256 hex)` pairs whose record holds that
    payload, on any connection (the ingest workers ask on read-only ones).

    Asked by key because a payload belongs to the record its parser made of it: the
    record's key is final before normalising (`finish` never changes source or id), the
    `records` key index is written nearly in order (new ids arrive in order) and a
    record's payloads sit together in `payloads_record`. A random digest index, written at
    a random place for every payload, was the one index that a bulk ingest rewrote nearly
    whole in every transaction (migration 006)."""
    wanted = set(pairs)
    keys = list({k for k, _ in wanted})
    found: set[tuple[str, str]] = set()
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        marks = ",".join("?" * len(chunk))
        sql = _KNOWN_SQL.format(marks)
        found.update(pair for pair in conn.execute(sql, chunk) if pair in wanted)
    return found


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


