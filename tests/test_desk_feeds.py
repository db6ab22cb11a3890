"""Saved searches, feed tokens and the daily e-mail digest, the digest received by a real
SMTP server (aiosmtpd) on 127.0.0.1 started here."""

from __future__ import annotations

import email
import json
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import BACKENDS, PGSchemas
from loopback import feed_store, free_port
from paperdesk.cli import main
from paperdesk.desk import feeds
from paperdesk.desk import library as lib
from paperdesk.desk.digest import send_digests, set_email
from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store import curators, open_store

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module", params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path | str:
    """A resolved, indexed feed store with three users: SQLite, then PostgreSQL."""
    schemas = PGSchemas()
    request.addfinalizer(schemas.close)
    tmp = tmp_path_factory.mktemp("feeds")
    path = feed_store(tmp, db=schemas.new() if request.param == "postgresql" else None)
    with open_store(path) as store:
        for u in ("ann", "ben", "cat"):
            curators.add_user(store, u, PASSWORD)
    return path


class Inbox:
    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], Message]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos),
                              email.message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture()
def smtp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbox]:
    from aiosmtpd.controller import Controller

    inbox = Inbox()
    port = free_port()
    ctl = Controller(inbox, hostname="127.0.0.1", port=port)
    ctl.start()
    monkeypatch.setenv("PAPERDESK_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("PAPERDESK_SMTP_PORT", str(port))
    monkeypatch.setenv("PAPERDESK_SMTP_FROM", "desk@papers.example.org")
    try:
        yield inbox
    finally:
        ctl.stop()


def test_saved_search_with_negative_and_subject_filters(db: Path | str) -> None:
    with open_store(db) as store:
        feeds.save_search(store, "ann", "splat", "gaussian -slam cat:cs.CV")
        with pytest.raises(PaperdeskError, match="already"):
            feeds.save_search(store, "ann", "splat", "other")
        with pytest.raises(PaperdeskError, match="not a valid search"):
            feeds.save_search(store, "ann", "bad", 'title:"unclosed')
        out = feeds.run_search(store, "ann", "splat")
        assert out["hits"]
        for h in out["hits"]:
            assert "cs.CV" in h["subjects"]
            assert "slam" not in (h["title"] + " " + (h["snippet"] or "")).lower()
        dates = [h["date"] for h in out["hits"]]
        assert dates == sorted(dates, reverse=True)
        # not relevant: out of the saved search's results too
        first = out["hits"][0]["work_id"]
        store.desk.put_feedback("ann", [first], -1, "now")
        assert first not in [h["work_id"] for h in feeds.run_search(store, "ann", "splat")["hits"]]
        with pytest.raises(NotFoundError):
            feeds.run_search(store, "ben", "splat")  # ann's, not ben's


def test_feed_tokens_are_random_hashed_and_revocable(db: Path | str) -> None:
    with open_store(db) as store:
        feeds.save_search(store, "ben", "vision", "vision")
        a = feeds.new_token(store, "ben")
        b = feeds.new_token(store, "ben", "vision")
        assert a["token"] != b["token"] and len(a["token"]) >= 40
        assert feeds.feed_of(store, a["token"])["user"] == "ben"
        assert feeds.feed_of(store, b["token"])["title"].startswith("paperdesk: vision")
        raw = store.conn.execute("SELECT token_hash FROM feed_tokens WHERE username = 'ben'").fetchall()
        assert all(a["token"] not in r[0] and b["token"] not in r[0] for r in raw)
        assert feeds.revoke(store, "ben", b["id"]) == 1
        with pytest.raises(NotFoundError):
            feeds.feed_of(store, b["token"])
        feeds.remove_search(store, "ben", "vision")
        assert [(t["id"], t["scope"]) for t in feeds.tokens(store, "ben")] == [(a["id"], "personal")]
        assert feeds.revoke(store, "ben") == 1
        with pytest.raises(NotFoundError):
            feeds.feed_of(store, a["token"])


def test_digest_is_sent_once_through_smtp(db: Path | str, smtp: Inbox) -> None:
    with open_store(db) as store:
        day = store.desk.latest_day()
        works = [r.work_id for r in store.desk.candidates(day or "", day or "")][:3]
        lib.add(store, "cat", [f"W{w}" for w in works])
        set_email(store, "cat", "cat@example.org", digest=True)
        with pytest.raises(PaperdeskError, match="e-mail address"):
            set_email(store, "ann", "not an address\r\nBcc: x@y.z", digest=True)
        report = send_digests(store, base_url="https://papers.example.org/", limit=5)
        assert [(r["user"], r["sent"], r["hits"]) for r in report] == [("cat", True, 5)]
        assert len(smtp.messages) == 1
        sender, to, msg = smtp.messages[0]
        assert sender == "desk@papers.example.org" and to == ["cat@example.org"]
        assert msg["Subject"].startswith("paperdesk: 5 new papers for you")
        text = next(p for p in msg.walk() if p.get_content_type() == "text/plain").get_payload(decode=True).decode()
        html = next(p for p in msg.walk() if p.get_content_type() == "text/html").get_payload(decode=True).decode()
        shown = {line.strip().rsplit("/", 1)[-1] for line in text.splitlines()
                 if line.strip().startswith("https://papers.example.org/papers/")}
        assert len(shown) == 5 and not shown & {f"W{w}" for w in works}
        assert all(f"https://papers.example.org/papers/{w}" in html for w in shown)
        # the next digest has only what was not sent yet
        again = send_digests(store, base_url="https://papers.example.org/", limit=5)
        assert again[0]["sent"] and len(smtp.messages) == 2
        text2 = next(p for p in smtp.messages[1][2].walk()
                     if p.get_content_type() == "text/plain").get_payload(decode=True).decode()
        assert not any(f"/papers/{w}\n" in text2 + "\n" for w in shown)
        dry = send_digests(store, base_url="https://papers.example.org/", dry_run=True)
        assert dry[0]["sent"] is False and len(smtp.messages) == 2


def test_digest_reports_an_unreachable_server(db: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERDESK_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("PAPERDESK_SMTP_PORT", str(free_port()))  # nothing listens there
    with open_store(db) as store:
        set_email(store, "ann", "ann@example.org", digest=True)
        lib.add(store, "ann", [f"W{store.desk.candidates('2025-03-18', '2025-03-18')[0].work_id}"])
        with pytest.raises(PaperdeskError, match="SMTP"):
            send_digests(store, base_url="https://papers.example.org/", username="ann")


def test_cli_saved_search_feed_token_and_digest(db: Path | str, smtp: Inbox) -> None:
    run = CliRunner().invoke
    d = ["--db", str(db)]
    r = run(main, [*d, "saved-search", "add", "--user", "ben", "models", "language model -vision", "--json"])
    assert r.exit_code == 0, r.output
    r = run(main, [*d, "saved-search", "list", "--user", "ben", "--json"])
    assert [s["query"] for s in json.loads(r.stdout)] == ["language model -vision"]
    r = run(main, [*d, "saved-search", "run", "--user", "ben", "models", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"]
    r = run(main, [*d, "feed-token", "new", "--user", "ben", "--search", "models", "--json"])
    tok = json.loads(r.stdout)
    assert tok["path"] == f"/feeds/{tok['token']}.atom"
    r = run(main, [*d, "feed-token", "revoke", "--user", "ben", tok["id"], "--json"])
    assert json.loads(r.stdout)["revoked"] == 1
    r = run(main, [*d, "digest", "--user", "ben"])
    assert r.exit_code == 3  # ben gave no address
    r = run(main, [*d, "digest", "--dry-run", "--json"])
    assert r.exit_code == 0, r.output
    assert all(not x["sent"] for x in json.loads(r.stdout))


def test_a_work_is_shown_once_across_a_merge(db: Path | str) -> None:
    """A work shown to a user, then merged into another (a second copy of one paper), does
    not come back as new under the work it joined."""
    from paperdesk.desk.recommend import recommend
    from paperdesk.resolve.works_curate import merge_works

    with open_store(db) as store:
        curators.add_user(store, "dan", PASSWORD)
        day = "2025-03-18"
        lib.add(store, "dan", [f"W{store.desk.candidates(day, day)[0].work_id}"])
        hits = recommend(store, "dan", since=day, until=day, limit=300)["hits"]
        shown, other = hits[0]["work_id"], hits[-1]["work_id"]
        recommend(store, "dan", since=day, until=day, limit=1, mark_seen=True)
        assert [h["work_id"] for h in recommend(store, "dan", since=day, until=day, limit=1)["hits"]] == [shown]
        kept = merge_works(store, other, shown, who="test")
        assert kept == other
        after = recommend(store, "dan", since=day, until=day, limit=300)["hits"]
        mark = {h["work_id"]: h["new"] for h in after}
        assert shown not in mark and mark[other] is False
        assert other not in [h["work_id"] for h in recommend(store, "dan", since=day, until=day,
                                                             limit=300, new_only=True)["hits"]]
