"""The SQL dialect layer: the store's SQL, written for SQLite, as PostgreSQL runs it.

Why a translator and not a second copy of ~250 queries: nearly all of the store's SQL is
the portable subset (tables, joins, `ON CONFLICT … DO UPDATE`, `COALESCE`, `||`), and the
PostgreSQL schema (`schema/080_base.sql`) keeps SQLite's names, `rowid` columns included.
What differs mechanically is rewritten here, once per distinct statement (cached):

- placeholders: `?` → `%s` (and a literal `%` → `%%`, which psycopg would read as one);
- `INSERT OR IGNORE` → `INSERT … ON CONFLICT DO NOTHING`;
- `INSERT OR REPLACE` → `INSERT … ON CONFLICT (primary key) DO UPDATE SET` every other
  column (the primary keys come from the schema, see `primary_keys`);
- `INSERT OR FAIL` → `INSERT` (PostgreSQL undoes a failed statement whole anyway);
- the `sqlite_master` table-exists probe → `pg_tables`.

What does not translate mechanically (`json_each`, `json_extract`, `GLOB`, the two-argument
`MAX`, `lastrowid`, a subquery without an alias) is overridden method by method in
`postgres/repositories.py` and `postgres/store.py`; `check` refuses such SQL loudly
instead of letting PostgreSQL fail on it later with a less clear message.

`in_arrays` then binds each `IN (?, ?, …)` list of a translated statement as one array
(`= ANY(%s)`): the shared repositories ask for keys in chunks of 500–999 `?`s, which
PostgreSQL parsed and planned afresh for each chunk (~1,000 parameters; a different
statement text for every chunk length, so no plan could be prepared once and reused).
The array form is one parameter and one statement text; the planner turns an `IN` list into
the same `= ANY(array)` condition, so the rows and their order are as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from paperdesk.errors import StoreError

_INSERT_OR = re.compile(
    r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE|FAIL|ABORT)\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)",
    re.IGNORECASE,
)
_COLUMNS = re.compile(r"^\s*INSERT\s+INTO\s+[A-Za-z_][A-Za-z0-9_]*\s*\(([^)]*)\)", re.IGNORECASE)
_MASTER = re.compile(
    r"FROM\s+sqlite_master\s+WHERE\s+type\s*=\s*'table'\s+AND\s+name\s*=", re.IGNORECASE
)
_UNPORTABLE = re.compile(
    r"\bjson_each\s*\(|\bjson_extract\s*\(|\bjson_group_array\s*\(|\bGLOB\b|\bPRAGMA\b"
    r"|\bWITHOUT\s+ROWID\b|\bpaperdesk_pack_ids\s*\(|\bstrftime\s*\(",
    re.IGNORECASE,
)


def _placeholders(sql: str) -> str:
    """`?` → `%s` outside string literals and quoted names; every `%` doubled."""
    out: list[str] = []
    quote: str | None = None
    for ch in sql:
        if quote is not None:
            if ch == quote:
                quote = None
            out.append("%%" if ch == "%" else ch)
            continue
        if ch in ("'", '"'):
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


def check(sql: str) -> None:
    """Raise StoreError for SQLite-only SQL that this layer does not rewrite."""
    m = _UNPORTABLE.search(sql)
    if m:
        raise StoreError(
            f"SQLite-only SQL ({m.group(0).strip()!r}) reached the PostgreSQL backend: "
            f"{' '.join(sql.split())[:160]}"
        )


_IN_LIST = re.compile(r"\b(NOT\s+)?IN\s*\(\s*%s(?:\s*,\s*%s)*\s*\)", re.IGNORECASE)
_PARAM = re.compile(r"%%|%s")


@lru_cache(maxsize=4096)
def in_arrays(query: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A translated statement with each `IN (%s, …)` list (`NOT IN`: `<> ALL`) as one
    array parameter, and the (first parameter, count) of each list, in order; the lists
    are `()` when there is none."""
    spans: list[tuple[int, int]] = []
    out: list[str] = []
    last = 0
    for m in _IN_LIST.finditer(query):
        before = sum(1 for t in _PARAM.findall(query, 0, m.start()) if t == "%s")
        spans.append((before, m.group(0).count("%s")))
        out += [query[last : m.start()], "<> ALL(%s)" if m.group(1) else "= ANY(%s)"]
        last = m.end()
    if not spans:
        return query, ()
    return "".join(out) + query[last:], tuple(spans)


def bind_arrays(
    spans: tuple[tuple[int, int], ...], params: Sequence[Any] | None
) -> Sequence[Any] | None:
    """`params` with each list of `spans` (from `in_arrays`) gathered into one list."""
    if not spans or params is None:
        return params
    args = list(params)
    for first, n in reversed(spans):
        args[first : first + n] = [args[first : first + n]]
    return args


def make_translator(
    primary_keys: Callable[[str], tuple[str, ...]], columns: Callable[[str], tuple[str, ...]]
) -> Callable[[str], str]:
    """A cached `translate(sql)` for one database: `primary_keys(table)` and
    `columns(table)` name a table's key and all its columns, for `INSERT OR REPLACE`."""

    @lru_cache(maxsize=4096)
    def translate(sql: str) -> str:
        check(sql)
        text = sql
        tail = ""
        m = _INSERT_OR.match(text)
        if m:
            verb, table = m.group(1).upper(), m.group(2)
            text = f"INSERT INTO {table}" + text[m.end() :]
            if verb == "IGNORE":
                tail = " ON CONFLICT DO NOTHING"
            elif verb == "REPLACE":
                keys = primary_keys(table)
                cols = _COLUMNS.match(text)
                names = (
                    [c.strip() for c in cols.group(1).split(",")] if cols else list(columns(table))
                )
                if not keys or not names:
                    raise StoreError(f"INSERT OR REPLACE INTO {table}: no such table")
                rest = [c for c in names if c not in keys]
                action = (
                    "DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in rest)
                    if rest
                    else "DO NOTHING"
                )
                tail = f" ON CONFLICT ({', '.join(keys)}) {action}"
        text = _MASTER.sub(
            "FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename =",
            text,
        )
        return _placeholders(text.rstrip().rstrip(";")) + tail

    return translate
