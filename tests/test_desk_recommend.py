"""Recommendations on a real store: the committed feed lines plus every record of four
prolific researchers (tests/data/feed/authors-slice.jsonl.gz), resolved into works.

A user whose library is Sergey Levine's papers before December 2025 gets his later papers
near the top of December-January (co-authors and text), with reasons; saved and
not-relevant works never come back; follows and the subject filter do what they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import feed_file
from paperdesk.cli import main
from paperdesk.desk import library as lib
from paperdesk.desk.recommend import feedback, follow, recommend
from paperdesk.errors import QueryError
from paperdesk.ingest import ingest_paths
from paperdesk.resolve.works_run import resolve_works
from paperdesk.store import curators, open_store
from paperdesk.store.sqlite import SQLiteStore

SLICE = Path(__file__).parent / "data" / "feed" / "authors-slice.jsonl.gz"
PASSWORD = "correct horse battery"
SINCE, UNTIL = "2025-12-01", "2026-01-31"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "p.db"
    with open_store(path) as store:
        ingest_paths(store, [feed_file(), SLICE])
        resolve_works(store)
        curators.add_user(store, "lev", PASSWORD)
        curators.add_user(store, "other", PASSWORD)
    return path


@pytest.fixture()
def store(db: Path) -> SQLiteStore:
    s = open_store(db)
    with s.transaction():  # each test starts from an empty desk
        for u in ("lev", "other"):
            for item in s.desk.library(u):
                s.desk.remove_items(u, [item.item])
            s.desk.remove_feedback(u, list(s.desk.feedback(u)))
            for kind, value in s.desk.follows(u):
                s.desk.unfollow(u, kind, value)
    return s


def _levine(store: SQLiteStore) -> tuple[list[str], list[str]]:
    """(his works that appeared before SINCE, those that appeared SINCE..UNTIL)."""
    before, during = [], []
    for row in store.desk.candidates("2000-01-01", "2099-12-31"):
        from paperdesk.store.sqlite import decode_record

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


def test_cli_recommend_and_feedback(db: Path) -> None:
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
