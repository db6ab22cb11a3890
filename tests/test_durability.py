"""SIGKILL at any point of an ingest leaves a consistent store; a re-run completes it."""

from __future__ import annotations

import gzip
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import feed_head, shared_file
from paperdesk.errors import StoreError
from paperdesk.ingest import ingest_paths
from paperdesk.store import open_store

N = 4000


@pytest.fixture(scope="module")
def feed_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("feed") / "feed.jsonl.gz"
    with gzip.open(out, "wb") as w:
        w.write(feed_head(N))
    return out


def snapshot(db: Path) -> tuple[set[str], int]:
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        orphans = con.execute(
            "SELECT COUNT(*) FROM payloads p LEFT JOIN records r ON r.rowid = p.record_rowid"
            " WHERE r.rowid IS NULL"
        ).fetchone()[0]
        bare = con.execute(
            "SELECT COUNT(*) FROM records r WHERE NOT EXISTS"
            " (SELECT 1 FROM payloads p WHERE p.record_rowid = r.rowid)"
        ).fetchone()[0]
        assert (orphans, bare) == (0, 0), "records and payloads must be written together"
        keys = {k for (k,) in con.execute("SELECT key FROM records")}
        payloads = con.execute("SELECT COUNT(*) FROM payloads").fetchone()[0]
        return keys, payloads
    finally:
        con.close()


@pytest.fixture(scope="module")
def clean_run(feed_file: Path) -> tuple[set[str], int]:
    """Keys and payload count of one uninterrupted ingest of the same file."""
    ref_db = feed_file.parent / "ref.db"
    with open_store(ref_db) as store:
        ingest_paths(store, [feed_file])
    return snapshot(ref_db)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kill_after_batches", "bulk"), [(1, False), (3, False), (6, False), (2, True), (7, True)]
)
def test_sigkill_mid_ingest_then_resume(
    tmp_path: Path,
    feed_file: Path,
    clean_run: tuple[set[str], int],
    kill_after_batches: int,
    bulk: bool,
) -> None:
    """`bulk`: through the worker pool into the empty store (the workers do not look
    payloads up); the store stays in WAL mode."""
    want = clean_run

    db = tmp_path / "killed.db"
    env = {**os.environ, "PAPERDESK_INGEST_BATCH": "250", "PAPERDESK_PROGRESS": "0"}
    if bulk:
        env["PAPERDESK_INGEST_PARALLEL_MIN"] = "0"
    cmd = [sys.executable, "-m", "paperdesk", "--db", str(db), "ingest", str(feed_file)]
    kill_mid_ingest(cmd, env, lambda: sqlite_payloads(db), kill_after_batches)

    keys, payloads = snapshot(db)  # consistent right after the kill
    resume_after_kill(feed_file, payloads, cmd, env)
    assert snapshot(db) == want  # same records and payloads as one clean run, no duplicates
    assert journal_mode(db) == "wal"


def sqlite_payloads(db: Path) -> int:
    """Payloads committed in the SQLite store `db` so far (0 while it cannot be read)."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=0.1)
        n = int(con.execute("SELECT COUNT(*) FROM payloads").fetchone()[0])
        con.close()
    except sqlite3.Error:
        return 0
    return n


def kill_mid_ingest(
    cmd: list[str], env: dict[str, str], payloads: Callable[[], int], batches: int
) -> None:
    """Run the ingest `cmd` and SIGKILL it once `payloads()` counts `batches` batches of
    250 committed (or after 60 s); it must still have been running then."""
    proc = subprocess.Popen(cmd, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if payloads() >= batches * 250:
            break
        time.sleep(0.005)
    killed = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert killed, "the ingest finished before it could be killed: make the input larger"


def resume_after_kill(feed_file: Path, payloads: int, cmd: list[str], env: dict[str, str]) -> None:
    """The killed ingest stored whole batches only (`payloads` after the kill); the same
    command run again finishes."""
    with gzip.open(feed_file, "rb") as f:
        lines = [line.rstrip(b"\n") for line in f]
    whole_batches = {len(set(lines[: k * 250])) for k in range(1, N // 250)}
    assert payloads in whole_batches, "only whole batches may be stored"
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def journal_mode(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return str(con.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        con.close()


@pytest.mark.slow
def test_readers_read_whole_batches_during_a_bulk_load(
    tmp_path: Path, feed_file: Path, clean_run: tuple[set[str], int]
) -> None:
    """While a big file loads into an empty store through the worker pool, read-only
    stores opened by other processes (the web, search) read whole committed batches, WAL
    throughout (no journal switching: it bought a few per cent of the load, docs)."""
    from paperdesk.store.sqlite import SQLiteStore

    db = tmp_path / "bulk.db"
    env = {
        **os.environ, "PAPERDESK_INGEST_BATCH": "250", "PAPERDESK_PROGRESS": "0",
        "PAPERDESK_INGEST_PARALLEL_MIN": "0",
    }
    cmd = [sys.executable, "-m", "paperdesk", "--db", str(db), "ingest", str(feed_file)]
    proc = subprocess.Popen(cmd, env=env)
    seen: list[tuple[int, str]] = []
    try:
        while proc.poll() is None:
            if Path(str(db) + "-wal").exists():
                try:
                    view = SQLiteStore(db, readonly=True)
                    seen.append(
                        (view.count_records(), view.conn.execute("PRAGMA journal_mode").fetchone()[0])
                    )
                    view.close()
                except (sqlite3.Error, StoreError):
                    pass  # the schema not there yet
            time.sleep(0.01)
    finally:
        proc.wait()
    assert proc.returncode == 0
    during = [n for n, _ in seen if 0 < n < N]
    assert during, f"no reader saw the load under way: {seen[:5]}"
    assert all(n % 250 == 0 for n in during)  # whole batches only
    assert {m for _, m in seen} == {"wal"}
    assert snapshot(db) == clean_run
    assert journal_mode(db) == "wal"


def pg_snapshot(url: str) -> tuple[set[str], int]:
    """`snapshot` of a PostgreSQL store."""
    with open_store(url) as store:
        q = store.conn.execute
        orphans = q(
            "SELECT COUNT(*) FROM payloads p LEFT JOIN records r ON r.rowid = p.record_rowid"
            " WHERE r.rowid IS NULL"
        ).fetchone()[0]
        bare = q(
            "SELECT COUNT(*) FROM records r WHERE NOT EXISTS"
            " (SELECT 1 FROM payloads p WHERE p.record_rowid = r.rowid)"
        ).fetchone()[0]
        assert (orphans, bare) == (0, 0), "records and payloads must be written together"
        keys = {k for (k,) in q("SELECT key FROM records")}
        return keys, int(q("SELECT COUNT(*) FROM payloads").fetchone()[0])


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize(("kill_after_batches", "bulk"), [(2, False), (5, True)])
def test_sigkill_mid_ingest_then_resume_on_postgresql(
    pg_url: str,
    feed_file: Path,
    clean_run: tuple[set[str], int],
    kill_after_batches: int,
    bulk: bool,
) -> None:
    """The same on PostgreSQL: a kill leaves whole batches (each one transaction), and a
    re-run stores exactly what one clean run (on SQLite) stores."""
    env = {**os.environ, "PAPERDESK_INGEST_BATCH": "250", "PAPERDESK_PROGRESS": "0",
           "PAPERDESK_INGEST_TX_BATCHES": "1"}
    if bulk:
        env["PAPERDESK_INGEST_PARALLEL_MIN"] = "0"
    cmd = [sys.executable, "-m", "paperdesk", "--db", pg_url, "ingest", str(feed_file)]
    open_store(pg_url).close()  # the schema, so that the count below can be asked at once
    with open_store(pg_url) as store:
        kill_mid_ingest(
            cmd, env, lambda: store.conn.execute("SELECT COUNT(*) FROM payloads").fetchone()[0],
            kill_after_batches,
        )

    keys, payloads = pg_snapshot(pg_url)
    resume_after_kill(feed_file, payloads, cmd, env)
    assert pg_snapshot(pg_url) == clean_run


RESOLVE_CHILD = """
import sys
from paperdesk.resolve.works_run import resolve_works
from paperdesk.store import open_store
with open_store(sys.argv[1]) as store:
    resolve_works(store, batch_size=500, workers=1)
"""


@pytest.mark.slow
def test_sigkill_mid_resolve_then_resume(new_target: Callable[[str], str]) -> None:
    """SIGKILL the works stage after some of its batches committed (on both backends): the
    store holds those batches whole (every resolved record in a work, the checkpoint at a
    batch's end), and resuming gives the works one uninterrupted run gives."""
    from paperdesk.resolve.works_run import CHECKPOINT, resolve_works

    feed = [shared_file("arxiv/daily-feed-head.jsonl"), shared_file("arxiv/daily-feed-sample.jsonl")]
    clean, killed = new_target("clean.db"), new_target("killed.db")
    for target in (clean, killed):
        with open_store(target) as store:
            ingest_paths(store, feed)
    with open_store(clean) as store:
        resolve_works(store, batch_size=500, workers=1)
        want = store.works.assignment()
    proc = subprocess.Popen([sys.executable, "-c", RESOLVE_CHILD, killed])
    seen = 0
    with open_store(killed) as store:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            seen = int(store.get_checkpoint(CHECKPOINT) or 0)
            if seen:
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert seen, "the run finished (or never committed) before it could be killed"
        done = store.works.assignment()
        assert 0 < len(done) < len(want), "killed mid-run: some batches, not all"
        upto = int(store.get_checkpoint(CHECKPOINT))
        changed = {k for _, r in store.iter_changed(0) for k in [r.key]}
        resolved_upto = {r.key for seq, r in store.iter_changed(0) if seq <= upto}
        assert set(done) == resolved_upto and set(done) <= changed
        resolve_works(store, batch_size=500, workers=1)
        assert store.works.assignment() == want


AUTHORS_CHILD = """
import sys
from paperdesk.resolve.authors import resolve_authors
from paperdesk.store import open_store
with open_store(sys.argv[1]) as store:
    resolve_authors(store)
"""


def _authors_state(store: Any) -> tuple[Any, ...]:
    owners = sorted(
        (s.sig_id, s.author_id) for p in store.authors.profile_rows()
        for s in store.authors.signatures_of_author(p.author_id)
    )
    return owners, list(store.authors.profile_rows()), store.authors.count_signatures()


@pytest.mark.slow
def test_sigkill_mid_author_run_then_resume(new_target: Callable[[str], str]) -> None:
    """SIGKILL the author stage at some moment of its run (on both backends): it writes in
    one transaction, so the store holds either none of the run or all of it, and the next
    run gives the profiles one uninterrupted run gives."""
    from paperdesk.resolve.authors import CHECKPOINT, resolve_authors
    from paperdesk.resolve.works_run import resolve_works

    clean, killed = new_target("clean.db"), new_target("killed.db")
    for target in (clean, killed):
        with open_store(target) as store:
            ingest_paths(store, [shared_file("arxiv/daily-feed-head.jsonl")])
            resolve_works(store, workers=1)
    with open_store(clean) as store:
        resolve_authors(store)
        want = _authors_state(store)
    for wait in (0.5, 1.5, 3.0):
        proc = subprocess.Popen([sys.executable, "-c", AUTHORS_CHILD, killed])
        time.sleep(wait)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with open_store(killed) as store:
            state = _authors_state(store)
            if store.get_checkpoint(CHECKPOINT) is None:
                assert state[0] == [] and state[2] == 0, "half a run is stored"
            else:
                assert state == want
    with open_store(killed) as store:
        resolve_authors(store)
        assert _authors_state(store) == want


@pytest.mark.slow
@pytest.mark.postgres
def test_readers_read_whole_batches_during_an_ingest_on_postgresql(
    pg_url: str, feed_file: Path, clean_run: tuple[set[str], int]
) -> None:
    """While an ingest writes through the worker pool, read-only views (what web workers
    read through) see whole committed batches only, and the pages answer throughout."""
    from paperdesk import catalog

    env = {**os.environ, "PAPERDESK_INGEST_BATCH": "250", "PAPERDESK_PROGRESS": "0",
           "PAPERDESK_INGEST_PARALLEL_MIN": "0", "PAPERDESK_INGEST_TX_BATCHES": "1"}
    with open_store(pg_url) as store:
        store.put_records([], origin="none")  # the schema before the ingest starts
        proc = subprocess.Popen(
            [sys.executable, "-m", "paperdesk", "--db", pg_url, "ingest", str(feed_file)], env=env
        )
        seen: list[int] = []
        pages = 0
        try:
            while proc.poll() is None:
                with store.reader() as view:
                    seen.append(view.count_records())
                    if seen[-1]:
                        assert catalog.daily(view)["works"]
                        pages += 1
                time.sleep(0.01)
        finally:
            proc.wait()
    assert proc.returncode == 0
    during = [n for n in seen if 0 < n < N]
    assert during and pages, f"no reader saw the ingest under way: {seen[:5]}"
    assert all(n % 250 == 0 for n in during)  # whole batches only
    assert pg_snapshot(pg_url) == clean_run
