"""The SQLite backend: every `sqlite3` import and the SQL only SQLite speaks live in this
package (what both backends share is `store/sql/`; the record-row format is
backend-neutral, `store/rows.py` and `store/codec.py`).

`connection` opens connections (pragmas, transactions, migrations), `records` the multi-row
inserts and payload look-ups, `store` the `SQLiteStore` (the writer and its repositories).
"""

from paperdesk.store.sqlite.records import ROWS_PER_INSERT
from paperdesk.store.sqlite.store import SQLiteStore

__all__ = ["ROWS_PER_INSERT", "SQLiteStore"]
