"""`paperdesk db copy SRC DST`: a whole store moved between backends (SQLite ↔ PostgreSQL,
or a file to a file), table by table, every row as stored.

Why every table and not only the source of truth (records, payloads, curations, users):
the derived tables are copied too, so works keep their ids (`W123` links stay valid) and
the search index files, which know works by the docnos of `search_docs`, can be copied
beside the new store instead of being rebuilt. A table one side lacks is skipped and named
in the report; the destination must hold no records. Rows are read in pages (a server-side
cursor on PostgreSQL) and written in one transaction (COPY on PostgreSQL), so a copy that
fails leaves the destination as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from paperdesk.errors import StoreError
from paperdesk.store.sql.store import SQLStore

_PAGE = 5000
_IMPLICIT_ROWID = ("work_lsh",)
"""Tables whose row order lives in SQLite's implicit rowid (a column on PostgreSQL)."""
_SKIP = ("migrations",)
"""Each side records its own migrations."""


def _is_pg(store: SQLStore) -> bool:
    return store.dialect == "postgresql"


def tables(store: SQLStore) -> dict[str, list[str]]:
    """table → its columns (a SQLite rowid table's implicit `rowid` where it matters)."""
    out: dict[str, list[str]] = {}
    if _is_pg(store):
        rows = store.conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
        ).fetchall()
        for t, c in rows:
            out.setdefault(str(t), []).append(str(c))
    else:
        names = [
            str(r[0])
            for r in store.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        for t in names:
            cols = [str(r[1]) for r in store.conn.execute(f'PRAGMA table_info("{t}")')]
            out[t] = (["rowid"] if t in _IMPLICIT_ROWID and "rowid" not in cols else []) + cols
    return {t: c for t, c in out.items() if t not in _SKIP}


def _parents(store: SQLStore, table: str) -> set[str]:
    if _is_pg(store):
        rows = store.conn.execute(
            "SELECT DISTINCT ccu.table_name FROM information_schema.table_constraints tc"
            " JOIN information_schema.constraint_column_usage ccu"
            " ON ccu.constraint_name = tc.constraint_name"
            " AND ccu.table_schema = tc.table_schema"
            " WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema()"
            " AND tc.table_name = ?",
            (table,),
        ).fetchall()
        return {str(r[0]) for r in rows} - {table}
    return {str(r[2]) for r in store.conn.execute(f'PRAGMA foreign_key_list("{table}")')} - {table}


def _in_order(store: SQLStore, names: Sequence[str]) -> list[str]:
    """`names` with every table after the tables it references (foreign keys)."""
    parents = {t: _parents(store, t) & set(names) for t in names}
    out: list[str] = []
    done: set[str] = set()
    while len(out) < len(names):
        ready = [t for t in sorted(names) if t not in done and parents[t] <= done]
        if not ready:
            raise StoreError(f"foreign keys form a cycle among {sorted(set(names) - done)}")
        out += ready
        done.update(ready)
    return out


def _read(store: SQLStore, table: str, cols: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of `table` (`cols`), a page at a time, in its key order where it has one."""
    names = ", ".join(f'"{c}"' for c in cols)
    if _is_pg(store):
        from paperdesk.store.postgres import PGStore

        assert isinstance(store, PGStore)
        with store.pg.pin(write=False) as conn, conn.cursor(name=f"copy_{table}") as cur:
            cur.itersize = _PAGE
            cur.execute(f'SELECT {names} FROM "{table}"')  # noqa: S608 (schema names)
            while rows := cur.fetchmany(_PAGE):
                yield rows
        return
    lite = store.conn.execute(f'SELECT {names} FROM "{table}"')  # noqa: S608 (schema names)
    while rows := lite.fetchmany(_PAGE):
        yield rows


def _write(dst: SQLStore, table: str, cols: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    if _is_pg(dst):
        from paperdesk.store.postgres import PGStore

        assert isinstance(dst, PGStore)
        dst.copy_rows(table, [f'"{c}"' for c in cols], rows)
        return
    marks = ", ".join("?" * len(cols))
    names = ", ".join(f'"{c}"' for c in cols)
    dst.conn.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows)  # noqa: S608


def copy_store(
    src: SQLStore,
    dst: SQLStore,
    *,
    note: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Copy every table both stores have from `src` into the empty `dst`; the report says
    each table's rows and the tables skipped. `note(table, rows)` hears each table done."""
    if dst.has_records():
        raise StoreError("the destination already holds records: copy into an empty store")
    have, want = tables(src), tables(dst)
    both = [t for t in want if t in have]
    copied: dict[str, int] = {}
    with dst.rows_transaction():
        for table in [t for t in want if t not in _SKIP]:  # derived_formats' seed rows go
            dst.conn.execute(f'DELETE FROM "{table}"')  # noqa: S608 (schema names)
        for table in _in_order(dst, both):
            cols = [c for c in want[table] if c in have[table]]
            n = 0
            for rows in _read(src, table, cols):
                _write(dst, table, cols, rows)
                n += len(rows)
            copied[table] = n
            if note is not None:
                note(table, n)
        if _is_pg(dst):
            from paperdesk.store.postgres import PGStore

            assert isinstance(dst, PGStore)
            dst.fix_identities()
    dst.refresh_statistics()
    files = _copy_files(Path(src.path), Path(dst.path))
    return {
        "tables": copied,
        "only_in_source": sorted(set(have) - set(want)),
        "only_in_destination": sorted(set(want) - set(have)),
        "files": files,
    }


def _copy_files(src: Path, dst: Path) -> list[str]:
    """The search index (`BASE.index/`) beside the new store, if the source has one."""
    index, target = Path(str(src) + ".index"), Path(str(dst) + ".index")
    if not index.is_dir():
        return []
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(index, target)
    return [str(target)]
