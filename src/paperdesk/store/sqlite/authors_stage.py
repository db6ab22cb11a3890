"""A resolve run's staged signature rows, in SQLite.

A run reads the records changed since its checkpoint (`changed_records`, `sql/authors.py`),
stages its new signature rows in a temp table of the writer's connection (or, in a full
run's streaming workers, one file each: `open_parts`) until their profile ids are known, and
commits them into `author_signatures` with the name, block and member counts of
`sql/authors_tables.py`.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperdesk.store.authors_base import PartStage
from paperdesk.store.sql.authors import Authors
from paperdesk.store.sql.authors_tables import _SIG_COLS

_STAGED = "sig_id IN (SELECT sig_id FROM author_stage)"

_STAGE_COLS = (
    "sig_id TEXT, record_key TEXT, position INTEGER, name TEXT, name_folded TEXT,"
    " block TEXT, given TEXT, unit INTEGER"
)


@dataclass
class FileParts:
    """A full run's stage files, one per worker, in a temporary folder beside the store."""

    parts: int
    tmp: tempfile.TemporaryDirectory[str] = field(repr=False)

    def path(self, k: int) -> str:
        return str(Path(self.tmp.name) / f"stage{k}.db")

    def close(self) -> None:
        self.tmp.cleanup()


def _files(stage: PartStage) -> FileParts:
    assert isinstance(stage, FileParts), "parts of this repository's own `open_parts`"
    return stage


class PartWriter:
    """A worker's own staging file (throw-away: no journal, no fsync), open for writing."""

    def __init__(self, path: str):
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = OFF")
        self.conn.execute("PRAGMA synchronous = OFF")
        self.conn.execute(f"CREATE TABLE author_stage ({_STAGE_COLS})")
        self.conn.execute("BEGIN")

    def put(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self.conn.executemany("INSERT INTO author_stage VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def done(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()


class AuthorStage(Authors):
    """Staging of a run's new signature rows: a temp table of the writer's connection, or
    a full run's worker files attached to it."""

    streams_parts: bool = True
    """A full run may stage in worker processes, one file each (`open_parts`)."""

    _SIG_INSERT = "INSERT OR REPLACE INTO author_signatures"

    # -- staging: a run's new signature rows wait in a temp table for their profile ids --
    def stage_reset(self) -> None:
        self.conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS author_stage ({_STAGE_COLS})")
        self.conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS author_stage_map"
            " (unit INTEGER PRIMARY KEY, author_id TEXT NOT NULL)"
        )
        self.conn.execute("DELETE FROM author_stage")
        self.conn.execute("DELETE FROM author_stage_map")

    def stage_put(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self.conn.executemany("INSERT INTO author_stage VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def stage_commit(self, unit_author: Iterable[tuple[int, str]], *, bulk: bool = False) -> None:
        """Write the staged rows to `author_signatures`, each with its unit's profile id,
        and count them in `author_names`, `author_blocks` and `author_members` (less any
        stored row they replace). `bulk` (a full run into an emptied table): rows go in key
        order, so the key indexes grow at their ends, and the count tables and member lists
        are built once from the whole table by sorting — much cheaper than millions of
        random inserts."""
        self.conn.executemany("INSERT INTO author_stage_map VALUES (?, ?)", unit_author)
        self._stage_write(bulk)
        self.conn.execute("DELETE FROM author_stage")
        self.conn.execute("DELETE FROM author_stage_map")

    def _stage_write(self, bulk: bool) -> None:
        """The staged rows (`author_stage`, `author_stage_map`) into the tables."""
        if not bulk:
            self._count(self._counted_rows(_STAGED, ()), -1)
        self.conn.execute(
            f"{self._SIG_INSERT} ({_SIG_COLS})"  # noqa: S608
            " SELECT s.sig_id, s.record_key, s.position, s.name, s.name_folded, s.block,"
            " m.author_id, s.given FROM author_stage s JOIN author_stage_map m ON m.unit = s.unit"
            + (" ORDER BY s.record_key, s.position" if bulk else "")
        )
        if bulk:
            self._names_rebuild()
            self._members_rebuild()
        else:
            self._count(self._counted_rows(_STAGED, ()), 1)

    # -- a full run's streaming workers: each reads its share, stages rows in a file ------
    def open_parts(self, parts: int) -> PartStage:
        """`parts` stage files in a temporary folder beside the store file."""
        where = self.conn.execute("PRAGMA database_list").fetchone()[2]
        tmp = tempfile.TemporaryDirectory(prefix="paperdesk-authors-", dir=Path(where).parent)
        return FileParts(parts, tmp)

    def part_writer(self, stage: PartStage, part: int) -> PartWriter:
        return PartWriter(_files(stage).path(part))

    def parts_attached(self, stage: PartStage) -> AbstractContextManager[None]:
        """The workers' files attached as `stage0`, `stage1`, … around the caller's write
        transaction (SQLite cannot attach inside one). Any left attached by a run that
        failed go first."""
        return self._attached(stage)

    @contextmanager
    def _attached(self, stage: PartStage) -> Iterator[None]:
        attached = {r[1] for r in self.conn.execute("PRAGMA database_list")}
        for name in sorted(a for a in attached if a.startswith("stage")):
            self.conn.execute("DETACH DATABASE " + name)
        for k in range(stage.parts):
            self.conn.execute(f"ATTACH DATABASE ? AS stage{k}", (_files(stage).path(k),))
        try:
            yield
        finally:
            if not self.conn.in_transaction:
                for k in range(stage.parts):
                    self.conn.execute(f"DETACH DATABASE stage{k}")

    def map_parts(self, unit_author: Iterable[tuple[int, int, str]]) -> None:
        """(worker, local unit, profile id) of every unit staged in the workers' files."""
        self.conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS author_stage_parts"
            " (part INTEGER, unit INTEGER, author_id TEXT NOT NULL, PRIMARY KEY (part, unit))"
        )
        self.conn.execute("DELETE FROM author_stage_parts")
        self.conn.executemany("INSERT INTO author_stage_parts VALUES (?, ?, ?)", unit_author)

    def commit_parts(self, stage: PartStage) -> None:
        """`stage_commit(bulk=True)` for rows staged in the attached worker files (after
        `map_parts`): each row takes the profile id of its (worker, local unit). SQLite may
        sort with a helper thread meanwhile (`PRAGMA threads`): the sorts of five million
        rows dominate."""
        threads = int(self.conn.execute("PRAGMA threads").fetchone()[0])
        self.conn.execute("PRAGMA threads = 2")
        union = " UNION ALL ".join(
            f"SELECT {k} AS part, * FROM stage{k}.author_stage"  # noqa: S608
            for k in range(stage.parts)
        )
        self.conn.execute(
            f"INSERT OR REPLACE INTO author_signatures ({_SIG_COLS})"  # noqa: S608
            " SELECT s.sig_id, s.record_key, s.position, s.name, s.name_folded, s.block,"
            f" m.author_id, s.given FROM ({union}) s"
            " JOIN author_stage_parts m ON m.part = s.part AND m.unit = s.unit"
            " ORDER BY s.record_key, s.position"
        )
        self._names_rebuild()
        self._members_rebuild()
        self.conn.execute("DELETE FROM author_stage_parts")
        self.conn.execute(f"PRAGMA threads = {threads}")
