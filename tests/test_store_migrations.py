"""Store migrations that rebuild tables keep every row: a database written in the old layout
is upgraded on open with its records and raw payloads byte-identical."""

from __future__ import annotations

import gzip
import io
import sqlite3
from importlib import resources
from itertools import islice
from pathlib import Path

import pytest

from conftest import feed_file
from paperdesk import normalize, sources
from paperdesk.ingest import ingest_paths
from paperdesk.store import open_store
from paperdesk.store.rows import payload_hash, prepare_row

PAYLOADS = "SELECT id, record_rowid, sha256, format, origin, received_at, body FROM payloads"


def old_layout_db(db: Path, feed: Path, n: int) -> None:
    """Migrations 001-002 (payloads keyed by a UNIQUE sha256 text), filled with `n` real feed
    records the way the store wrote them then; the first record also gets a second payload
    (another version of it), as a merged record has."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA page_size=16384")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    folder = resources.files("paperdesk.store").joinpath("migrations")
    for name in ("001_records.sql", "002_record_categories.sql"):
        conn.executescript(folder.joinpath(name).read_text(encoding="utf-8"))
        conn.execute("INSERT INTO migrations VALUES (?, '2026-11-29T00:00:00Z')", (name,))
    with feed.open("rb") as f:
        data = b"".join(islice(f, n))
    records = [r for r in sources.get("arxiv-feed").parse(io.BytesIO(data), str(feed))]
    conn.execute("BEGIN")
    for rowid, rec in enumerate(records, 1):
        row = prepare_row(normalize.finish(rec), payload_hash(rec.raw))  # type: ignore[arg-type]
        conn.execute(
            "INSERT INTO records (rowid, key, source, source_id, data, title, year, doi,"
            " arxiv_id, feed_date, submitted, latest_version, created_at, modified_at, seq)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'then', 'then', 1)",
            (rowid, *row[:11]),
        )
        bodies = [row[13]] + ([row[13].replace(b'"title"', b'"title" ')] if rowid == 1 else [])
        for body in bodies:
            conn.execute(
                "INSERT INTO payloads (record_rowid, sha256, format, origin, received_at, body)"
                " VALUES (?, ?, ?, ?, '2026-11-29T00:00:00Z', ?)",
                (rowid, payload_hash(body), row[12], str(feed), body),
            )
    conn.execute("COMMIT")
    conn.close()


def test_payload_migrations_keep_every_payload(tmp_path: Path) -> None:
    """003 (the UNIQUE text hash replaced by an integer digest index) then 006 (payloads
    found by their record: the digest column and its index dropped) on a store of the
    first layout: every payload row byte for byte, and every payload still recognised."""
    feed = feed_file()
    db = tmp_path / "old.db"
    old_layout_db(db, feed, 400)
    with sqlite3.connect(db) as conn:
        before = conn.execute(PAYLOADS + " ORDER BY id").fetchall()
        records_before = conn.execute("SELECT * FROM records ORDER BY rowid").fetchall()
    assert len(before) == 401

    with open_store(db) as store:
        conn = store.conn
        after = conn.execute(PAYLOADS + " ORDER BY id").fetchall()
        assert after == before  # ids, owners, hashes and bodies byte for byte
        rows = conn.execute("SELECT * FROM records ORDER BY rowid").fetchall()
        assert [r[: len(records_before[0])] for r in rows] == records_before  # + appeared
        columns = [r[1] for r in conn.execute("PRAGMA table_info(payloads)")]
        assert columns == ["id", "record_rowid", "sha256", "format", "origin", "received_at", "body"]
        indexes = {r[1] for r in conn.execute("PRAGMA index_list(payloads)")}
        assert indexes == {"payloads_record"}  # neither the text UNIQUE nor the digest index
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []

        key_of = {rowid: key for rowid, key, *_ in records_before}
        pairs = {(key_of[rowid], h) for _, rowid, h, *_ in before}
        assert len(pairs) == 401
        assert store.known_payloads(pairs) == pairs
        first_key = records_before[0][1]
        assert store.get_record(first_key).raw == before[1][-1]  # the newest payload
        assert [p["body"] for p in store.record_payloads(first_key)] == [
            before[0][-1], before[1][-1]
        ]

        # The upgraded store recognises every payload it holds: re-ingesting the same
        # records changes nothing, and new ones go in under the new key.
        src = tmp_path / "feed.jsonl.gz"
        with feed.open("rb") as f, gzip.open(src, "wb") as out:
            out.writelines(islice(f, 450))
        rep = ingest_paths(store, [src], workers=0)
        assert (rep.unchanged, rep.inserted, rep.updated) == (400, 50, 0)
        assert store.count_records() == 450


def test_a_payload_is_known_only_to_its_own_record(tmp_path: Path) -> None:
    """`known_payloads` answers by (record key, whole hash): the same hash asked for another
    key, or another hash for the same key (a new version), is not known."""
    with open_store(tmp_path / "p.db") as store:
        a, b = "a" * 64, "b" * 64
        store.conn.execute(
            "INSERT INTO records (rowid, key, source, source_id, data, created_at, modified_at)"
            " VALUES (1, 'x:1', 'x', '1', '{}', 'now', 'now')"
        )
        store.conn.execute(
            "INSERT INTO payloads (record_rowid, sha256, format, received_at, body)"
            " VALUES (1, ?, 'test', 'now', x'00')",
            (a,),
        )
        asked = [("x:1", a), ("x:1", b), ("x:2", a), ("y:1", b)]
        assert store.known_payloads(asked) == {("x:1", a)}


# The readers' queries as they were before migration 005 (record_categories keyed by record).
OLD_DAY_INDEX = (
    "SELECT r.key, r.rowid, rc.code FROM records r LEFT JOIN record_categories rc"
    " ON rc.record_rowid = r.rowid WHERE r.feed_date = ? ORDER BY r.rowid, rc.position"
)
OLD_RECENT = (
    "SELECT DISTINCT r.key, rc.feed_date FROM record_categories rc JOIN records r"
    " ON r.rowid = rc.record_rowid WHERE rc.code IN ({}) ORDER BY rc.feed_date DESC,"
    " rc.record_rowid DESC LIMIT ?"
)


def test_category_migration_keeps_every_code_and_every_answer(tmp_path: Path) -> None:
    """Migration 005 rebuilds `record_categories` keyed by code: the same rows (a record
    without a feed day gets ''), and the daily page's codes, the code counts and the
    newest records of a subject are what the old layout answered."""
    feed = feed_file()
    db = tmp_path / "old.db"
    old_layout_db(db, feed, 400)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE records SET feed_date = NULL WHERE rowid % 7 = 0")
        conn.execute(  # what the writer of then stored with each record (as migration 002)
            "INSERT INTO record_categories (record_rowid, position, code, feed_date)"
            " SELECT r.rowid, CAST(j.key AS INTEGER), j.value, r.feed_date"
            " FROM records r, json_each(CAST(r.data AS TEXT), '$.categories') j"
        )
        rows_before = sorted(
            conn.execute(
                "SELECT code, COALESCE(feed_date, ''), record_rowid, position"
                " FROM record_categories"
            )
        )
        days = [d for (d,) in conn.execute("SELECT DISTINCT feed_date FROM records")]
        day_before = {d: conn.execute(OLD_DAY_INDEX, (d,)).fetchall() for d in days if d}
        counts_before = dict(
            conn.execute("SELECT code, COUNT(*) FROM record_categories GROUP BY code")
        )
        recent_before = {
            codes: conn.execute(OLD_RECENT.format(",".join("?" * len(codes))), (*codes, 30))
            .fetchall()
            for codes in (("cs.CV",), ("cs.CL", "cs.AI"), ("quant-ph",))
        }
    assert len(rows_before) > 400 and len(day_before) > 1

    with open_store(db) as store:
        conn = store.conn
        rows_after = sorted(conn.execute("SELECT * FROM record_categories"))
        assert rows_after == rows_before
        assert [r[1] for r in conn.execute("PRAGMA index_list(record_categories)")] == [
            "sqlite_autoindex_record_categories_1"  # the key only: no second B-tree
        ]
        for day, before in day_before.items():
            assert store.catalog.day_index(day) == before
        assert store.catalog.code_counts() == counts_before
        for codes, before in recent_before.items():
            got = store.catalog.recent_in(list(codes), None, 30)
            assert [w for w, _ in got] == [k for k, _ in before]
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def _works_records() -> list:
    from paperdesk.model import Author, SourceRecord

    recs = [
        SourceRecord(
            "arxiv", f"2501.0000{i}", arxiv_id=f"2501.0000{i}", title=f"A study of topic {i} in depth",
            authors=[Author("Ada Lovelace")], raw=f"r{i}".encode(), raw_format="test",
        )
        for i in range(6)
    ]
    recs.append(
        SourceRecord(
            "crossref", "x1", doi="10.1000/x1", arxiv_id="2501.00001",
            title="A Study of Topic 1 in Depth", raw=b"c", raw_format="test",
        )
    )
    return [normalize.finish(r) for r in recs]


def test_a_new_derived_format_is_rebuilt_not_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Derived tables carry a format version (migration 065): a store whose works or
    subjects are in another format than the code's gets a full run of that stage — the
    works keep their ids — and then records the new format; later runs are incremental."""
    import paperdesk.resolve.works_run as works_run
    import paperdesk.subjects.classify as classify_stage
    from paperdesk.resolve.works_curate import work_ids_for

    store = open_store(tmp_path / "f.db")
    assert store.derived_format("works") == works_run.FORMAT  # a new store: no rebuild
    store.put_records(_works_records(), origin="t")
    assert works_run.resolve_works(store).records == 7
    before = work_ids_for(store, [r.key for r in _works_records()])
    assert len(set(before.values())) == 6
    assert works_run.resolve_works(store).records == 0
    monkeypatch.setattr(works_run, "FORMAT", works_run.FORMAT + 1)
    again = works_run.resolve_works(store)
    assert again.records == 7 and store.derived_format("works") == works_run.FORMAT
    assert work_ids_for(store, list(before)) == before
    assert works_run.resolve_works(store).records == 0

    assert classify_stage.classify(store, None, model_id="").records == 7
    assert classify_stage.classify(store, None, model_id="").records == 0
    monkeypatch.setattr(classify_stage, "FORMAT", classify_stage.FORMAT + 1)
    assert classify_stage.classify(store, None, model_id="").records == 7
    assert store.derived_format("subjects") == classify_stage.FORMAT
    assert classify_stage.classify(store, None, model_id="").records == 0
    store.close()
