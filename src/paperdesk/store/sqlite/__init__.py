"""The SQLite backend: every `sqlite3` import and all SQL of the store live in this package.

`connection` opens connections (pragmas, transactions, migrations), `records` is the
records table's row format, `store` the `SQLiteStore` (the writer and its repositories).
The names re-exported here are what other packages import.
"""

from paperdesk.store.base import now
from paperdesk.store.codec import decode_record, encode_record, restore_derived_text
from paperdesk.store.sqlite.connection import CACHE_KIB
from paperdesk.store.sqlite.records import (
    ROW_CATEGORIES,
    ROW_DIGEST,
    ROW_FORMAT,
    ROW_RAW,
    ROWS_PER_INSERT,
    Row,
    insert_rows,
    known_payloads,
    pack_ids,
    payload_hash,
    prepare_row,
    unpack_ids,
)
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
