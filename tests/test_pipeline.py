"""The stages after ingest run by `paperdesk.pipeline` (works, authors, subjects, search),
its status (`/api/status`, `paperdesk status`), `serve --background-stages`, and the day
every record appeared on (`records.appeared`, migration 043) behind the daily pages."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mixed_store import FILES, ingest_mixed
from paperdesk import catalog, pipeline
from paperdesk.store import open_store


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def test_every_record_of_every_shape_is_on_a_day(new_target: Callable[[str], str]) -> None:
    """Feed day, else the source's publication or submission day, else the day received;
    the home page shows the newest day that has any, with papers on it (both backends)."""
    n = ingest_mixed(new_target("m.db"))
    assert n >= 40
    with open_store(new_target("m.db")) as store:
        rows = dict(store.conn.execute("SELECT key, appeared FROM records"))
        assert all(rows.values()), [k for k, v in rows.items() if not v]
        # Crossref `issued` 2015-11-19; an OpenReview note's pdate; BibTeX has a year only.
        assert rows["doi:10.1038/srep16696"] == "2015-11-19"
        assert rows["openreview:05T81ScPFb"] == "2024-11-01"
        assert rows["mylist:43"] == "2024-05-01"  # the list's `date`
        undated = [k for k in rows if k.startswith("digest:") or k.startswith("bibtex:")]
        assert undated and all(rows[k] == _today() for k in undated)
        day = catalog.daily(store)
        assert day["day"] == _today()
        assert day["total"] == len([k for k, v in rows.items() if v == _today()])
        assert day["works"] and day["prev_day"] == max(v for v in rows.values() if v < _today())
        older = catalog.daily(store, day="2015-11-19")
        assert [w["work_id"] for w in older["works"]] == ["doi:10.1038/srep16696"]


def test_migration_043_backfills_what_the_writer_writes(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    ingest_mixed(db)
    with open_store(db) as store:
        written = dict(store.conn.execute("SELECT key, appeared FROM records"))
        with store.transaction():
            store.conn.execute("DROP INDEX records_appeared")
            store.conn.execute("ALTER TABLE records DROP COLUMN appeared")
            store.conn.execute("DELETE FROM migrations WHERE name = '043_record_appeared.sql'")
    with open_store(db) as store:  # migrates again
        assert dict(store.conn.execute("SELECT key, appeared FROM records")) == written


def test_a_stored_record_keeps_its_day_until_its_source_gives_one(tmp_path: Path) -> None:
    from paperdesk.model import SourceRecord

    with open_store(tmp_path / "p.db") as store:
        rec = SourceRecord("mylist", "1", title="A", raw=b"1", raw_format="generic")
        store.put_records([rec], origin="a")
        store.conn.execute("UPDATE records SET appeared = '2020-01-02'")
        store.put_records([SourceRecord("mylist", "1", title="B", raw=b"2", raw_format="generic")],
                          origin="b")
        assert store.conn.execute("SELECT appeared FROM records").fetchone()[0] == "2020-01-02"
        dated = SourceRecord("mylist", "1", title="B", published="2021-03-04", raw=b"3",
                             raw_format="generic")
        store.put_records([dated], origin="c")
        assert store.conn.execute("SELECT appeared FROM records").fetchone()[0] == "2021-03-04"


def test_run_records_each_stage_and_resumes_after_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    ingest_mixed(db)
    with open_store(db) as store:
        assert pipeline.status(store)["state"] == "idle"

        def broken(*_: Any) -> dict[str, Any]:
            raise RuntimeError("disk on fire")

        monkeypatch.setitem(pipeline._STAGE_FNS, "authors", broken)
        with pytest.raises(RuntimeError):
            pipeline.run(store)
        st = pipeline.status(store)
        assert st["state"] == "failed" and "authors: disk on fire" in st["error"]
        assert [s["state"] for s in st["stages"]] == ["done", "failed", "waiting", "waiting"]
        assert st["stages"][0]["report"]["records"] > 0
        monkeypatch.undo()
        reports = pipeline.run(store)
        assert reports["works"]["records"] == 0  # committed before the failure: not redone
        assert reports["authors"]["records"] > 0
        st = pipeline.status(store)
        assert st["state"] == "ready" and st["stage"] is None
        assert [s["state"] for s in st["stages"]] == ["done"] * 4
        day = catalog.daily(store)
        assert all(w["work_id"].startswith("W") for w in day["works"])


def test_a_run_whose_process_is_gone_is_interrupted(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        state = {"state": "running", "pid": gone.pid, "host": socket.gethostname(),
                 "stages": [{"name": "works", "state": "running"}]}
        store.set_checkpoint(pipeline.CHECKPOINT, state)
        st = pipeline.status(store)
        assert st["state"] == "interrupted" and st["stage"] is None and "pid" not in st
        store.set_checkpoint(pipeline.CHECKPOINT, {**state, "pid": os.getpid()})
        assert pipeline.status(store)["stage"] == "works"


def test_a_run_killed_mid_stage_is_finished_by_the_next(new_target: Callable[[str], str]) -> None:
    """SIGKILL `paperdesk pipeline` while a later stage runs: the stages before it stay
    done, the status says `interrupted`, and the next run finishes without redoing them
    (both backends)."""
    db = new_target("m.db")
    ingest_mixed(db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperdesk", "--db", str(db), "pipeline"],
        env={**os.environ, "PAPERDESK_PROGRESS": "0"}, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    killed_in = None
    deadline = time.monotonic() + 240
    with open_store(db) as store:
        while proc.poll() is None and time.monotonic() < deadline:
            st = pipeline.status(store)
            if st["stage"] in ("authors", "subjects", "search"):
                os.killpg(proc.pid, 9)
                killed_in = st["stage"]
                break
            time.sleep(0.02)
        proc.wait(30)
        if killed_in is None:
            pytest.skip("the run finished before a later stage could be caught")
        st = pipeline.status(store)
        assert st["state"] == "interrupted"
        assert st["stages"][0]["state"] == "done"
        reports = pipeline.run(store)
        assert reports["works"]["records"] == 0
        assert pipeline.status(store)["state"] == "ready"
        from paperdesk.search.engine import SearchIndex

        assert SearchIndex(store).search("Gaussian splatting", mode="keyword").hits


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:  # noqa: S310 (loopback)
            return int(resp.status), resp.read()
    except OSError:
        return 0, b""


def test_serve_with_background_stages(tmp_path: Path) -> None:
    """The site answers while the stages run: papers on the home page under their record
    keys first, the status line and /api/status saying which stage runs, then every work
    resolved and /api/status `ready`. Never half a batch: a page's works are all record
    keys or all works (this store is one batch)."""
    db = tmp_path / "m.db"
    ingest_mixed(db)
    port = _free_port()
    env = {**os.environ, "PAPERDESK_PROGRESS": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperdesk", "--db", str(db), "serve", "--port", str(port),
         "--background-stages"],
        env=env, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    seen_states: list[str] = []
    seen_stages: set[str] = set()
    kinds: set[str] = set()
    lines = 0  # pages seen with the status line
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            code, body = _get(base + "/api/status")
            if code != 200:
                time.sleep(0.1)
                continue
            st = json.loads(body)
            seen_states.append(st["state"])
            if st["stage"]:
                seen_stages.add(st["stage"])
            code, body = _get(base + "/api/daily")
            assert code == 200
            ids = [w["work_id"] for w in json.loads(body)["works"]]
            assert ids
            kind = {"work" if i.startswith("W") else "record" for i in ids}
            assert len(kind) == 1, ids  # never a half-resolved batch
            kinds |= kind
            code, html = _get(base + "/")
            assert code == 200
            lines += b'class="pipeline-status"' in html
            if st["state"] == "ready":
                break
            time.sleep(0.1)
        assert seen_states[-1] == "ready", seen_states[-5:]
        assert "running" in seen_states and seen_stages, seen_states[:5]
        assert kinds >= {"work"} and lines > 0
        code, html = _get(base + "/")
        assert code == 200 and b'class="pipeline-status"' not in html
        st = json.loads(_get(base + "/api/status")[1])
        assert [s["name"] for s in st["stages"]] == list(pipeline.STAGES)
        assert all(s["state"] == "done" and s["seconds"] is not None for s in st["stages"])
    finally:
        os.kill(proc.pid, 15)  # the server alone: it stops the stages' process too
        proc.wait(60)


def test_stopping_the_server_stops_the_background_stages(tmp_path: Path) -> None:
    """SIGTERM to `serve --background-stages` (what `make demo`'s Ctrl-C or a service
    manager sends) stops the stages' process too: the status is `interrupted`, not a run
    that goes on after the server."""
    db = tmp_path / "m.db"
    ingest_mixed(db)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperdesk", "--db", str(db), "serve", "--port", str(port),
         "--background-stages"],
        env={**os.environ, "PAPERDESK_PROGRESS": "0"}, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        state = None
        while time.monotonic() < deadline:
            code, body = _get(f"http://127.0.0.1:{port}/api/status")
            state = json.loads(body)["state"] if code == 200 else None
            if state in ("running", "ready"):
                break
            time.sleep(0.05)
        if state != "running":
            pytest.skip(f"the stages were {state} before the server could be stopped")
        os.kill(proc.pid, 15)
        assert proc.wait(60) != 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
    with open_store(db) as store:
        assert pipeline.status(store)["state"] == "interrupted"


def test_the_mixed_slices_are_all_read() -> None:
    for f in FILES:
        assert f.exists(), f
