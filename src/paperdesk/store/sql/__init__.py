"""What both backends share: the store's base class and the repositories whose SQL is
portable (`store`, `catalog`, `desk`, `subjects`, `search`, `works`, `authors*`).

The SQL here is written in the common dialect, the subset SQLite and PostgreSQL both run
once `postgres/dialect.py` has rewritten it mechanically (`?` placeholders, `INSERT OR
IGNORE|REPLACE|FAIL`, the `sqlite_master` probe, `IN (?, …)` lists bound as one array).
What one backend spells its own way (`json_each`, `GLOB`, two-argument `MAX`, temp tables,
`COPY`) is a method of that backend's subclass, in `store/sqlite/` or `store/postgres/`;
this package imports neither, nor `sqlite3` or `psycopg`.
"""
