"""The PostgreSQL backend's own behaviour: the dialect layer, its schema against SQLite's
migrations, `db init`, clear connection errors, two writers at once, `db copy` both ways,
the page cache's change marker. The store contract itself runs on both backends in
tests/test_store.py; these need a real server (PAPERDESK_TEST_PG_URL, see conftest)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from conftest import PG_URL, shared_file
from paperdesk.cli import main
from paperdesk.errors import StoreError
from paperdesk.ingest import ingest_paths
from paperdesk.model import SourceRecord
from paperdesk.store import change_marker, curators, open_store
from paperdesk.store.postgres.dialect import bind_arrays, check, in_arrays, make_translator

SRC = Path(__file__).resolve().parent.parent / "src" / "paperdesk" / "store"


def _translate(sql: str) -> str:
    keys = {"t": ("a",), "s": ("a", "b")}
    cols = {"t": ("a", "b", "c"), "s": ("a", "b", "c")}
    return make_translator(lambda t: keys.get(t, ()), lambda t: cols.get(t, ()))(sql)


def test_the_dialect_rewrites_what_postgresql_spells_differently() -> None:
    assert _translate("SELECT a FROM t WHERE b = ? AND c LIKE 'x%?'") == (
        "SELECT a FROM t WHERE b = %s AND c LIKE 'x%%?'"
    )
    assert _translate("INSERT OR IGNORE INTO t (a, b) VALUES (?, ?)") == (
        "INSERT INTO t (a, b) VALUES (%s, %s) ON CONFLICT DO NOTHING"
    )
    assert _translate("INSERT OR REPLACE INTO s (a, b, c) VALUES (?, ?, ?)") == (
        "INSERT INTO s (a, b, c) VALUES (%s, %s, %s) ON CONFLICT (a, b) DO UPDATE SET"
        " c = EXCLUDED.c"
    )
    assert _translate("INSERT OR REPLACE INTO t VALUES (?, ?, ?)") == (
        "INSERT INTO t VALUES (%s, %s, %s) ON CONFLICT (a) DO UPDATE SET b = EXCLUDED.b,"
        " c = EXCLUDED.c"
    )
    assert _translate("INSERT OR FAIL INTO t (a) VALUES (?)") == "INSERT INTO t (a) VALUES (%s)"
    assert "pg_tables" in _translate(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    )
    for bad in ("SELECT value FROM json_each(?)", "SELECT 1 WHERE a GLOB 'W*'", "PRAGMA x"):
        with pytest.raises(StoreError, match="SQLite-only SQL"):
            check(bad)


def test_in_lists_are_bound_as_one_array() -> None:
    """Every `IN (?, …)` list of a statement becomes one array parameter (`NOT IN`: `<>
    ALL`), the other parameters kept in place, whatever the length of the list."""
    for n in (1, 3, 500):
        marks = ",".join("?" * n)
        sql = "SELECT a FROM t WHERE c LIKE '%?' AND b = ? AND a IN (" + marks + ")"  # noqa: S608
        text, spans = in_arrays(
            _translate(sql + " AND c NOT IN (?, ?) AND a IN (SELECT a FROM s WHERE b = ?)")  # noqa: S608
        )
        assert text == (
            "SELECT a FROM t WHERE c LIKE '%%?' AND b = %s AND a = ANY(%s)"
            " AND c <> ALL(%s) AND a IN (SELECT a FROM s WHERE b = %s)"
        )
        args = ["b", *range(n), "x", "y", "z"]
        assert bind_arrays(spans, args) == ["b", list(range(n)), ["x", "y"], "z"]
    assert in_arrays("SELECT a FROM t WHERE b = %s") == ("SELECT a FROM t WHERE b = %s", ())


def test_every_sqlite_migration_has_its_postgresql_form() -> None:
    """A migration of the SQLite schema (source-of-truth tables especially) must reach
    PostgreSQL too: covered by a schema file's `-- covers:` list or a file of the same
    name in store/postgres/schema/."""
    pg = SRC / "postgres" / "schema"
    covered = {p.name for p in pg.glob("*.sql")}
    for p in pg.glob("*.sql"):
        for line in p.read_text().splitlines():
            if line.startswith("-- covers:"):
                covered.update(line.split(":", 1)[1].split())
    missing = sorted(p.name for p in (SRC / "migrations").glob("*.sql") if p.name not in covered)
    assert not missing, f"no PostgreSQL form in store/postgres/schema/ for {missing}"


def test_psycopg_is_imported_only_by_the_postgresql_backend() -> None:
    import ast

    users = set()
    for path in (SRC.parent).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""] if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names] if isinstance(node, ast.Import) else []
            )
            if any(n.split(".")[0] in ("psycopg", "psycopg_pool") for n in names):
                users.add(str(path.relative_to(SRC.parent)))
    assert users and all(u.startswith("store/postgres/") for u in users), users


@pytest.mark.postgres
def test_db_init_creates_the_schema_once(pg_url: str) -> None:
    run = CliRunner().invoke(main, ["--db", pg_url, "db", "init", "--json"])
    assert run.exit_code == 0, run.output
    out = orjson.loads(run.output)
    files = sorted(p.name for p in (SRC / "postgres" / "schema").glob("*.sql"))
    assert out["backend"] == "postgresql" and out["applied"] == files
    assert files[:2] == ["080_base.sql", "081_desk.sql"]
    assert "paperdesk:" not in out["db"]  # no password in what is shown
    again = CliRunner().invoke(main, ["--db", pg_url, "db", "init"])
    assert again.exit_code == 0 and "schema up to date" in again.output
    with open_store(pg_url) as store:
        names = [r[0] for r in store.conn.execute("SELECT name FROM migrations ORDER BY name")]
        assert names == files
        from paperdesk.resolve.works_run import FORMAT

        assert store.derived_format("works") == FORMAT  # a new store starts current (097)


@pytest.mark.postgres
def test_a_wrong_password_is_a_clear_error_naming_the_host() -> None:
    url = re.sub(r"://([^:]+):[^@]+@", r"://\1:not-the-password@", PG_URL or "postgresql://x:y@h/d")
    if not PG_URL:
        pytest.skip("needs PAPERDESK_TEST_PG_URL")
    run = CliRunner().invoke(main, ["--db", url, "stats"])
    host = re.search(r"@([^/]+)/", url).group(1)  # type: ignore[union-attr]
    assert run.exit_code == 1
    assert f"cannot connect to PostgreSQL at paperdesk@{host}/" in run.output
    assert "password authentication failed" in run.output
    assert "Traceback" not in run.output and "not-the-password" not in run.output


def _records(prefix: str, n: int) -> list[SourceRecord]:
    return [
        SourceRecord("mylist", f"{prefix}{i}", raw=f"{prefix}{i}".encode(), raw_format="t",
                     title=f"T {prefix}{i}")
        for i in range(n)
    ]


@pytest.mark.postgres
def test_two_writers_at_once_lose_and_duplicate_nothing(pg_url: str) -> None:
    """Two stores writing batches at the same time (a harvest and a correction): one waits
    for the other's transaction (the writer lock); every record is stored once, with its
    own rowid, and each batch's records share one seq."""
    errors: list[BaseException] = []

    def write(prefix: str) -> None:
        try:
            with open_store(pg_url) as store:
                for b in range(10):
                    store.put_records(_records(f"{prefix}{b}-", 50), origin=prefix)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    open_store(pg_url).close()  # the schema first
    threads = [threading.Thread(target=write, args=(p,)) for p in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with open_store(pg_url) as store:
        assert store.count_records() == 1000
        rows = store.conn.execute("SELECT rowid, seq, key FROM records ORDER BY rowid").fetchall()
        assert [r[0] for r in rows] == list(range(1, 1001))
        by_seq: dict[int, set[str]] = {}
        for _, seq, key in rows:
            by_seq.setdefault(seq, set()).add(key.split(":")[1].split("-")[0])
        assert len(by_seq) == 20 and all(len(v) == 1 for v in by_seq.values())


def _hold_writer(url: str, held: threading.Event, release: threading.Event) -> None:
    """A write transaction on the store at `url` that stays open until `release`."""
    with open_store(url) as store, store.transaction():
        store.conn.execute("INSERT INTO migrations (name, applied_at) VALUES ('held', 'x')")
        held.set()
        release.wait(20)


def _write_after(url: str, done: threading.Event, errors: list[BaseException]) -> None:
    try:
        with open_store(url) as store:
            store.put_records(_records("late-", 5), origin="late")
        done.set()
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)


@pytest.mark.postgres
def test_the_writer_lock_is_per_schema(pg_url: str) -> None:
    """A writer holding the store at `pg_url` makes a second writer of the same store wait
    (until it commits: then both writes are there), but not a writer of another store in
    another schema of the same database."""
    from conftest import PGSchemas

    others = PGSchemas()
    try:
        other = others.new()
        for url in (pg_url, other):
            open_store(url).close()  # the schemas first
        held, release = threading.Event(), threading.Event()
        holder = threading.Thread(target=_hold_writer, args=(pg_url, held, release))
        holder.start()
        assert held.wait(20)
        errors: list[BaseException] = []
        beside, same = threading.Event(), threading.Event()
        threading.Thread(target=_write_after, args=(other, beside, errors)).start()
        waiter = threading.Thread(target=_write_after, args=(pg_url, same, errors))
        waiter.start()
        assert beside.wait(10), "a writer of another schema waited for this one's lock"
        assert not same.wait(1.5), "a second writer of the same store did not wait"
        release.set()
        holder.join(20)
        waiter.join(20)
        assert same.is_set() and not errors
        for url in (pg_url, other):
            with open_store(url) as store:
                assert store.count_records() == 5
        with open_store(pg_url) as store:
            assert store.conn.execute(
                "SELECT COUNT(*) FROM migrations WHERE name = 'held'"
            ).fetchone() == (1,)
    finally:
        others.close()


@pytest.mark.postgres
def test_a_writer_waiting_too_long_gets_a_clear_error(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paperdesk.store.postgres import connection

    monkeypatch.setattr(connection, "LOCK_TIMEOUT", "300ms")
    open_store(pg_url).close()
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_writer, args=(pg_url, held, release))
    holder.start()
    try:
        assert held.wait(20)
        with open_store(pg_url) as store, pytest.raises(StoreError, match="another writer"):
            store.put_records(_records("late-", 5), origin="late")
    finally:
        release.set()
        holder.join(20)
    with open_store(pg_url) as store:
        assert store.count_records() == 0


def _snapshot(target: str) -> dict[str, object]:
    """What a store holds of the source of truth, backend-neutral."""
    with open_store(target) as store:
        q = store.conn.execute
        return {
            "records": [tuple(r) for r in q(
                "SELECT rowid, key, data, seq, appeared FROM records ORDER BY rowid")],
            "payloads": [tuple(r) for r in q(
                "SELECT id, record_rowid, sha256, body FROM payloads ORDER BY id")],
            "categories": [tuple(r) for r in q(
                "SELECT code, feed_date, record_rowid, position FROM record_categories"
                " ORDER BY record_rowid, position")],
            "works": [tuple(r) for r in q(
                "SELECT record_key, work_id, how FROM work_records ORDER BY record_key")],
            "curations": [tuple(r) for r in q(
                "SELECT id, action, work_a, records, who FROM work_curations ORDER BY id")],
            "users": [tuple(r) for r in q(
                "SELECT username, password_hash, role FROM users ORDER BY username")],
            "library": [tuple(r) for r in q(
                "SELECT username, item, tags, note FROM library ORDER BY username, item")],
            "own": [tuple(r) for r in q("SELECT id, username, data FROM user_records ORDER BY id")],
            "saved": [tuple(r) for r in q("SELECT id, name, query FROM saved_searches ORDER BY id")],
            "checkpoints": [tuple(r) for r in q("SELECT name, value FROM checkpoints ORDER BY name")],
            "signatures": [tuple(r) for r in q(
                "SELECT id, sig_id, author_id, name, given FROM author_signatures ORDER BY id")],
            "profiles": [(p.author_id, p.name, p.n_records, p.reps, p.variants)
                         for p in store.authors.profile_rows()],
            "members": [tuple(r) for r in q(
                "SELECT author_id, ids FROM author_members ORDER BY author_id")],
            "author_curations": [(c.id, c.action, c.groups, c.who)
                                 for c in store.authors.list_curations()],
            "author_redirects": [tuple(r) for r in q(
                "SELECT old_id, new_id FROM author_redirects ORDER BY old_id")],
        }


@pytest.mark.postgres
def test_db_copy_sqlite_to_postgresql_and_back_keeps_everything(
    tmp_path: Path, pg_url: str
) -> None:
    from paperdesk.desk import library
    from paperdesk.resolve.authors import resolve_authors
    from paperdesk.resolve.authors_curate import merge_authors
    from paperdesk.resolve.works_curate import merge_works
    from paperdesk.resolve.works_run import resolve_works

    src = str(tmp_path / "src.db")
    with open_store(src) as store:
        ingest_paths(store, [shared_file("arxiv/daily-feed-head.jsonl")])
        resolve_works(store)
        ids = sorted({w for w in store.works.assignment().values()})[:2]
        merge_works(store, f"W{ids[0]}", f"W{ids[1]}", who="carol")
        resolve_authors(store)
        top = sorted(store.authors.profile_rows(), key=lambda p: (-p.n_records, p.author_id))
        merge_authors(store, top[0].author_id, top[1].author_id, who="carol")
        curators.add_curator(store, "carol", "correct horse battery")
        curators.add_user(store, "dave", "another long password")
        library.add(store, "dave", [f"W{ids[0]}", "arxiv:2503.11677"])
        library.update(store, "dave", f"W{ids[0]}", tags=["to-read"], note="küçük ' note")
        store.desk.add_own("dave", {"title": "My own paper"}, "bibtex:me2020", "2026-12-02")
        store.desk.add_search("dave", "mine", "diffusion cat:cs.CV", "2026-12-02")
    run = CliRunner().invoke(main, ["db", "copy", src, pg_url, "--json"])
    assert run.exit_code == 0, run.output
    report = orjson.loads(run.output)
    assert report["tables"]["records"] == 2000 and report["only_in_source"] == []
    before = _snapshot(src)
    assert _snapshot(pg_url) == before
    back = str(tmp_path / "back.db")
    run = CliRunner().invoke(main, ["db", "copy", pg_url, back])
    assert run.exit_code == 0, run.output
    assert _snapshot(back) == before
    with open_store(pg_url) as store:  # identities continue above the copied ids
        store.put_records(_records("new-", 1), origin="f")
        ids = [r[0] for r in store.conn.execute("SELECT id FROM payloads ORDER BY id")]
        assert len(ids) == len(set(ids)) and ids[-1] == len(ids)
        # the planner has statistics at once (else the daily page scans every record)
        analyzed = store.conn.raw(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()"
            " AND last_analyze IS NOT NULL").fetchall()
        assert {"records", "work_records", "payloads"} <= {r[0] for r in analyzed}
        assert curators.check_login(store, "carol", "correct horse battery")
        assert curators.role_of(store, "carol") == "curator"
        assert store.desk.add_own("dave", {"title": "2"}, "x", "2026-12-02") == 2  # next id
        saved = {row[1] for row in before["library"]}  # type: ignore[attr-defined]
        assert {i["item"] for i in library.items(store, "dave")} == saved
        # the copied author tables carry on: a day on the copy, then a page
        store.put_records(_records("new-a", 2), origin="f")
        assert resolve_authors(store).records == 3  # and the one above
        merged = {store.authors.follow_redirects(p.author_id) for p in top[:2]}
        assert len(merged) == 1 and store.authors.get_profile_row(merged.pop())
    again = CliRunner().invoke(main, ["db", "copy", src, pg_url])
    assert again.exit_code == 1 and "already holds records" in again.output


@pytest.mark.postgres
def test_the_change_marker_moves_with_every_commit(pg_url: str) -> None:
    with open_store(pg_url) as store:
        marker: Callable[[], tuple[int, ...]] = change_marker(pg_url)
        first = marker()
        store.put_records(_records("m", 3), origin="f")
        assert marker() != first
        # a write in flight does not move it row by row (pages stay cached during an
        # ingest's batch); its commit does
        with store.transaction():
            store.put_records(_records("n", 3), origin="f")
            during = marker()
            store.put_records(_records("o", 300), origin="f")
            assert marker() == during
        assert marker() != during
        reads = marker()
        assert store.has_records() and marker() == reads


@pytest.mark.postgres
def test_both_backends_give_the_same_works_subjects_and_pages(
    tmp_path: Path, pg_url: str
) -> None:
    """The differential check: the same records through ingest, the works stage (full,
    then a curated merge and split), the subjects stage and the page queries give the same
    answers on SQLite and on PostgreSQL."""
    from paperdesk import catalog, pipeline
    from paperdesk.resolve.works_curate import merge_works, split_work

    out = []
    for target in (str(tmp_path / "same.db"), pg_url):
        with open_store(target) as store:
            ingest_paths(store, [shared_file("arxiv/daily-feed-head.jsonl"),
                                 shared_file("arxiv/daily-feed-sample.jsonl")])
            pipeline.run(store, ["works", "subjects"])
            a, b = sorted(set(store.works.assignment().values()))[:2]
            merged = merge_works(store, a, b, who="carol")
            split_work(store, merged, [store.works.members(int(merged[1:]))[0]], who="carol")
            pipeline.run(store, ["works"])
            day = catalog.daily(store)
            out.append({
                "assignment": store.works.assignment(),
                "redirects": store.works.redirects(),
                "subjects": list(store.subjects.all_rows()),
                "daily": day,
                "paper": catalog.paper(store, day["works"][0]["work_id"]),
                "subject": catalog.subject_page(store, "cs.LG"),
                "counts": catalog.subject_counts(store),
            })
    sqlite_side, pg_side = out
    for key in sqlite_side:
        assert pg_side[key] == sqlite_side[key], key


@pytest.mark.postgres
def test_the_least_privileged_user_of_docs_postgresql_md_runs_the_stages(pg_url: str) -> None:
    """The schema made by its owner (`db init`); then a user with only the data rights
    docs/postgresql.md grants ingests, resolves, classifies and reads — and cannot change
    the schema."""
    import uuid

    import psycopg

    from paperdesk import catalog, pipeline

    CliRunner().invoke(main, ["--db", pg_url, "db", "init"])
    schema = re.search(r"search_path%3D(\w+)", pg_url).group(1)  # type: ignore[union-attr]
    role = f"t_app_{uuid.uuid4().hex[:8]}"
    grants = [
        f"CREATE ROLE {role} LOGIN PASSWORD 'app-password'",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
    ]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql in grants:
            conn.execute(sql)  # type: ignore[arg-type]  # our own names
    app_url = re.sub(r"://[^@]+@", f"://{role}:app-password@", pg_url)
    try:
        with open_store(app_url) as store:
            ingest_paths(store, [shared_file("arxiv/daily-feed-head.jsonl")])
            pipeline.run(store, ["works", "authors", "subjects"])
            pipeline.run(store, ["works", "authors"], full=True)  # the full runs' TEMP tables
            assert catalog.daily(store)["works"]
            with pytest.raises(StoreError, match="must be owner of table records"):
                store.conn.execute("DROP TABLE records")
    finally:
        from paperdesk.store.postgres.connection import forget

        forget(app_url)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            for sql in (
                f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}",
                f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {schema} FROM {role}",
                f"REVOKE ALL ON SCHEMA {schema} FROM {role}",
                f"DROP ROLE {role}",
            ):
                conn.execute(sql)  # type: ignore[arg-type]


@pytest.mark.postgres
def test_sqlite_style_transactions_and_lastrowid_work_on_postgresql(pg_url: str) -> None:
    """Code written for SQLite's explicit transactions (`Tx`: BEGIN IMMEDIATE … COMMIT or
    ROLLBACK) and `cursor.lastrowid` runs unchanged on the facade."""
    from paperdesk.store.sql.connection import Tx

    insert = "INSERT INTO rejects (origin, record_no, error, created_at) VALUES (?, ?, ?, ?)"
    with open_store(pg_url) as store:
        with pytest.raises(RuntimeError), Tx(store.conn):
            store.conn.execute(insert, ("f", 1, "e", "t"))
            raise RuntimeError("undo")
        assert store.count_records() == 0 and store.list_rejects() == []
        with Tx(store.conn):
            first = store.conn.execute(insert, ("f", 2, "e", "t")).lastrowid
            second = store.conn.execute(insert, ("f", 3, "e", "t")).lastrowid
        assert first is not None and second == first + 1
        assert [r.record_no for r in store.list_rejects()] == [3, 2]
        again = store.conn.execute(
            "INSERT OR IGNORE INTO rejects (origin, record_no, error, created_at)"
            " VALUES (?, ?, ?, ?)", ("f", 3, "e", "t"))
        assert again.rowcount == 0 and again.lastrowid is None
        assert not store.conn.in_transaction


@pytest.mark.postgres
def test_a_table_filled_in_one_run_gets_planner_statistics(pg_url: str) -> None:
    # Without them an `IN (…)` of many keys is planned as a scan of the whole table: the
    # works stage of a fresh 20k-record store took 121 s instead of 11.
    from paperdesk.store.postgres.connection import ANALYZE_MIN

    def analyzed(store: object) -> set[str]:
        rows = store.conn.raw(  # type: ignore[attr-defined]
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema()"
            " AND last_analyze IS NOT NULL").fetchall()
        return {r[0] for r in rows}

    with open_store(pg_url) as store:
        store.put_records(_records("few-", 100), origin="f")
        assert "records" not in analyzed(store)  # a few rows: nothing to gain
        store.put_records(_records("many-", ANALYZE_MIN), origin="f")
        assert "records" in analyzed(store)
        est = store.conn.raw(
            "EXPLAIN SELECT key FROM records WHERE key IN ('many-1', 'many-2', 'many-3')"
        ).fetchall()
        assert "Index" in " ".join(r[0] for r in est)
