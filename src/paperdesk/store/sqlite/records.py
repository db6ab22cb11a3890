"""The `records` table's row format: records encoded for their `data` column and decoded
back, rows ready for the writer, multi-row inserts, payload look-ups by key."""

from __future__ import annotations

import hashlib
import itertools
import re
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperdesk.errors import NotFoundError, StoreError
from paperdesk.merge import merge_records
from paperdesk.model import SourceRecord
from paperdesk.store.base import PutResult
from paperdesk.store.codec import decode_record, encode_record


def payload_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def pack_ids(ids: Iterable[int]) -> bytes:
    """Integer ids (signature rows of a profile, see migration 038) sorted and packed as
    unsigned 32-bit little-endian numbers: 4 bytes an id, a fifth of an index entry."""
    arr = array("I", sorted(ids))
    if arr.itemsize != 4:  # pragma: no cover - no such platform in use
        raise StoreError("pack_ids needs 4-byte unsigned ints")
    if sys.byteorder == "big":  # pragma: no cover
        arr.byteswap()
    return arr.tobytes()


def unpack_ids(blob: bytes) -> list[int]:
    arr = array("I")
    arr.frombytes(blob)
    if sys.byteorder == "big":  # pragma: no cover
        arr.byteswap()
    return arr.tolist()


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


# A record ready for the `records` and `payloads` tables, as a plain tuple:
# (key, source, source_id, data, title, year, doi, arxiv_id, feed_date, submitted,
#  latest_version, sha256, raw_format, raw, categories, source day)
Row = tuple[Any, ...]
ROW_DIGEST, ROW_FORMAT, ROW_RAW, ROW_CATEGORIES, ROW_DAY = 11, 12, 13, 14, 15


def source_day(rec: SourceRecord) -> str | None:
    """The day the source says a record appeared: its feed day, else its publication day,
    else its submission day (only a whole `YYYY-MM-DD`; a year or month says no day).
    `records.appeared` is this, else the day the store first received the record
    (migration 043 backfills the same rule)."""
    for d in (rec.feed_date, rec.published, rec.submitted):
        if d and _WHOLE_DAY.match(d):
            return d[:10]
    return None


_WHOLE_DAY = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])")


def prepare_row(rec: SourceRecord, digest: str) -> Row:
    """Encode a (normalised) record for `put_rows`."""
    return (
        rec.key, rec.source, rec.source_id, encode_record(rec), rec.title, rec.year, rec.doi,
        rec.arxiv_id, rec.feed_date, rec.submitted, rec.latest_version,
        digest, rec.raw_format, rec.raw, tuple(rec.categories), source_day(rec),
    )


def _row_record(row: Row) -> SourceRecord:
    return decode_record(row[3], row[ROW_RAW])


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


def _split_key(key: str) -> tuple[str, str]:
    source, sep, sid = key.partition(":")
    if not sep or not source or not sid:
        raise NotFoundError(f"{key!r} is not a record key of the form SOURCE:ID")
    return source, sid


@dataclass
class RowPlan:
    """What one `put_rows` batch writes, decided before any write (both backends share
    this; each writes it its own way: multi-row INSERTs on SQLite, COPY on PostgreSQL)."""

    result: PutResult = field(default_factory=PutResult)
    fresh: dict[str, tuple[int, Row]] = field(default_factory=dict)
    """Records new in this batch: key → (rowid given, row)."""
    changed: dict[int, SourceRecord] = field(default_factory=dict)
    """Rows stored before and updated in this batch, merged."""
    stored_of: dict[int, SourceRecord] = field(default_factory=dict)
    """... and as they were stored (their category rows go)."""
    payloads: list[tuple[Any, ...]] = field(default_factory=list)
    """(record rowid, sha256, format, origin, received_at, body)."""

    def category_rows(self) -> list[tuple[str, str, int, int]]:
        """(code, feed day, record rowid, position) of the records inserted or changed."""
        cats = [
            (rowid, row[ROW_CATEGORIES], row[8] or "") for rowid, row in self.fresh.values()
        ] + [(rowid, r.categories, r.feed_date or "") for rowid, r in self.changed.items()]
        return [(code, day, rowid, i) for rowid, codes, day in cats for i, code in enumerate(codes)]

    def stale_category_rows(self) -> list[tuple[str, str, int, int]]:
        """The category rows of the changed records as they were stored (to delete)."""
        return [
            (code, r.feed_date or "", rowid, i)
            for rowid, r in self.stored_of.items()
            for i, code in enumerate(r.categories)
        ]


def plan_rows(
    rows: Sequence[Row],
    existing: dict[str, tuple[int, SourceRecord]],
    known: set[tuple[str, str]],
    next_rowid: int,
    *,
    origin: str,
    stamp: str,
) -> RowPlan:
    """Decide a batch: `existing` holds the stored records among its keys, `known` the
    (key, payload sha256) pairs stored (grown here: a payload twice in one batch), new
    records get rowids from `next_rowid` on. A key already stored is merged with
    `merge_records`; a record whose merge changes nothing counts as unchanged."""
    plan = RowPlan()
    result = plan.result
    fresh, changed, stored_of = plan.fresh, plan.changed, plan.stored_of
    for row in rows:
        key, digest = row[0], row[ROW_DIGEST]
        if (key, digest) in known:
            result.unchanged += 1
            continue
        known.add((key, digest))
        if key in fresh:  # a second version of a record new in this batch
            rowid, first = fresh[key]
            merged = merge_records(_row_record(first), _row_record(row))
            fresh[key] = (rowid, prepare_row(merged, first[ROW_DIGEST]))
            result.updated += 1
        elif key in existing:
            rowid, stored = existing[key]
            old = changed.get(rowid, stored)
            merged = merge_records(old, _row_record(row))
            if encode_record(merged) != encode_record(old):
                changed[rowid] = merged
                stored_of[rowid] = stored
                result.updated += 1
                result.keys.append(key)
            else:
                result.unchanged += 1
        else:
            rowid = next_rowid
            next_rowid += 1
            fresh[key] = (rowid, row)
            result.inserted += 1
            result.keys.append(key)
        plan.payloads.append((rowid, digest, row[ROW_FORMAT], origin, stamp, row[ROW_RAW]))
    return plan


def record_rows(plan: RowPlan, stamp: str, seq: int) -> list[tuple[Any, ...]]:
    """The `records` rows of the records new in `plan`: (rowid, key, source, source_id,
    data, title, year, doi, arxiv_id, feed_date, submitted, latest_version, created_at,
    modified_at, seq, appeared)."""
    return [
        (rowid, *row[:ROW_DIGEST], stamp, stamp, seq, row[ROW_DAY] or stamp[:10])
        for rowid, row in plan.fresh.values()
    ]


def update_rows(plan: RowPlan, stamp: str, seq: int) -> list[tuple[Any, ...]]:
    """(data, title, year, doi, arxiv_id, feed_date, submitted, latest_version,
    modified_at, seq, appeared or None, rowid) of the changed records."""
    return [
        (*prepare_row(r, "")[3:ROW_DIGEST], stamp, seq, source_day(r), rowid)
        for rowid, r in plan.changed.items()
    ]
