"""Subject pages' "newest in these codes" on real daily-feed records: the per-code walk
(`store.catalog.recent_in`) must give exactly what one sorted query over all codes gives."""

from __future__ import annotations

import sqlite3
from itertools import islice
from pathlib import Path

import pytest

from conftest import open_feed
from paperdesk.ingest import ingest_paths
from paperdesk.store import open_store
from paperdesk.store.sql import catalog as q


@pytest.fixture(scope="module")
def feed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("recent")
    src = d / "feed.jsonl"
    with open_feed() as f:
        src.write_bytes(b"".join(islice(f, 4000)))
    db = d / "feed.db"
    with open_store(db) as store:
        ingest_paths(store, [src])
    return db


def _reference(
    conn: sqlite3.Connection, codes: list[str], prefix: str | None, limit: int
) -> list[str]:
    """The one-query formulation (sort every matching row), as record keys."""
    if prefix:
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        where, args = "rc.code >= ? AND rc.code < ?", [prefix, end]
    else:
        where, args = f"rc.code IN ({','.join('?' * len(codes))})", list(codes)
    # Only fixed fragments and placeholders are interpolated.
    sql = f"SELECT DISTINCT r.key, rc.feed_date, rc.record_rowid FROM record_categories rc JOIN records r ON r.rowid = rc.record_rowid WHERE {where} ORDER BY rc.feed_date DESC, rc.record_rowid DESC LIMIT ?"  # noqa: S608
    return [k for k, _, _ in conn.execute(sql, [*args, limit])]


@pytest.mark.parametrize(
    ("codes", "prefix"),
    [
        ([], "cs."),
        ([], "math."),
        ([], "q-bio."),
        (["cs.LG"], None),
        (["cs.LG", "stat.ML"], None),
        (["cs.CL", "cs.AI", "cs.CL"], None),
        (["no.such"], None),
    ],
)
@pytest.mark.parametrize("limit", [1, 7, 50, 400])
def test_recent_in_matches_one_sorted_query(
    feed_db: Path, codes: list[str], prefix: str | None, limit: int
) -> None:
    conn = sqlite3.connect(f"file:{feed_db}?mode=ro", uri=True)
    got = [r.key for _, r in q.Catalog(conn).recent_in(codes, prefix, limit)]
    want = _reference(conn, codes, prefix, limit)
    assert got == want
    if codes != ["no.such"]:
        assert len(got) == min(limit, len(want)) and got  # the walk found records


def test_codes_under_lists_each_code_of_an_archive_once(feed_db: Path) -> None:
    conn = sqlite3.connect(f"file:{feed_db}?mode=ro", uri=True)
    want = [c for (c,) in conn.execute(
        "SELECT DISTINCT code FROM record_categories WHERE code LIKE 'cs.%' ORDER BY code")]
    assert q._codes_under(conn, "cs.") == want and len(want) > 10


def test_subject_counts_follow_new_records(tmp_path: Path) -> None:
    """The counts cache is keyed by the store's highest seq/rowid: a newer ingest must
    show in the next page's counts."""
    from paperdesk.catalog import subject_counts

    with open_feed() as f:
        lines = list(islice(f, 1500))
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"".join(lines[:1000]))
    second.write_bytes(b"".join(lines[1000:]))
    with open_store(tmp_path / "s.db") as store:
        ingest_paths(store, [first], workers=0)
        before = subject_counts(store)
        assert sum(before.values()) >= 1000
        assert subject_counts(store) == before  # cached, unchanged
        ingest_paths(store, [second], workers=0)
        after = subject_counts(store)
        conn = store.conn
        want = {c: n for c, n in conn.execute(
            "SELECT code, COUNT(*) FROM record_categories GROUP BY code")}
        assert sum(after.values()) > sum(before.values())
        assert after.get("cs.LG") == want.get("cs.LG")
