"""Recommendations on a real store: the committed feed lines plus every record of four
prolific researchers (tests/data/feed/authors-slice.jsonl.gz), resolved into works.

A user whose library is Sergey Levine's papers before December 2025 gets his later papers
near the top of December-January (co-authors and text), with reasons; saved and
not-relevant works never come back; follows and the subject filter do what they say; an
author followed is his profile (split and merge it: the follow goes with the profile, not
with the name)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import BACKENDS, PGSchemas, feed_file
from paperdesk.cli import main
from paperdesk.desk import library as lib
from paperdesk.desk.recommend import feedback, follow, recommend
from paperdesk.errors import QueryError
from paperdesk.ingest import ingest_paths
from paperdesk.resolve.authors import resolve_authors
from paperdesk.resolve.authors_curate import merge_authors, split_author
from paperdesk.resolve.authors_profiles import profile
from paperdesk.resolve.works_run import resolve_works
from paperdesk.store import curators, open_store
from paperdesk.store.sqlite import SQLiteStore

SLICE = Path(__file__).parent / "data" / "feed" / "authors-slice.jsonl.gz"
PASSWORD = "correct horse battery"
SINCE, UNTIL = "2025-12-01", "2026-01-31"


@pytest.fixture(scope="module", params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path | str:
    """The store, resolved (works and authors): SQLite, then PostgreSQL."""
    schemas = PGSchemas()
    request.addfinalizer(schemas.close)
    path: Path | str = schemas.new() if request.param == "postgresql" else tmp_path_factory.mktemp("rec") / "p.db"
    with open_store(path) as store:
        ingest_paths(store, [feed_file(), SLICE])
        resolve_works(store)
        resolve_authors(store)
        curators.add_user(store, "lev", PASSWORD)
        curators.add_user(store, "other", PASSWORD)
    return path


@pytest.fixture()
def store(db: Path | str) -> SQLiteStore:
    s = open_store(db)
    with s.transaction():  # each test starts from an empty desk
        for u in ("lev", "other"):
            for item in s.desk.library(u):
                s.desk.remove_items(u, [item.item])
            s.desk.remove_feedback(u, list(s.desk.feedback(u)))
            for f in s.desk.follows(u):
                s.desk.unfollow(u, f.kind, f.value)
    return s


def _levine(store: SQLiteStore) -> tuple[list[str], list[str]]:
    """(his works that appeared before SINCE, those that appeared SINCE..UNTIL)."""
    before, during = [], []
    for row in store.desk.candidates("2000-01-01", "2099-12-31"):
        from paperdesk.store.codec import decode_record

        rec = decode_record(row.data)
        if any((a.display or a.name) == "Sergey Levine" for a in rec.authors) and row.work_id:
            w = f"W{row.work_id}"
            (before if row.appeared < SINCE else during if row.appeared <= UNTIL else []).append(w)
    return sorted(set(before)), sorted(set(during))


def test_a_researchers_later_papers_rank_high_with_reasons(store: SQLiteStore) -> None:
    before, during = _levine(store)
    assert len(before) >= 8 and len(during) >= 3
    lib.add(store, "lev", before)
    out = recommend(store, "lev", since=SINCE, until=UNTIL, limit=20)
    assert set(out) == {"user", "since", "until", "subject", "hits"}
    assert out["user"] == "lev" and out["since"] == SINCE and out["until"] == UNTIL
    ids = [h["work_id"] for h in out["hits"]]
    found = [w for w in during if w in ids]
    pool = len({(r.work_id or r.key) for r in store.desk.candidates(SINCE, UNTIL)})
    assert pool > 200
    assert len(found) >= (len(during) + 1) // 2, (found, during, pool)
    assert not set(ids) & set(before)  # never what the library holds
    hit = out["hits"][ids.index(found[0])]
    assert set(hit) >= {"work_id", "keys", "title", "authors", "date", "score", "reasons"}
    assert any("authors of papers you saved" in r for r in hit["reasons"]), hit["reasons"]
    assert all(SINCE <= h["date"] <= UNTIL for h in out["hits"])
    scores = [h["score"] for h in out["hits"]]
    assert scores == sorted(scores, reverse=True)
    # another user's ranking knows nothing of lev's library
    other = recommend(store, "other", since=SINCE, until=UNTIL, limit=20)
    assert not any("saved" in r or "library" in r for h in other["hits"] for r in h["reasons"])


def test_feedback_hides_and_teaches(store: SQLiteStore) -> None:
    before, during = _levine(store)
    lib.add(store, "lev", before)
    first = recommend(store, "lev", since=SINCE, until=UNTIL, limit=10)["hits"]
    hidden = first[0]["work_id"]
    feedback(store, "lev", [hidden], -1)
    again = [h["work_id"] for h in recommend(store, "lev", since=SINCE, until=UNTIL, limit=200)["hits"]]
    assert hidden not in again
    feedback(store, "lev", [hidden], None)  # cleared: it may come back
    assert hidden in [h["work_id"] for h in recommend(store, "lev", since=SINCE, until=UNTIL, limit=10)["hits"]]


def test_follows_subject_filter_and_seen(store: SQLiteStore) -> None:
    follow(store, "other", "author", "Yann LeCun")
    out = recommend(store, "other", since=SINCE, until=UNTIL, limit=5)
    assert out["hits"] and "Yann LeCun" in out["hits"][0]["authors"]
    assert any("whom you follow" in r for r in out["hits"][0]["reasons"])
    cv = recommend(store, "other", since=SINCE, until=UNTIL, subject="cs.CV", limit=50)
    assert cv["subject"] == "cs.CV" and cv["hits"]
    assert all(any(s.startswith("cs.CV") for s in h["subjects"]) for h in cv["hits"])
    shown = recommend(store, "other", since=SINCE, until=UNTIL, limit=5, mark_seen=True)["hits"]
    assert all(h["new"] for h in shown)
    later = recommend(store, "other", since=SINCE, until=UNTIL, limit=50, new_only=True)["hits"]
    assert not {h["work_id"] for h in shown} & {h["work_id"] for h in later}
    with pytest.raises(QueryError):
        recommend(store, "other", since="2026-01-31", until="2025-12-01")
    with pytest.raises(QueryError):
        recommend(store, "other", since="yesterday")


def test_cli_recommend_and_feedback(db: Path | str) -> None:
    run = CliRunner().invoke
    r = run(main, ["--db", str(db), "follow", "--user", "other", "--author", "Percy Liang", "--json"])
    assert r.exit_code == 0, r.output
    r = run(main, ["--db", str(db), "recommend", "--user", "other", "--since", SINCE, "--until", UNTIL,
                   "--limit", "3", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert len(out["hits"]) == 3 and all(h["reasons"] for h in out["hits"])
    top = out["hits"][0]["work_id"]
    r = run(main, ["--db", str(db), "feedback", "--user", "other", "--not-relevant", top])
    assert r.exit_code == 0, r.output
    r = run(main, ["--db", str(db), "recommend", "--user", "other", "--since", SINCE, "--until", UNTIL, "--json"])
    assert top not in [h["work_id"] for h in json.loads(r.stdout)["hits"]]
    r = run(main, ["--db", str(db), "recommend", "--user", "nobody"])
    assert r.exit_code == 3


HEAVY = ("torch", "sentence_transformers", "model2vec", "sklearn", "tantivy", "usearch", "fastapi",
         "jinja2", "paperdesk.search.engine", "paperdesk.web", "paperdesk.resolve.works_match")
"""What `paperdesk recommend` must not import: embedding models, the search engine, the web
stack, the works resolver (~1 s of a cold call's CPU before they were kept out)."""


def test_the_recommend_command_imports_nothing_heavy(db: Path | str, store: SQLiteStore) -> None:
    lib.add(store, "lev", _levine(store)[0])
    code = (
        "import sys\n"
        "from paperdesk.cli import main\n"
        f"main(['--db', {str(db)!r}, 'recommend', '--user', 'lev', '--since', {SINCE!r}, '--until', {UNTIL!r},"
        " '--limit', '5', '--json'], standalone_mode=False)\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *shown, heavy = out.stdout.strip().splitlines()
    assert heavy == "[]"
    assert len(json.loads("\n".join(shown))["hits"]) == 5


def _followed(store: SQLiteStore, user: str) -> set[str]:
    hits = recommend(store, user, since=SINCE, until=UNTIL, limit=1000)["hits"]
    return {h["work_id"] for h in hits if any("whom you follow" in r for r in h["reasons"])}


def _profile_works(store: SQLiteStore, author_id: str) -> set[str]:
    """The profile's works that appeared SINCE..UNTIL (from its signatures)."""
    keys = {r["key"] for w in profile(store, author_id)["works"] for r in w["records"]}
    return {f"W{row.work_id}" for row in store.desk.candidates(SINCE, UNTIL) if row.key in keys}


def test_an_author_followed_is_a_profile_not_a_name(store: SQLiteStore) -> None:
    out = follow(store, "lev", "author", "Sergey Levine")
    assert out["matched"] == "profile" and out["label"] == "Sergey Levine"
    aid = out["value"]
    assert aid.startswith("a") and len(aid) == 11
    assert store.desk.follows("lev")[0].label == "Sergey Levine"
    mine = _profile_works(store, aid)
    assert len(mine) >= 3
    assert _followed(store, "lev") == mine
    # a name follow (made before profiles existed) matches the name, spelt in full
    store.desk.follow("other", "author", "Sergey Levine", "2026-01-01T00:00:00Z")
    by_name = _followed(store, "other")
    assert by_name >= mine
    # two of his works go to another person with the same name: the follow stays with
    # the profile, the name follow does not notice
    moved = sorted(mine)[:2]
    split = split_author(store, aid, moved, who="test")
    kept = split["author_id"]
    assert kept and split["new_author_id"] != kept
    assert _profile_works(store, kept) == mine - set(moved)
    assert _followed(store, "lev") == mine - set(moved)
    assert _followed(store, "other") == by_name
    # merged back (whichever id survives, the old one redirects): followed again
    merge_authors(store, kept, split["new_author_id"], who="test")
    assert _followed(store, "lev") == mine
    listed = {f.value: f.label for f in store.desk.follows("lev")}
    assert listed == {aid: "Sergey Levine"}
    # a name no profile has is kept as a name; unfollowing by the name drops the profile
    assert follow(store, "lev", "author", "Nobody Atall Here")["matched"] == "name"
    follow(store, "lev", "author", "Sergey Levine", on=False)
    assert [f.value for f in store.desk.follows("lev")] == ["Nobody Atall Here"]


def test_the_author_page_follows_the_profile(db: Path | str, store: SQLiteStore) -> None:
    import re

    from fastapi.testclient import TestClient

    from paperdesk.web.app import WebSettings, create_app

    aid = follow(store, "other", "author", "Sergey Levine")["value"]
    follow(store, "other", "author", aid, on=False)
    with TestClient(create_app(db, WebSettings())) as c:
        page = c.get(f"/authors/{aid}").text
        assert f'name="value" value="{aid}"' in page and 'action="/desk/follow"' in page
        r = c.post("/desk/follow", data={"kind": "author", "value": aid, "next": f"/authors/{aid}"},
                   follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next=/authors/")
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', c.get("/login").text).group(1)  # type: ignore[union-attr]
        assert c.post("/login", data={"username": "other", "password": PASSWORD, "csrf": token},
                      follow_redirects=False).status_code == 303
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', c.get("/desk").text).group(1)  # type: ignore[union-attr]
        r = c.post("/desk/follow", data={"kind": "author", "value": aid, "csrf": token, "next": f"/authors/{aid}"},
                   follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"/authors/{aid}"
        desk = c.get("/api/desk").json()
        assert desk["follows"] == [{"kind": "author", "value": aid, "label": "Sergey Levine", "profile": True}]
        assert f'<a href="/authors/{aid}">Sergey Levine</a>' in c.get("/desk").text
