"""Ingest end to end on real daily-feed records: idempotence, updates, bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import open_feed
from paperdesk.cli import main
from paperdesk.errors import ParseError, UnknownFormatError
from paperdesk.ingest import ingest_paths
from paperdesk.store import open_store


def feed_lines(n: int, start: int = 0) -> list[bytes]:
    out = []
    with open_feed() as f:
        for i, line in enumerate(f):
            if i >= start + n:
                break
            if i >= start:
                out.append(line)
    return out


def write_gz(path: Path, lines: list[bytes]) -> Path:
    with gzip.open(path, "wb") as f:
        f.writelines(lines)
    return path


def test_feed_ingest_is_complete_and_idempotent(tmp_path: Path) -> None:
    lines = feed_lines(1500)
    ids = {json.loads(x)["id"] for x in lines}
    src = write_gz(tmp_path / "feed.jsonl.gz", lines)
    with open_store(tmp_path / "p.db") as store:
        rep = ingest_paths(store, [src])
        assert rep.records == 1500 and rep.rejected == 0
        assert rep.inserted == len(ids) == store.count_records("arxiv")
        first = json.loads(lines[0])
        got = store.get_record(f"arxiv:{first['id']}")
        assert got.title == first["title"]
        assert got.url == f"https://arxiv.org/abs/{first['id']}"
        assert [a.name for a in got.authors] == first["authors"]
        assert got.raw == lines[0].rstrip(b"\n") or got.raw == lines[0]
        assert got.abstract_text and "\n" not in got.abstract_text
        # Same file again: recognised by its digest, nothing read.
        again = ingest_paths(store, [src])
        assert (again.files_skipped, again.inserted, again.updated) == (1, 0, 0)
        # Forced re-read: every payload known, nothing written.
        forced = ingest_paths(store, [src], force=True)
        assert (forced.inserted, forced.updated, forced.unchanged) == (0, 0, 1500)
        assert store.stats()["payloads"] == 1500


def test_grown_file_adds_only_new_records(tmp_path: Path) -> None:
    src = write_gz(tmp_path / "feed.jsonl.gz", feed_lines(300))
    with open_store(tmp_path / "p.db") as store:
        ingest_paths(store, [src])
        write_gz(src, feed_lines(500))
        rep = ingest_paths(store, [src])
        assert rep.inserted == store.count_records() - 300 > 0
        assert rep.unchanged == 300


def test_bad_line_stop_keeps_good_records_and_names_the_record(tmp_path: Path) -> None:
    lines = feed_lines(10)
    lines[6] = b'{"id": "2503.99999", "title": broken json\n'
    src = tmp_path / "bad.jsonl"
    src.write_bytes(b"".join(lines))
    with open_store(tmp_path / "p.db") as store:
        with pytest.raises(ParseError) as err:
            ingest_paths(store, [src])
        assert err.value.record_no == 7 and str(src) in str(err.value)
        assert store.count_records() == 6  # the six good ones before it, nothing half-written
        # skip: everything else goes in, the reject is reported and kept
        rep = ingest_paths(store, [src], on_error="skip")
        assert rep.rejected == 1 and rep.rejects[0].record_no == 7
        assert store.count_records() == 9
        assert store.stats()["rejected"] == 1


def test_truncated_gzip_is_a_clear_error(tmp_path: Path) -> None:
    whole = write_gz(tmp_path / "whole.jsonl.gz", feed_lines(800)).read_bytes()
    src = tmp_path / "cut.jsonl.gz"
    src.write_bytes(whole[: len(whole) // 2])
    with open_store(tmp_path / "p.db") as store:
        with pytest.raises(ParseError, match="truncated or corrupt") as err:
            ingest_paths(store, [src])
        assert str(src) in str(err.value)
        n = store.count_records()
        assert 0 < n < 800  # what was readable is stored, consistently
        assert store.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_unknown_format_and_wrong_encoding(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 40)
    latin = tmp_path / "latin.jsonl"
    good = feed_lines(2)
    latin.write_bytes(good[0] + '{"id": "2503.00001", "title": "Caf\xe9"}\n'.encode("latin-1"))
    with open_store(tmp_path / "p.db") as store:
        with pytest.raises(UnknownFormatError, match="junk.bin"):
            ingest_paths(store, [junk])
        rep = ingest_paths(store, [latin], fmt="arxiv-feed", on_error="skip")
        assert rep.rejected == 1 and rep.rejects[0].record_no == 2
        assert store.count_records() == 1


def test_cli_ingest_stats_record_json(tmp_path: Path) -> None:
    lines = feed_lines(50)
    src = write_gz(tmp_path / "feed.jsonl.gz", lines)
    db = str(tmp_path / "p.db")
    runner = CliRunner()
    res = runner.invoke(main, ["--db", db, "ingest", "--json", str(src)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["inserted"] == len({json.loads(x)["id"] for x in lines})
    res = runner.invoke(main, ["--db", db, "stats", "--json"])
    stats = json.loads(res.stdout)
    assert stats["records_by_source"]["arxiv"] > 0
    first = json.loads(lines[0])
    res = runner.invoke(main, ["--db", db, "record", f"arxiv:{first['id']}v1", "--json", "--raw"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["key"] == f"arxiv:{first['id']}" and data["title"] == first["title"]
    assert data["work_id"] is None and json.loads(data["payloads"][0]["body"])["id"] == first["id"]
    res = runner.invoke(main, ["--db", db, "records", "--source", "arxiv", "--limit", "5", "--json"])
    assert len(json.loads(res.stdout)) == 5
    res = runner.invoke(main, ["--db", db, "record", "arxiv:0000.00000"])
    assert res.exit_code == 3 and "no record arxiv:0000.00000" in res.stderr


def test_parallel_workers_store_the_same_as_serial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The two-process path (used for big JSON-lines files) gives exactly the serial result,
    rejects included, and a broken tail still keeps what came before."""

    lines = feed_lines(1200)
    lines[700] = b'{"id": "2503.99999", "title": broken\n'
    src = write_gz(tmp_path / "feed.jsonl.gz", lines)
    results = {}
    for workers in (0, 2):
        monkeypatch.setenv("PAPERDESK_INGEST_PARALLEL_MIN", "0")
        with open_store(tmp_path / f"w{workers}.db") as store:
            rep = ingest_paths(store, [src], on_error="skip", batch_size=250, workers=workers)
            rows = store.conn.execute("SELECT key, data FROM records ORDER BY key").fetchall()
            results[workers] = (rows, [(r.record_no, r.error) for r in rep.rejects])
    assert results[0] == results[2]
    assert results[2][1][0][0] == 701
    whole = src.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with open_store(tmp_path / "cut.db") as store:
        rep = ingest_paths(store, [cut], on_error="skip", batch_size=100, workers=2)
        assert "truncated or corrupt" in rep.rejects[-1].error
        assert rep.rejects[-1].origin == str(cut)
        assert store.count_records() > 100


def _stored(db: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with open_store(db) as store:
        records = store.conn.execute(
            "SELECT key, data, title, feed_date FROM records ORDER BY key"
        ).fetchall()
        payloads = store.conn.execute(
            "SELECT r.key, p.sha256, p.format, p.body FROM payloads p"
            " JOIN records r ON r.rowid = p.record_rowid ORDER BY r.key, p.sha256"
        ).fetchall()
    return records, payloads


def test_parallel_workers_on_an_uncompressed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An uncompressed file through the workers: the store, payload bytes and rejects are
    exactly the serial ones, with odd lines (CRLF, blank, leading blanks, a bad one, a
    repeated one, no final line break)."""

    lines = feed_lines(1100)
    lines[0] = b"  " + lines[0]
    lines[10] = lines[10].rstrip(b"\n") + b"\r\n"
    lines[20] = b"\n"
    lines[30] = b'{"id": "2503.99999", "title": broken\n'
    lines[40] = lines[39]
    lines[-1] = lines[-1].rstrip(b"\n")
    src = tmp_path / "feed.jsonl"
    src.write_bytes(b"".join(lines))
    monkeypatch.setenv("PAPERDESK_INGEST_PARALLEL_MIN", "0")
    results = {}
    for workers in (0, 2):
        db = tmp_path / f"w{workers}.db"
        with open_store(db) as store:
            rep = ingest_paths(store, [src], on_error="skip", batch_size=250, workers=workers)
        results[workers] = (_stored(db), [(r.record_no, r.error) for r in rep.rejects])
        assert rep.inserted == 1097  # 1,100 lines: a blank, a bad and a repeated one
    assert results[0] == results[2]
    assert [no for no, _ in results[2][1]] == [31]
    bodies = {body for _, _, _, body in results[2][0][1]}
    assert lines[0].rstrip(b"\n") in bodies and lines[10].rstrip(b"\r\n") in bodies
    assert lines[-1] in bodies


def test_bulk_write_starts_a_large_wal_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk ingest truncates the WAL between transactions once it is large, instead of
    letting it grow as large as the database (its own checkpoints do not restart it while
    anything pins old frames). Into a store that holds records already (the workers then look payloads up)."""
    import paperdesk.store.sqlite.store as sq

    src = write_gz(tmp_path / "feed.jsonl.gz", feed_lines(1500))
    seed = write_gz(tmp_path / "seed.jsonl.gz", feed_lines(10, start=1500))
    monkeypatch.setenv("PAPERDESK_INGEST_PARALLEL_MIN", "0")
    wal = {}
    for limit in (1 << 40, 1):
        monkeypatch.setattr(sq, "WAL_RESTART_BYTES", limit)
        db = tmp_path / f"w{limit}.db"
        with open_store(db) as store:
            ingest_paths(store, [seed], workers=0)
            rep = ingest_paths(store, [src], batch_size=100, workers=2)
            assert (rep.inserted, store.count_records()) == (1500, 1510)
            wal[limit] = Path(f"{db}-wal").stat().st_size
            assert store.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert wal[1] < wal[1 << 40] / 2


def test_wal_restart_gives_way_to_a_long_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader holding an old snapshot blocks starting the WAL over: the writer waits a
    moment (not its 30 s busy timeout) each time, keeps writing, and the reader still sees
    its snapshot."""
    import sqlite3
    import time

    import paperdesk.store.sqlite.store as sq

    db = tmp_path / "p.db"
    with open_store(db) as store:
        ingest_paths(store, [write_gz(tmp_path / "a.jsonl.gz", feed_lines(100))], workers=0)
    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM records").fetchone() == (100,)
    monkeypatch.setattr(sq, "WAL_RESTART_BYTES", 1)
    monkeypatch.setattr(sq, "WAL_RESTART_WAIT_MS", 50)
    src = write_gz(tmp_path / "b.jsonl.gz", feed_lines(600, start=100))
    with open_store(db) as store:
        t = time.monotonic()
        rep = ingest_paths(store, [src], batch_size=50, workers=0)
        assert time.monotonic() - t < 25  # 30 s a transaction if it waited its busy timeout
        assert (rep.inserted, store.count_records()) == (600, 700)
    assert reader.execute("SELECT COUNT(*) FROM records").fetchone() == (100,)
    reader.close()
