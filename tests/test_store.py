"""The SQLite store: one-transaction batches, payload dedup, version merging, checkpoints."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from paperdesk.errors import NotFoundError
from paperdesk.model import Author, SourceRecord, Version
from paperdesk.store import Reject, open_store


def rec(raw: bytes, version: str, date: str, **kw: object) -> SourceRecord:
    return SourceRecord(
        "arxiv", "2401.01234", raw=raw, raw_format="test", arxiv_id="2401.01234",
        versions=[Version(version, date)], **kw,  # type: ignore[arg-type]
    )


def test_insert_get_and_reopen(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    with open_store(db) as store:
        put = store.put_records(
            [rec(b"v1", "v1", "2024-01-02", title="T", authors=[Author("A. B")])], origin="f"
        )
        assert (put.inserted, put.updated, put.unchanged) == (1, 0, 0)
    with open_store(db) as store:  # survives a reopen; migrations not re-applied
        got = store.get_record("arxiv:2401.01234")
        assert got.title == "T" and got.raw == b"v1" and got.authors[0].name == "A. B"
        assert store.count_records() == 1


def test_same_payload_twice_changes_nothing(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        r = rec(b"same", "v1", "2024-01-02", title="T")
        store.put_records([r], origin="f")
        before = store.conn.execute("SELECT modified_at, seq FROM records").fetchall()
        put = store.put_records([r], origin="f")
        assert (put.inserted, put.updated, put.unchanged) == (0, 0, 1)
        assert store.conn.execute("SELECT modified_at, seq FROM records").fetchall() == before
        assert store.stats()["payloads"] == 1


def test_newer_version_updates_and_keeps_history(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        store.put_records([rec(b"a", "v1", "2024-01-02", title="Old")], origin="f")
        store.put_records([rec(b"b", "v3", "2024-03-01", title="New")], origin="f")
        # An older payload arriving late must not overwrite the newer fields.
        store.put_records([rec(b"c", "v2", "2024-02-01", title="Middle")], origin="f")
        got = store.get_record("arxiv:2401.01234")
        assert got.title == "New"
        assert [v.version for v in got.versions] == ["v1", "v2", "v3"]
        assert got.submitted == "2024-01-02" and got.updated == "2024-03-01"
        assert [p["body"] for p in store.record_payloads("arxiv:2401.01234")] == [b"a", b"b", b"c"]


def test_batch_is_atomic(tmp_path: Path) -> None:
    """A failure inside put_records rolls back the whole batch, checkpoint included."""
    with open_store(tmp_path / "p.db") as store:
        good = rec(b"good", "v1", "2024-01-02")
        bad = SourceRecord("x", "1", raw=b"bad", raw_format="t")
        bad.versions = "not a list"  # type: ignore[assignment]  # makes encoding fail mid-batch
        with pytest.raises(Exception):  # noqa: B017 - any failure must roll back
            store.put_records([good, bad], origin="f", checkpoint=("cp", {"token": "t"}))
        assert store.count_records() == 0
        assert store.get_checkpoint("cp") is None


def test_checkpoint_and_rejects_in_stats(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        store.put_records(
            [rec(b"a", "v1", "2024-01-02")], origin="f", checkpoint=("oai:cs", {"token": "x"}),
            rejects=[Reject("f", 7, "bad json")],
        )
        store.add_rejects([Reject("f", 7, "bad json")])  # a re-run meets it again: one row
        s = store.stats()
        assert s["checkpoints"] == {"oai:cs": {"token": "x"}}
        assert s["rejected"] == 1
        assert store.list_rejects()[0].record_no == 7


def test_not_found_and_bad_key(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        with pytest.raises(NotFoundError, match="no record arxiv:9999.99999"):
            store.get_record("arxiv:9999.99999")
        with pytest.raises(NotFoundError, match="SOURCE:ID"):
            store.get_record("nocolon")


def test_hostile_text_is_stored_verbatim(tmp_path: Path) -> None:
    """Parameterised SQL: quotes and SQL fragments in fields are data, never code."""
    title = "Robert'); DROP TABLE records;-- <script>alert(1)</script>"
    with open_store(tmp_path / "p.db") as store:
        store.put_records([rec(b"h", "v1", "2024-01-02", title=title)], origin="f'x")
        assert store.get_record("arxiv:2401.01234").title == title
        assert sqlite3.connect(tmp_path / "p.db").execute("PRAGMA integrity_check").fetchone() == (
            "ok",
        )


def test_category_index_follows_updates(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        store.put_records([rec(b"a", "v1", "2024-01-02", categories=["cs.LG", "I.2.7"])], origin="f")
        store.put_records([rec(b"b", "v2", "2024-02-02", categories=["cs.CL", "cs.LG"])], origin="f")
        rows = store.conn.execute(
            "SELECT position, code FROM record_categories ORDER BY position"
        ).fetchall()
        assert rows == [(0, "cs.CL"), (1, "cs.LG")]
