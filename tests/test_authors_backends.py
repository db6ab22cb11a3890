"""The author stage gives the same profiles on SQLite and on PostgreSQL.

The differential check of the author repository's two backends: the committed feed slice
through a full run (SQLite streaming it in worker processes with per-worker stage files,
PostgreSQL reading it in one process), an incremental day solved in forked workers, and a
merge and a split, must leave the same signatures,
profile rows, member lists, name and block counts, samples and redirects, and answer the
same look-ups and pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import FEED_HEAD, FEED_SAMPLE, shared_file
from paperdesk import pipeline
from paperdesk.ingest import ingest_paths
from paperdesk.resolve import authors_context, authors_stream
from paperdesk.resolve.authors_curate import merge_authors, split_author
from paperdesk.resolve.authors_profiles import find_authors, profile, search_authors
from paperdesk.store import open_store
from paperdesk.store.base import Store
from paperdesk.store.rows import unpack_ids


def _tables(store: Store) -> dict[str, Any]:
    """Every author table's content, by signature id rather than row id."""
    q = store.conn.execute  # type: ignore[attr-defined]  # a test reads the tables whole
    sigs = q(
        "SELECT id, sig_id, record_key, position, name, name_folded, block, author_id, given"
        " FROM author_signatures"
    ).fetchall()
    by_id = {r[0]: r[1] for r in sigs}
    return {
        "signatures": sorted(tuple(r[1:]) for r in sigs),
        "profiles": list(store.authors.profile_rows()),
        "members": sorted(
            (a, sorted(by_id[i] for i in unpack_ids(bytes(b))))
            for a, b in q("SELECT author_id, ids FROM author_members").fetchall()
        ),
        "names": store.authors.counted_rows("author_names"),
        "blocks": store.authors.counted_rows("author_blocks"),
        "samples": sorted(
            (s, bytes(m), bytes(k), bytes(v))
            for s, m, k, v in q("SELECT sig_id, meta, keys, vec FROM author_samples").fetchall()
        ),
        "redirects": sorted(tuple(r) for r in q("SELECT old_id, new_id FROM author_redirects")),
        "curations": [(c.action, c.groups, c.apart, c.args) for c in store.authors.list_curations()],
    }


def _stats(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "seconds"}


@pytest.mark.postgres
def test_postgresql_gives_the_author_profiles_sqlite_gives(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    day_lines = shared_file(FEED_SAMPLE).read_bytes().splitlines(keepends=True)[:800]
    day_file = tmp_path / "day.jsonl"
    day_file.write_bytes(b"".join(day_lines))
    monkeypatch.setattr(authors_stream, "STREAM_MIN", 0)  # SQLite's full run in workers
    monkeypatch.setattr(authors_context, "DAY_MIN", 1)  # and both days in workers
    seen: list[dict[str, Any]] = []
    for target in (str(tmp_path / "same.db"), pg_url):
        with open_store(target) as store:
            out: dict[str, Any] = {}
            ingest_paths(store, [shared_file(FEED_HEAD)])
            out["full"] = _stats(pipeline.run(store, ["works", "authors"])["authors"])
            out["after full"] = _tables(store)
            ingest_paths(store, [day_file])
            out["day"] = _stats(pipeline.run(store, ["works", "authors"])["authors"])
            out["after day"] = _tables(store)
            by_block: dict[str, list[Any]] = {}
            for p in store.authors.profile_rows():
                by_block.setdefault(p.block, []).append(p)
            block = max(by_block, key=lambda b: (len(by_block[b]), b))
            a, b = sorted(by_block[block], key=lambda p: (-p.n_records, p.author_id))[:2]
            merged = merge_authors(store, a.author_id, b.author_id, who="carol")["author_id"]
            assert merged is not None
            keys = sorted({s.record_key for s in store.authors.signatures_of_author(merged)})
            out["split"] = split_author(store, merged, keys[:1], who="carol")
            out["after curations"] = _tables(store)
            page = profile(store, merged)
            for c in page["curations"]:
                c.pop("at")  # when it was made
            out["page"] = page
            out["find"] = find_authors(store, a.name)
            out["search"] = search_authors(store, block.split(" ")[0])
            seen.append(out)
    lite, pg = seen
    assert lite["day"]["signatures"] > 0 and lite["full"]["profiles_total"] > 1000
    for key in lite:
        assert pg[key] == lite[key], key



_PG_DELTAS = (
    "CREATE TABLE author_profiles_delta (LIKE author_profiles INCLUDING ALL)",
    "CREATE TABLE author_members_delta (LIKE author_members INCLUDING ALL)",
    "CREATE TABLE author_names_delta (LIKE author_names INCLUDING ALL)",
    "CREATE TABLE author_blocks_delta (LIKE author_blocks INCLUDING ALL)",
)


@pytest.mark.postgres
def test_postgresql_store_with_day_deltas_folds_them_on_open(tmp_path: Path, pg_url: str) -> None:
    """PostgreSQL's migration 101 (MERGE) folds a day's deltas as SQLite's does: a store
    rewritten into migration 041's layout (a third of its profiles in the delta tables,
    half of those there alone; counts split, some below zero) reads, once reopened, exactly
    as the same store never rewritten (in a SQLite file)."""
    lite = str(tmp_path / "same.db")
    for target in (lite, pg_url):
        with open_store(target) as store:
            ingest_paths(store, [shared_file(FEED_HEAD)])
            pipeline.run(store, ["works", "authors"])
    with open_store(pg_url) as store:
        ids = sorted(store.authors.profile_ids())[::3]
        half = ids[: len(ids) // 2]
        q = store.conn.raw  # type: ignore[attr-defined]  # a test rewrites the tables (psycopg %s)
        with store.transaction():
            for sql in _PG_DELTAS:
                q(sql)
            for t in ("author_profiles", "author_members"):
                q(f"INSERT INTO {t}_delta SELECT * FROM {t} WHERE author_id = ANY(%s)", (ids,))  # noqa: S608
                q(f"DELETE FROM {t} WHERE author_id = ANY(%s)", (half,))  # noqa: S608
            for t, col in (("author_names", "name_folded"), ("author_blocks", "block")):
                q(f"INSERT INTO {t}_delta SELECT * FROM {t} WHERE author_id = ANY(%s)", (half,))  # noqa: S608
                q(f"DELETE FROM {t} WHERE author_id = ANY(%s)", (half,))  # noqa: S608
                rest = ids[len(half):]
                q(f"UPDATE {t} SET n = n + 1 WHERE author_id = ANY(%s)", (rest,))  # noqa: S608
                q(f"INSERT INTO {t}_delta SELECT {col}, author_id, -1 FROM {t} WHERE author_id = ANY(%s)", (rest,))  # noqa: S608
            q("DELETE FROM migrations WHERE name = '101_drop_author_deltas.sql'")
        assert len(half) > 50
    with open_store(pg_url) as pg, open_store(lite) as want:
        assert _tables(pg) == _tables(want)
