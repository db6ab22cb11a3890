"""The store contract on both backends (SQLite, PostgreSQL): one-transaction batches,
payload dedup, version merging, checkpoints, readers; and the SQLite file's own checks."""

from __future__ import annotations

import io
import re
import sqlite3
from collections.abc import Callable
from itertools import islice
from pathlib import Path

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import open_feed, shared_file
from paperdesk import normalize, sources
from paperdesk.errors import NotFoundError
from paperdesk.model import Author, SourceRecord, Version
from paperdesk.store import Reject, open_store
from paperdesk.store.codec import decode_record, encode_record
from paperdesk.store.rows import prepare_row
from paperdesk.store.sqlite import ROWS_PER_INSERT


def rec(raw: bytes, version: str, date: str, **kw: object) -> SourceRecord:
    return SourceRecord(
        "arxiv", "2401.01234", raw=raw, raw_format="test", arxiv_id="2401.01234",
        versions=[Version(version, date)], **kw,  # type: ignore[arg-type]
    )


def test_insert_get_and_reopen(new_target: Callable[[str], str]) -> None:
    db = new_target("p.db")
    with open_store(db) as store:
        put = store.put_records(
            [rec(b"v1", "v1", "2024-01-02", title="T", authors=[Author("A. B")])], origin="f"
        )
        assert (put.inserted, put.updated, put.unchanged) == (1, 0, 0)
    with open_store(db) as store:  # survives a reopen; migrations not re-applied
        got = store.get_record("arxiv:2401.01234")
        assert got.title == "T" and got.raw == b"v1" and got.authors[0].name == "A. B"
        assert store.count_records() == 1


def test_same_payload_twice_changes_nothing(new_target: Callable[[str], str]) -> None:
    with open_store(new_target("p.db")) as store:
        r = rec(b"same", "v1", "2024-01-02", title="T")
        store.put_records([r], origin="f")
        before = store.conn.execute("SELECT modified_at, seq FROM records").fetchall()
        put = store.put_records([r], origin="f")
        assert (put.inserted, put.updated, put.unchanged) == (0, 0, 1)
        assert store.conn.execute("SELECT modified_at, seq FROM records").fetchall() == before
        assert store.stats()["payloads"] == 1


def test_newer_version_updates_and_keeps_history(new_target: Callable[[str], str]) -> None:
    with open_store(new_target("p.db")) as store:
        store.put_records([rec(b"a", "v1", "2024-01-02", title="Old")], origin="f")
        store.put_records([rec(b"b", "v3", "2024-03-01", title="New")], origin="f")
        # An older payload arriving late must not overwrite the newer fields.
        store.put_records([rec(b"c", "v2", "2024-02-01", title="Middle")], origin="f")
        got = store.get_record("arxiv:2401.01234")
        assert got.title == "New"
        assert [v.version for v in got.versions] == ["v1", "v2", "v3"]
        assert got.submitted == "2024-01-02" and got.updated == "2024-03-01"
        assert [p["body"] for p in store.record_payloads("arxiv:2401.01234")] == [b"a", b"b", b"c"]


def test_batch_is_atomic(new_target: Callable[[str], str]) -> None:
    """A failure inside put_records rolls back the whole batch, checkpoint included."""
    with open_store(new_target("p.db")) as store:
        good = rec(b"good", "v1", "2024-01-02")
        bad = SourceRecord("x", "1", raw=b"bad", raw_format="t")
        bad.versions = "not a list"  # type: ignore[assignment]  # makes encoding fail mid-batch
        with pytest.raises(Exception):  # noqa: B017 - any failure must roll back
            store.put_records([good, bad], origin="f", checkpoint=("cp", {"token": "t"}))
        assert store.count_records() == 0
        assert store.get_checkpoint("cp") is None


def test_checkpoint_and_rejects_in_stats(new_target: Callable[[str], str]) -> None:
    with open_store(new_target("p.db")) as store:
        store.put_records(
            [rec(b"a", "v1", "2024-01-02")], origin="f", checkpoint=("oai:cs", {"token": "x"}),
            rejects=[Reject("f", 7, "bad json")],
        )
        store.add_rejects([Reject("f", 7, "bad json")])  # a re-run meets it again: one row
        s = store.stats()
        assert s["checkpoints"] == {"oai:cs": {"token": "x"}}
        assert s["rejected"] == 1
        assert store.list_rejects()[0].record_no == 7


def test_not_found_and_bad_key(new_target: Callable[[str], str]) -> None:
    with open_store(new_target("p.db")) as store:
        with pytest.raises(NotFoundError, match="no record arxiv:9999.99999"):
            store.get_record("arxiv:9999.99999")
        with pytest.raises(NotFoundError, match="SOURCE:ID"):
            store.get_record("nocolon")


def test_hostile_text_is_stored_verbatim(new_target: Callable[[str], str], backend: str) -> None:
    """Parameterised SQL: quotes, `?`, `%s` and SQL fragments in fields are data, never code."""
    title = "Robert'); DROP TABLE records;-- ? %s %(x)s <script>alert(1)</script>"
    with open_store(new_target("p.db")) as store:
        store.put_records([rec(b"h", "v1", "2024-01-02", title=title)], origin="f'x%s?")
        assert store.get_record("arxiv:2401.01234").title == title
        assert store.record_payloads("arxiv:2401.01234")[0]["origin"] == "f'x%s?"
        assert store.count_records() == 1
    if backend == "sqlite":
        check = sqlite3.connect(new_target("p.db")).execute("PRAGMA integrity_check").fetchone()
        assert check == ("ok",)


def test_category_index_follows_updates(new_target: Callable[[str], str]) -> None:
    with open_store(new_target("p.db")) as store:
        store.put_records([rec(b"a", "v1", "2024-01-02", categories=["cs.LG", "I.2.7"])], origin="f")
        store.put_records([rec(b"b", "v2", "2024-02-02", categories=["cs.CL", "cs.LG"])], origin="f")
        rows = store.conn.execute(
            "SELECT position, code FROM record_categories ORDER BY position"
        ).fetchall()
        assert rows == [(0, "cs.CL"), (1, "cs.LG")]



def test_rows_with_different_null_columns_keep_their_values_and_order(
    new_target: Callable[[str], str], backend: str
) -> None:
    """The writer leaves a row's NULL columns out of its INSERT (runs of rows alike): every
    column reads back as given, NULL where it was None, rowids in batch order."""
    records = [
        SourceRecord(
            "arxiv", f"2401.0000{i}", raw=f"r{i}".encode(), raw_format="test",
            title=None if i % 2 else f"T{i}", year=2024 if i % 3 else None,
            doi=f"10.1/{i}" if i in (2, 3) else None, feed_date="2024-01-02" if i < 4 else None,
        )
        for i in range(7)
    ]
    with open_store(new_target("p.db")) as store:
        store.put_records(records, origin="f")
        got = store.conn.execute(
            "SELECT rowid, key, title, year, doi, feed_date, seq FROM records ORDER BY rowid"
        ).fetchall()
        if backend == "sqlite":
            types = store.conn.execute(
                "SELECT DISTINCT typeof(r.data), typeof(p.body), typeof(r.doi) FROM records r"
                " JOIN payloads p ON p.record_rowid = r.rowid WHERE r.doi IS NULL"
            ).fetchall()
            assert types == [("blob", "blob", "null")]  # bytes and None bind as ever
    assert [tuple(g) for g in got] == [
        (i + 1, r.key, r.title, r.year, r.doi, r.feed_date, 1) for i, r in enumerate(records)
    ]

def test_multi_row_inserts_keep_every_row_in_order(
    new_target: Callable[[str], str], backend: str
) -> None:
    """Rows go `ROWS_PER_INSERT` to a statement and the rest in one more: every record,
    payload and category row reads back as given, in order, each referring to its record,
    and SQLite checks foreign keys again after the writer's transaction."""
    n = 2 * ROWS_PER_INSERT + 5
    records = [
        SourceRecord(
            "arxiv", f"2401.{i:05d}", raw=f"raw {i}".encode(), raw_format="test",
            title=f"T{i}", categories=["cs.LG", "math.ST", "stat.ML"][: 1 + i % 3],
            feed_date=f"2024-01-{1 + i % 28:02d}",
        )
        for i in range(n)
    ]
    with open_store(new_target("p.db")) as store:
        put = store.put_records(records, origin="f")
        conn = store.conn
        assert put.inserted == n
        assert conn.execute("SELECT key, title FROM records ORDER BY rowid").fetchall() == [
            (r.key, r.title) for r in records
        ]
        assert conn.execute(
            "SELECT r.key, p.body FROM payloads p JOIN records r ON r.rowid = p.record_rowid"
            " ORDER BY p.id"
        ).fetchall() == [(r.key, r.raw) for r in records]
        cats = conn.execute(
            "SELECT r.key, c.position, c.code, c.feed_date FROM record_categories c"
            " JOIN records r ON r.rowid = c.record_rowid ORDER BY r.rowid, c.position"
        ).fetchall()
        assert cats == [
            (r.key, i, code, r.feed_date) for r in records for i, code in enumerate(r.categories)
        ]
        if backend == "sqlite":
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
            assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        with pytest.raises(Exception, match="(?i)foreign key"), store.transaction():
            conn.execute(
                "INSERT INTO payloads (record_rowid, sha256, format, received_at, body)"
                " VALUES (?, '', 't', '', ?)",
                (n + 100, b""),
            )


def test_stored_records_are_found_by_any_key_text(new_target: Callable[[str], str]) -> None:
    """The writer asks for stored keys as one JSON array: keys with quotes, backslashes,
    JSON escapes and non-ASCII text are found (and updated, not inserted twice), in the
    keys' order, among more keys than one query takes."""
    ids = ['a"b', "c\\d", "e\nf", "g\u2028h", "Müller/ü", "x'); --", *map(str, range(600))]
    with open_store(new_target("p.db")) as store:
        store.put_records(
            [SourceRecord("mylist", i, raw=b"1" + i.encode(), raw_format="t") for i in ids],
            origin="f",
        )
        put = store.put_records(
            [SourceRecord("mylist", i, raw=b"2" + i.encode(), raw_format="t") for i in ids],
            origin="f",
        )
        assert (put.inserted, put.updated + put.unchanged) == (0, len(ids))
        assert store.count_records() == len(ids)
        got = store.get_records([f"mylist:{i}" for i in ids] + ["mylist:absent"])
        assert set(got) == {f"mylist:{i}" for i in ids}
        assert all(got[f"mylist:{i}"].source_id == i for i in ids)


def test_a_row_failing_inside_a_multi_row_insert_rolls_back_the_batch(
    new_target: Callable[[str], str], backend: str
) -> None:
    """`INSERT OR FAIL` keeps a failing statement's earlier rows, but the writer's
    transaction is rolled back whole, and foreign keys are checked again after it."""
    good = [
        prepare_row(
            SourceRecord("arxiv", f"2401.{i:05d}", raw=b"r%d" % i, raw_format="t"), f"d{i}"
        )
        for i in range(ROWS_PER_INSERT + 10)
    ]
    bad = ("arxiv:2401.99999", None, *good[0][2:])  # `source` NULL: NOT NULL fails
    with open_store(new_target("p.db")) as store:
        with pytest.raises(Exception, match="(?i)not[ -]null"):
            store.put_rows([*good[:-5], bad, *good[-5:]], origin="f")
        assert store.count_records() == 0
        assert tuple(store.conn.execute("SELECT COUNT(*) FROM payloads").fetchone()) == (0,)
        if backend == "sqlite":
            assert store.conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert not store.conn.in_transaction


# --- the `data` encoding: derived text left out, exact on the way back ------------------------------


def _parsed(fmt: str, data: bytes, origin: str) -> list[SourceRecord]:
    items = sources.get(fmt).parse(io.BytesIO(data), origin)
    return [normalize.finish(r) for r in items if isinstance(r, SourceRecord)]


def _real_records() -> list[SourceRecord]:
    """Finished records of several real formats (feed, .abs, OpenReview) from shared data."""
    with open_feed() as f:
        out = _parsed("arxiv-feed", b"".join(islice(f, 3000)), "feed")
    for path in sorted(shared_file("arxiv/abs").rglob("*.abs"))[:300]:
        out += _parsed("arxiv-abs", path.read_bytes(), str(path))
    papers = b"\n".join(shared_file("openreview/papers.jsonl").read_bytes().splitlines()[:300])
    out += _parsed(sources.detect(papers, "papers.jsonl").NAME, papers, "papers")
    return out


def _full_dump(r: SourceRecord) -> bytes:
    """The `data` of rows written before the compact form: every field of the record and
    of its authors and versions, `raw: null`, the derived plain text written out."""
    d = msgspec.structs.asdict(r)
    d["raw"] = None
    d["authors"] = [msgspec.structs.asdict(a) for a in r.authors]
    d["versions"] = [msgspec.structs.asdict(v) for v in r.versions]
    return msgspec.json.encode(d)


def test_data_round_trips_real_records_in_fewer_bytes() -> None:
    records = _real_records()
    assert len(records) > 3000
    full = compact = 0
    for r in records:
        data = encode_record(r)
        back = decode_record(data, r.raw)
        assert back == r, r.key
        assert encode_record(back) == data
        compact += len(data)
        full += len(_full_dump(r))
    assert compact < 0.7 * full  # 0.63 when measured: derived plain text and defaults left out


def test_data_leaves_out_what_decoding_gives_back() -> None:
    """Empty and null fields (a record's and its authors') are not written, nor `raw`;
    every value that is not its field's default is."""
    r = SourceRecord(
        "x", "1", raw=b"payload", title="T", year=0, categories=[], keywords=["k"],
        authors=[Author("A B", affiliations=[], orcid=None), Author("C", email="")],
    )
    d = orjson.loads(encode_record(r))
    assert d == {
        "source": "x", "source_id": "1", "title": "T", "year": 0, "keywords": ["k"],
        "authors": [{"name": "A B"}, {"name": "C", "email": ""}],
    }
    assert decode_record(encode_record(r), b"payload") == r


def test_to_dict_keeps_every_field() -> None:
    """The `--json` shape (docs/cli.md) lists every field, defaults included, whatever the
    stored form leaves out."""
    r = decode_record(encode_record(SourceRecord("x", "1", authors=[Author("A")])))
    d = r.to_dict()
    assert list(d) == [f for f in SourceRecord.__struct_fields__ if f != "raw"] + ["key"]
    assert d["authors"] == [
        {"name": "A", "given": None, "family": None, "affiliations": [], "orcid": None,
         "email": None, "display": None, "key": None}
    ]
    assert d["categories"] == [] and d["doi"] is None and d["key"] == "x:1"


def test_data_written_before_the_compact_form_still_decodes() -> None:
    """Rows written as a full dump (every key, `raw: null`) read back unchanged."""

    for r in _real_records()[:500]:
        assert decode_record(_full_dump(r), r.raw) == r


_TEXT = st.one_of(st.none(), st.text(max_size=30), st.sampled_from(["", " ", "A B", "a\nb ", "\n"]))


@settings(max_examples=300, deadline=None)
@given(
    name=st.text(max_size=20) | st.sampled_from(["Ada Lovelace", "Plato", " X", "A  B", ""]),
    given_=_TEXT,
    family=_TEXT,
    display=_TEXT,
    title=_TEXT,
    title_text=_TEXT,
    abstract=_TEXT,
    abstract_text=_TEXT,
    year=st.one_of(st.none(), st.integers(-5, 3000)),
)
def test_data_round_trips_any_field_values(
    name: str,
    given_: str | None,
    family: str | None,
    display: str | None,
    title: str | None,
    title_text: str | None,
    abstract: str | None,
    abstract_text: str | None,
    year: int | None,
) -> None:
    """Whatever a field holds (None, "", a value the derivation rules would also give),
    decoding gives it back: the rules only ever drop a value they reproduce exactly."""
    r = SourceRecord(
        "x", "1", raw=b"r", title=title, title_text=title_text, abstract=abstract,
        abstract_text=abstract_text, year=year, versions=[Version("v1"), Version("", "d", "")],
        authors=[Author(name, given_, family, display=display), Author(name)],
    )
    assert decode_record(encode_record(r), b"r") == r



# -- the store interface (store/base.py, docs/architecture.md) ----------------------------
SRC = Path(__file__).resolve().parent.parent / "src" / "paperdesk"
STAGES = ("ingest", "ingest_pool", "resolve", "subjects", "search", "harvest", "cli", "web",
          "catalog", "views", "pipeline", "sources", "normalize")


def _imports(path: Path) -> set[str]:
    import ast

    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_store_imports_no_stage() -> None:
    """`store/` is the bottom layer: it imports no stage, CLI or web module (no cycles)."""
    bad = {
        f"{p.relative_to(SRC)}: {m}"
        for p in (SRC / "store").rglob("*.py")
        for m in _imports(p)
        if m.startswith("paperdesk.") and m.split(".")[1] in STAGES
    }
    assert not bad


def test_sqlite3_is_imported_only_by_the_sqlite_backend() -> None:
    users = {
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if "sqlite3" in _imports(p) and "store/sqlite" not in str(p.relative_to(SRC))
    }
    assert not users


def _imports_below(folder: str) -> set[tuple[str, str]]:
    """(module path, imported name) of every import in `store/FOLDER`."""
    return {
        (str(p.relative_to(SRC)), m) for p in (SRC / "store" / folder).rglob("*.py") for m in _imports(p)
    }


def test_the_backends_are_siblings_over_the_shared_package() -> None:
    """`SQLiteStore` and `PGStore` both build on `store/sql/` (the common dialect): neither
    backend imports the other, the shared package imports neither, and each driver is
    imported by its own backend only."""
    sqlite, postgres = "paperdesk.store.sqlite", "paperdesk.store.postgres"
    assert not {(p, m) for p, m in _imports_below("postgres") if m.startswith(sqlite)}
    assert not {(p, m) for p, m in _imports_below("sqlite") if m.startswith(postgres)}
    assert not {
        (p, m) for p, m in _imports_below("sql") if m.startswith((sqlite, postgres, "sqlite3", "psycopg"))
    }
    psycopg_users = {
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if any(m.split(".")[0] in ("psycopg", "psycopg_pool") for m in _imports(p))
    }
    assert psycopg_users and all(u.startswith("store/postgres/") for u in psycopg_users)
    pytest.importorskip("psycopg")
    from paperdesk.store.postgres import PGStore
    from paperdesk.store.sql.store import SQLStore
    from paperdesk.store.sqlite import SQLiteStore

    assert PGStore.__mro__[1] is SQLStore and SQLiteStore.__mro__[1] is SQLStore


def test_no_connection_is_reached_outside_the_store() -> None:
    """Stages, the CLI and the web layer go through the repositories: no `.conn` of a
    store (nor a connection of their own) outside `store/`."""
    assert not _outside_store(r"\.conn\b|\bsqlite3\.connect\b|\bpsycopg\b")


def _outside_store(pattern: str) -> set[str]:
    """The modules outside `store/` whose source matches `pattern`."""
    return {
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if not str(p.relative_to(SRC)).startswith("store/")
        and re.search(pattern, p.read_text(encoding="utf-8"))
    }


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://paper:secret@127.0.0.1:1/paperdesk", "PostgreSQL at paper@127.0.0.1:1/"),
        ("postgres://nobody:secret@localhost:1/db", "PostgreSQL at nobody@localhost:1/db"),
        ("mysql://h/db", "unknown database URL"),
    ],
)
def test_a_database_url_is_never_taken_as_a_file(
    url: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A URL opens its backend or is a clear error naming the host (without the
    password), never `./postgresql:/…`; also through `--db` and `PAPERDESK_DB`, and after
    a path type collapsed its `//`."""
    from click.testing import CliRunner

    from paperdesk.cli import main
    from paperdesk.errors import StoreError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=re.escape(message)) as err:
        open_store(url)
    assert "secret" not in str(err.value)
    with pytest.raises(StoreError, match=re.escape(message)):
        open_store(Path(url))
    for args, env in ((["--db", url, "stats"], {}), (["stats"], {"PAPERDESK_DB": url})):
        out = CliRunner().invoke(main, args, env=env)
        assert out.exit_code == 1 and message in out.output, out.output
        assert "Traceback" not in out.output and "secret" not in out.output
    assert list(tmp_path.iterdir()) == []


def test_sqlite_url_and_path_open_the_same_file(tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    with open_store(f"sqlite:///{db}") as store:
        store.put_records([rec(b"v1", "v1", "2024-01-02", title="T")], origin="f")
    with open_store(db) as store:
        assert store.count_records() == 1


def test_reader_sees_committed_state_and_cannot_write(new_target: Callable[[str], str]) -> None:
    """`reader()` is a read-only view on a connection of its own: it sees what the writer
    committed, never a batch in flight, and refuses to write."""
    store = open_store(new_target("r.db"))
    store.put_records([rec(b"v1", "v1", "2024-01-02", title="T")], origin="f")
    with store.reader() as view:
        assert view.count_records() == 1 and view.get_record("arxiv:2401.01234").title == "T"
        with store.transaction():
            other = SourceRecord("arxiv", "2401.09999", raw=b"v2", raw_format="test", title="T2")
            store.put_records([other], origin="f")
            assert store.count_records() == 2 and view.count_records() == 1
        assert view.count_records() == 2
        assert view.works.work_of("arxiv:2401.01234") is None
        with pytest.raises(Exception, match="readonly"):
            view.put_records([rec(b"v3", "v3", "2024-03-02")], origin="f")
    store.close()


def test_changed_records_are_those_after_the_checkpoint(new_target: Callable[[str], str]) -> None:
    """`iter_changed(seq)` and the works repository's `changed_rows` give the records of
    the later batches only, in (seq, rowid) order, in pages of about any size that never
    end inside a seq (the works stage checkpoints each page's last seq)."""
    with open_store(new_target("c.db")) as store:
        for b in range(3):
            store.put_records(
                [SourceRecord("mylist", f"{b}-{i}", raw=f"{b}{i}".encode(), raw_format="t")
                 for i in range(5)],
                origin="f",
            )
        assert [s for s, _ in store.iter_changed(0)] == [1] * 5 + [2] * 5 + [3] * 5
        assert [r.key for s, r in store.iter_changed(1)] == [
            f"mylist:{b}-{i}" for b in (1, 2) for i in range(5)
        ]
        pages = list(store.works.changed_rows(2, 3))  # a seq is never split across pages
        assert [len(p) for p in pages] == [5] and all(s == 3 for p in pages for _, s, _ in p)
        pages = list(store.works.changed_rows(0, 3))
        assert [len(p) for p in pages] == [5, 5, 5]
        assert store.count_changed(2) == 5 and list(store.iter_changed(3)) == []


def test_code_outside_the_store_names_the_interface_not_a_backend() -> None:
    """Stages, the CLI and the web layer are typed against `store.base.Store` (the
    protocol both backends implement), never against the SQLite class."""
    assert not _outside_store(r"\bSQLiteStore\b|\bPGStore\b")


def test_code_outside_the_store_imports_no_backend_module() -> None:
    """What stages share with the store (the record-row format, `store/rows.py`; the
    stored JSON, `store/codec.py`) is backend-neutral: nothing outside `store/` imports
    `paperdesk.store.sqlite` or `paperdesk.store.postgres`."""
    backends = ("paperdesk.store.sqlite", "paperdesk.store.postgres")
    bad = {
        f"{p.relative_to(SRC)}: {m}"
        for p in SRC.rglob("*.py")
        if not str(p.relative_to(SRC)).startswith("store/")
        for m in _imports(p)
        if m.startswith(backends)
    }
    assert not bad
