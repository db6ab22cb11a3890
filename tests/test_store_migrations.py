"""Store migrations that rebuild tables keep every row: a database written in the old layout
is upgraded on open with its records and raw payloads byte-identical."""

from __future__ import annotations

import gzip
import io
import sqlite3
from importlib import resources
from itertools import islice
from pathlib import Path

from conftest import shared_file
from paperdesk import normalize, sources
from paperdesk.ingest import ingest_paths
from paperdesk.store import open_store
from paperdesk.store.sqlite import digest_key, payload_hash, prepare_row

FEED = "arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"
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
    with gzip.open(feed, "rb") as f:
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


def test_payload_digest_migration_keeps_every_payload(tmp_path: Path) -> None:
    feed = shared_file(FEED)
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
        assert conn.execute("SELECT * FROM records ORDER BY rowid").fetchall() == records_before
        for digest, sha in conn.execute("SELECT digest, sha256 FROM payloads"):
            assert digest == digest_key(sha)
        indexes = {r[1] for r in conn.execute("PRAGMA index_list(payloads)")}
        assert indexes == {"payloads_digest", "payloads_record"}  # the text UNIQUE index is gone
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []

        hashes = [h for _, _, h, *_ in before]
        assert store.known_payloads(hashes) == set(hashes)
        first_key = records_before[0][1]
        assert store.get_record(first_key).raw == before[1][-1]  # the newest payload
        assert [p["body"] for p in store.record_payloads(first_key)] == [
            before[0][-1], before[1][-1]
        ]

        # The upgraded store recognises every payload it holds: re-ingesting the same
        # records changes nothing, and new ones go in under the new key.
        src = tmp_path / "feed.jsonl.gz"
        with gzip.open(feed, "rb") as f, gzip.open(src, "wb") as out:
            out.writelines(islice(f, 450))
        rep = ingest_paths(store, [src], workers=0)
        assert (rep.unchanged, rep.inserted, rep.updated) == (400, 50, 0)
        assert store.count_records() == 450


def test_prefix_collision_is_told_apart_by_the_full_hash(tmp_path: Path) -> None:
    """Two payloads whose hashes share the first 8 bytes: the look-up key collides, and
    `known_payloads` still answers by the whole hash."""
    with open_store(tmp_path / "p.db") as store:
        a = "00112233445566778899" + "a" * 44
        b = "00112233445566778899" + "b" * 44
        assert digest_key(a) == digest_key(b)
        store.conn.execute(
            "INSERT INTO records (rowid, key, source, source_id, data, created_at, modified_at)"
            " VALUES (1, 'x:1', 'x', '1', '{}', 'now', 'now')"
        )
        store.conn.execute(
            "INSERT INTO payloads (record_rowid, digest, sha256, format, received_at, body)"
            " VALUES (1, ?, ?, 'test', 'now', x'00')",
            (digest_key(a), a),
        )
        assert store.known_payloads([a, b]) == {a}
        assert digest_key("f" * 64) == -1 and digest_key("7" + "f" * 63) == 2**63 - 1
