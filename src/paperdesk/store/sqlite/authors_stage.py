"""SQL for a resolve run's reads of changed records and its staged signature rows.

A run reads the records changed since its checkpoint (`changed_records`), stages its new
signature rows in a temp table (or, in a full run's streaming workers, one file each)
until their profile ids are known, and commits them into `author_signatures` with the
name, block and member counts of `paperdesk.store.authors`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from paperdesk.store.authors import (
    _SIG_COLS,
    _chunks,
    _count,
    _counted_rows,
    _marks,
    _members_rebuild,
    _names_rebuild,
)

# -- staging: a run's new signature rows wait in a temp table for their profile ids --------


def stage_reset(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS author_stage (sig_id TEXT, record_key TEXT,"
        " position INTEGER, name TEXT, name_folded TEXT, block TEXT, given TEXT, unit INTEGER)"
    )
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS author_stage_map"
        " (unit INTEGER PRIMARY KEY, author_id TEXT NOT NULL)"
    )
    conn.execute("DELETE FROM author_stage")
    conn.execute("DELETE FROM author_stage_map")


def stage_put(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    conn.executemany("INSERT INTO author_stage VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


_STAGED = "sig_id IN (SELECT sig_id FROM author_stage)"


def stage_commit(
    conn: sqlite3.Connection, unit_author: Iterable[tuple[int, str]], *, bulk: bool = False
) -> None:
    """Write the staged rows to `author_signatures`, each with its unit's profile id, and
    count them in `author_names`, `author_blocks` and `author_members` (less any stored
    row they replace). `bulk` (a full run into an emptied table): rows go in key order,
    so the key indexes grow at their ends, and the count tables and member lists are
    built once from the whole table by sorting — much cheaper than millions of random
    inserts."""
    conn.executemany("INSERT INTO author_stage_map VALUES (?, ?)", unit_author)
    if not bulk:
        _count(conn, _counted_rows(conn, _STAGED, ()), -1)
    conn.execute(
        f"INSERT OR REPLACE INTO author_signatures ({_SIG_COLS})"  # noqa: S608
        " SELECT s.sig_id, s.record_key, s.position, s.name, s.name_folded, s.block,"
        " m.author_id, s.given FROM author_stage s JOIN author_stage_map m ON m.unit = s.unit"
        + (" ORDER BY s.record_key, s.position" if bulk else "")
    )
    if bulk:
        _names_rebuild(conn)
        _members_rebuild(conn)
    else:
        _count(conn, _counted_rows(conn, _STAGED, ()), 1)
    conn.execute("DELETE FROM author_stage")
    conn.execute("DELETE FROM author_stage_map")


# -- a full run's streaming workers: each reads its share, stages rows in its own file -------


def reader(path: str) -> sqlite3.Connection:
    """A read-only connection of a worker process to the store file (a forked worker must
    not use its parent's connection)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)


def records_of_part(
    conn: sqlite3.Connection, since: int, part: int, parts: int
) -> Iterator[tuple[int, int, str, bytes, str | None]]:
    """(seq, rowid, key, stored data, work id `W<n>` or None) of the records changed after
    `since` whose work (or, for a record in no work, its rowid) falls in `part` of
    `parts`, in seq order: the records of one work always land in one part."""
    cur = conn.execute(
        "SELECT r.seq, r.rowid, r.key, r.data, w.work_id FROM records r"
        " LEFT JOIN work_records w ON w.record_key = r.key"
        " WHERE r.seq > ? AND COALESCE(w.work_id, r.rowid) % ? = ? ORDER BY r.seq, r.rowid",
        (since, parts, part),
    )
    while rows := cur.fetchmany(1000):
        for seq, rowid, key, data, work in rows:
            yield seq, rowid, key, data, None if work is None else f"W{work}"


_STAGE_COLS = (
    "sig_id TEXT, record_key TEXT, position INTEGER, name TEXT, name_folded TEXT,"
    " block TEXT, given TEXT, unit INTEGER"
)


def stage_file(path: str) -> sqlite3.Connection:
    """A worker's own staging file (throw-away: no journal, no fsync), open for writing."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute(f"CREATE TABLE author_stage ({_STAGE_COLS})")
    conn.execute("BEGIN")
    return conn


def stage_file_put(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    conn.executemany("INSERT INTO author_stage VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def stage_file_done(conn: sqlite3.Connection) -> None:
    conn.execute("COMMIT")
    conn.close()


def stage_attach(conn: sqlite3.Connection, paths: Sequence[str]) -> None:
    """Attach the workers' staging files as `stage0`, `stage1`, … (outside a transaction:
    SQLite cannot attach inside one). Any left attached by a run that failed go first."""
    attached = {r[1] for r in conn.execute("PRAGMA database_list")}
    for name in sorted(a for a in attached if a.startswith("stage")):
        conn.execute("DETACH DATABASE " + name)
    for k, path in enumerate(paths):
        conn.execute(f"ATTACH DATABASE ? AS stage{k}", (path,))


def stage_detach(conn: sqlite3.Connection, n: int) -> None:
    for k in range(n):
        conn.execute(f"DETACH DATABASE stage{k}")


def stage_map_parts(conn: sqlite3.Connection, unit_author: Iterable[tuple[int, int, str]]) -> None:
    """(worker, local unit, profile id) of every unit staged in the workers' files."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS author_stage_parts"
        " (part INTEGER, unit INTEGER, author_id TEXT NOT NULL, PRIMARY KEY (part, unit))"
    )
    conn.execute("DELETE FROM author_stage_parts")
    conn.executemany("INSERT INTO author_stage_parts VALUES (?, ?, ?)", unit_author)


def stage_commit_parts(conn: sqlite3.Connection, parts: int) -> None:
    """`stage_commit(bulk=True)` for rows staged in the attached worker files: each row
    takes the profile id of its (worker, local unit). SQLite may sort with a helper
    thread meanwhile (`PRAGMA threads`): the sorts of five million rows dominate."""
    threads = int(conn.execute("PRAGMA threads").fetchone()[0])
    conn.execute("PRAGMA threads = 2")
    union = " UNION ALL ".join(
        f"SELECT {k} AS part, * FROM stage{k}.author_stage" for k in range(parts)  # noqa: S608
    )
    conn.execute(
        f"INSERT OR REPLACE INTO author_signatures ({_SIG_COLS})"  # noqa: S608
        " SELECT s.sig_id, s.record_key, s.position, s.name, s.name_folded, s.block,"
        f" m.author_id, s.given FROM ({union}) s"
        " JOIN author_stage_parts m ON m.part = s.part AND m.unit = s.unit"
        " ORDER BY s.record_key, s.position"
    )
    _names_rebuild(conn)
    _members_rebuild(conn)
    conn.execute("DELETE FROM author_stage_parts")
    conn.execute(f"PRAGMA threads = {threads}")


def count_changed(conn: sqlite3.Connection, since: int) -> int:
    """How many records changed after `since` (from the `seq` index alone)."""
    return int(conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (since,)).fetchone()[0])


def changed_records(conn: sqlite3.Connection, since: int) -> Iterator[tuple[int, str, bytes]]:
    """(seq, key, stored data) for records changed after `since`, in seq order —
    `SQLiteStore.iter_changed` without building `SourceRecord`s, which the author stage
    only needs for a few of a million records (decode them with `decode_record`)."""
    cur = conn.execute(
        "SELECT seq, key, data FROM records WHERE seq > ? ORDER BY seq, rowid", (since,)
    )
    while rows := cur.fetchmany(1000):
        yield from rows


def all_works(conn: sqlite3.Connection) -> dict[str, str]:
    return {k: f"W{w}" for k, w in conn.execute("SELECT record_key, work_id FROM work_records")}


def records_of_works(conn: sqlite3.Connection, works: Iterable[str]) -> dict[str, str]:
    """Record key → work id for every record of these works (ids as `W<n>`)."""
    ids = sorted({int(w[1:]) for w in works if w.startswith("W")})
    out: dict[str, str] = {}
    for chunk in _chunks(ids):
        out.update(
            (k, f"W{w}")
            for k, w in conn.execute(
                "SELECT record_key, work_id FROM work_records"  # noqa: S608
                f" WHERE work_id IN ({_marks(len(chunk))})",
                list(chunk),
            )
        )
    return out
