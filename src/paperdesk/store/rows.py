"""The record-row format both backends write: a record encoded for the `records` and
`payloads` tables as a plain tuple (`Row`, `prepare_row`; cheap to pass between processes),
the plan of one `put_rows` batch (`plan_rows`), payload digests and packed id lists.
Backend-neutral: no SQL here (the JSON document itself is `codec.py`'s)."""

from __future__ import annotations

import hashlib
import re
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


def split_key(key: str) -> tuple[str, str]:
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
