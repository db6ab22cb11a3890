"""The SQLite backend: every `sqlite3` import and all SQL of the store live in this package.

`connection` opens connections (pragmas, transactions, migrations), `records` the multi-row
inserts and payload look-ups, `store` the `SQLiteStore` (the writer and its repositories).
The record-row format is backend-neutral (`store/rows.py`, `store/codec.py`); its names are
re-exported here for the tests and benchmarks that still import them from this package.
"""

from paperdesk.store.base import now
from paperdesk.store.codec import decode_record, encode_record, restore_derived_text
from paperdesk.store.rows import (
    ROW_CATEGORIES,
    ROW_DIGEST,
    ROW_FORMAT,
    ROW_RAW,
    Row,
    pack_ids,
    payload_hash,
    prepare_row,
    unpack_ids,
)
from paperdesk.store.sqlite.connection import CACHE_KIB
from paperdesk.store.sqlite.records import ROWS_PER_INSERT, insert_rows, known_payloads
from paperdesk.store.sqlite.store import SQLiteStore

__all__ = [
    "CACHE_KIB",
    "ROWS_PER_INSERT",
    "ROW_CATEGORIES",
    "ROW_DIGEST",
    "ROW_FORMAT",
    "ROW_RAW",
    "Row",
    "SQLiteStore",
    "decode_record",
    "encode_record",
    "insert_rows",
    "known_payloads",
    "now",
    "pack_ids",
    "payload_hash",
    "prepare_row",
    "restore_derived_text",
    "unpack_ids",
]
