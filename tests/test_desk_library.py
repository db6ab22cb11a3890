"""Accounts (users with roles, the curators' migration) and the personal library: save,
tag, import (BibTeX, RIS, CSL-JSON, Zotero JSON) and export, on a real SQLite store of
real feed records, resolved into works."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import Any

import bibtexparser
import pytest
import rispy
from click.testing import CliRunner

from conftest import open_feed
from paperdesk import catalog, export
from paperdesk.cli import main
from paperdesk.desk import library as lib
from paperdesk.desk.importer import import_library, parse
from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.ingest import ingest_paths
from paperdesk.resolve.works_run import resolve_works
from paperdesk.store import curators, open_store
from paperdesk.store.sqlite import SQLiteStore

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def feed_rows(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("desk")
    with open_feed() as f:
        lines = list(islice(f, 300))
    feed = tmp / "feed.jsonl"
    feed.write_bytes(b"".join(lines))
    return feed, [json.loads(x) for x in lines]


@pytest.fixture()
def store(
    new_target: Callable[[str], str], feed_rows: tuple[Path, list[dict[str, Any]]]
) -> SQLiteStore:
    """A store of 300 feed records, resolved, with two users: on SQLite, then PostgreSQL."""
    s = open_store(new_target("p.db"))
    ingest_paths(s, [feed_rows[0]])
    resolve_works(s)
    curators.add_user(s, "alice", PASSWORD)
    curators.add_user(s, "bob", PASSWORD)
    return s


def _work_of(store: SQLiteStore, arxiv: str) -> str:
    return f"W{store.works.work_of('arxiv:' + arxiv)}"


# -- accounts ----------------------------------------------------------------------------

def test_curators_become_users_with_their_role_and_sessions(tmp_path: Path) -> None:
    """A store made before migration 070 (curators, curator_sessions) opens with its
    curators as users of the curator role: same password, same live session."""
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    folder = resources.files("paperdesk.store").joinpath("migrations")
    for name in ("060_curators.sql", "061_curator_sessions.sql"):  # the rest comes on open
        conn.executescript(folder.joinpath(name).read_text(encoding="utf-8"))
        conn.execute("INSERT INTO migrations VALUES (?, 'then')", (name,))
    conn.execute("INSERT INTO curators VALUES ('carol', ?, '2026-12-01T00:00:00Z')",
                 (curators.hash_password(PASSWORD),))
    conn.execute("INSERT INTO curator_sessions VALUES (?, 'carol', 'then', '2999-01-01T00:00:00Z')",
                 (curators._token_hash("tok"),))
    conn.close()
    with open_store(db) as s:
        assert curators.role_of(s, "carol") == "curator"
        assert curators.check_login(s, "carol", PASSWORD)
        assert not curators.check_login(s, "carol", PASSWORD + "x")
        assert curators.session_user(s, "tok") == "carol"
        assert curators.list_curators(s) == [{"username": "carol", "created_at": "2026-12-01T00:00:00Z"}]
        curators.set_password(s, "carol", "another long password")
        assert curators.session_user(s, "tok") is None  # a new password ends the session


def test_user_accounts_roles_and_removal(store: SQLiteStore) -> None:
    assert [(u["username"], u["role"]) for u in curators.list_users(store)] == [("alice", "user"), ("bob", "user")]
    with pytest.raises(PaperdeskError, match="exists"):
        curators.add_user(store, "alice", PASSWORD)
    with pytest.raises(PaperdeskError, match="10 characters"):
        curators.add_user(store, "eve", "short")
    with pytest.raises(PaperdeskError, match="usernames"):
        curators.add_user(store, "e ve", PASSWORD)
    stored = store.desk.password_hash("alice")
    assert stored is not None and stored.startswith("scrypt$16384$8$1$") and PASSWORD not in stored
    curators.set_role(store, "bob", "curator")
    assert curators.role_of(store, "bob") == "curator"
    lib.add(store, "alice", [_work_of(store, "2503.11677")])
    token = curators.start_session(store, "alice", 3600)
    curators.remove_user(store, "alice")
    assert curators.session_user(store, token) is None
    assert store.desk.library("alice") == [] and store.desk.user("alice") is None
    with pytest.raises(NotFoundError):
        lib.items(store, "alice")


# -- library -----------------------------------------------------------------------------

def test_save_tag_read_and_keep_users_apart(store: SQLiteStore) -> None:
    w1, w2 = _work_of(store, "2503.11677"), _work_of(store, "2503.11685")
    out = lib.add(store, "alice", [w1, "arxiv:2503.11685", w1])
    assert [(r["item"], r["added"]) for r in out] == [(w1, True), (w2, True), (w1, False)]
    lib.update(store, "alice", w1, tags=["prosthetics", "vision"], note="read §3", read=True)
    rows = {r["item"]: r for r in lib.items(store, "alice")}
    assert rows[w1]["tags"] == ["prosthetics", "vision"] and rows[w1]["note"] == "read §3"
    assert rows[w1]["read_at"] and rows[w2]["read_at"] is None
    assert rows[w1]["title"].startswith("Simulation of prosthetic vision")
    assert [r["item"] for r in lib.items(store, "alice", tag="vision")] == [w1]
    assert lib.items(store, "bob") == []  # one user never sees another's library
    with pytest.raises(NotFoundError):
        lib.add(store, "alice", ["W99999"])
    with pytest.raises(NotFoundError):
        lib.add(store, "alice", ["arxiv:0000.00000"])
    with pytest.raises(PaperdeskError, match="tags"):
        lib.update(store, "alice", w1, tags=["<script>"])
    assert [r["removed"] for r in lib.remove(store, "alice", [w2, w2])] == [True, False]


BIB = r"""
@misc{park2025,
  title = {Simulation of prosthetic vision with {PRIMA} system},
  author = {Park, Jungyeon and Goldstein, Anna Kochnev},
  eprint = {2503.11677}, archivePrefix = {arXiv}, year = {2025}
}
@article{kokane2025,
  title = {{CORDIC} Is All You Need},
  author = {Kokane, Omkar and Teman, Adam},
  year = {2025}
}
@article{wrongauthors,
  title = {{CORDIC} Is All You Need},
  author = {Someone, Else},
  year = {2025}
}
@article{flope,
  title = {FloPE},
  author = {Shrestha, Rashik},
  doi = {10.48550/arXiv.2503.11692}
}
@book{knuth1984,
  title = {The Art of Computer Programming},
  author = {Knuth, Donald E.},
  year = {1968}, publisher = {Addison-Wesley}
}
"""


def test_bibtex_import_reports_how_each_entry_matched(store: SQLiteStore, tmp_path: Path) -> None:
    out = import_library(store, "alice", BIB.encode())
    got = {r["entry"]: (r["matched"], r["item"]) for r in out["report"]}
    assert got["bibtex:park2025"] == ("arxiv", _work_of(store, "2503.11677"))
    assert got["bibtex:kokane2025"] == ("title+authors", _work_of(store, "2503.11685"))
    assert got["bibtex:flope"] == ("arxiv", _work_of(store, "2503.11692"))  # an arXiv DOI
    assert got["bibtex:wrongauthors"][0] == "own"  # same title, no author in common
    assert got["bibtex:knuth1984"][0] == "own"
    assert out["by"] == {"arxiv": 2, "title+authors": 1, "own": 2}
    own = store.desk.own_records("alice")
    assert {r.data["title"] for r in own} == {"The Art of Computer Programming", "CORDIC Is All You Need"}
    # importing again adds nothing: no second copy of an own record
    again = import_library(store, "alice", BIB.encode())
    assert not any(r["added"] for r in again["report"])
    assert len(store.desk.own_records("alice")) == 2
    assert len(lib.items(store, "alice")) == 5
    assert lib.items(store, "bob") == []


def test_export_then_import_in_every_format(store: SQLiteStore) -> None:
    """The library exported as BibTeX, RIS and CSL-JSON (read back by real parsers) and
    imported by another user matches the same works; the own record stays an own record."""
    import_library(store, "alice", BIB.encode())
    lib.add(store, "alice", [_work_of(store, "2503.11731")])
    mine = {r["item"] for r in lib.items(store, "alice")}
    works = {i for i in mine if i.startswith("W")}
    bib = lib.export_library(store, "alice", "bibtex")
    assert len(bibtexparser.parse_string(bib).entries) == len(mine)
    ris = lib.export_library(store, "alice", "ris")
    assert len(rispy.loads(ris)) == len(mine)
    csl = lib.export_library(store, "alice", "csl")
    assert len(json.loads(csl)) == len(mine)
    for i, text in enumerate((bib, ris, csl)):
        user = f"u{i}"
        curators.add_user(store, user, PASSWORD)
        out = import_library(store, user, text.encode())
        assert out["format"] == ("bibtex", "ris", "csl")[i]
        matched = {r["item"] for r in out["report"] if r["matched"] != "own"}
        assert matched == works, (out["format"], out["report"])
        assert sum(r["matched"] == "own" for r in out["report"]) == 2


def test_zotero_json_import(store: SQLiteStore, feed_rows: tuple[Path, list[dict[str, Any]]]) -> None:
    """Zotero's JSON (Web API items): the arXiv id from `archiveID`/`extra`/the URL."""
    rows = feed_rows[1][:3]
    items = [
        {"key": "AAAA1111", "data": {"itemType": "preprint", "title": rows[0]["title"],
                                     "creators": [{"creatorType": "author", "firstName": "X", "lastName": "Y"}],
                                     "archiveID": f"arXiv:{rows[0]['id']}"}},
        {"key": "BBBB2222", "data": {"itemType": "journalArticle", "title": "Something else entirely here",
                                     "creators": [], "extra": f"arXiv: {rows[1]['id']}"}},
        {"key": "CCCC3333", "data": {"itemType": "preprint", "title": rows[2]["title"],
                                     "creators": [], "url": f"https://arxiv.org/abs/{rows[2]['id']}v2"}},
        {"key": "DDDD4444", "data": {"itemType": "note", "note": "not a paper"}},
    ]
    fmt, entries = parse(json.dumps(items).encode())
    assert fmt == "zotero" and len(entries) == 3
    out = import_library(store, "alice", json.dumps(items).encode())
    assert [r["matched"] for r in out["report"]] == ["arxiv"] * 3
    assert [r["item"] for r in out["report"]] == [_work_of(store, r["id"]) for r in rows]


def test_bad_library_files_are_refused(store: SQLiteStore) -> None:
    for data, msg in ((b"", "empty"), (b"{not json", "JSON"), (b"hello world", "unknown library format"),
                      (b'[1, 2]', "CSL-JSON")):
        with pytest.raises(PaperdeskError, match=msg):
            import_library(store, "alice", data)


def test_cli_user_and_library(store: SQLiteStore, tmp_path: Path) -> None:
    db = store.target
    store.close()
    run = CliRunner().invoke
    r = run(main, ["--db", db, "user", "add", "carla", "--password-stdin", "--curator"], input=PASSWORD + "\n")
    assert r.exit_code == 0, r.output
    r = run(main, ["--db", db, "user", "list", "--json"])
    assert {u["username"]: u["role"] for u in json.loads(r.stdout)}["carla"] == "curator"
    bib = tmp_path / "lib.bib"
    bib.write_text(BIB)
    r = run(main, ["--db", db, "library", "import", "--user", "carla", str(bib), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["by"] == {"arxiv": 2, "title+authors": 1, "own": 2}
    r = run(main, ["--db", db, "library", "add", "--user", "carla", "arxiv:2503.11731", "--json"])
    assert json.loads(r.stdout)[0]["added"] is True
    r = run(main, ["--db", db, "library", "list", "--user", "carla", "--json"])
    assert len(json.loads(r.stdout)) == 6
    r = run(main, ["--db", db, "library", "export", "--user", "carla", "--format", "ris"])
    assert r.stdout.count("ER  -") == 6
    r = run(main, ["--db", db, "library", "list", "--user", "nobody"])
    assert r.exit_code == 3 and "no user" in r.output
    r = run(main, ["--db", db, "user", "remove", "carla"])
    assert r.exit_code == 0
    with open_store(db) as s:
        assert s.desk.library("carla") == [] and s.desk.own_records("carla") == []
        assert catalog.paper(s, "arxiv:2503.11731")["work_id"].startswith("W")
    assert export  # the module the library exports through
