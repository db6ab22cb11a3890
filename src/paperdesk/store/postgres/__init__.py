"""The PostgreSQL backend (psycopg 3 and its pool): `PGStore`, opened by
`paperdesk.store.open_store("postgresql://…")`. Every psycopg import is in this package.

`dialect` rewrites the store's shared SQL for PostgreSQL, `connection` holds the pool and
the connection facade, `repositories` and `store` override what PostgreSQL spells
differently, `schema/` holds its migrations (numbered as SQLite's; see 080_base.sql).
"""

from paperdesk.store.postgres.store import PGStore, change_marker, data_dir, files_base

__all__ = ["PGStore", "change_marker", "data_dir", "files_base"]
