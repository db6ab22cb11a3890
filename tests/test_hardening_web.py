"""#18 over real HTTP (a uvicorn server on loopback, httpx as the client, a real SQLite
file): feed links from the configured base URL whatever the Host header says (item 3),
sessions that end with sign-out and password changes (item 4), and the smaller items of
7 — JSON errors for bad bodies and refused corrections, no self-merge, HEAD and `Allow`,
a per-account sign-in back-off."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree

from loopback import build_store, serve
from paperdesk.store import curators, open_store

PASSWORD = "correct horse battery"
TOKEN = "t0ken-for-hardening-tests"
BASE_URL = "https://papers.example.org/desk/"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    pytest.importorskip("uvicorn")
    from paperdesk.web.app import WebSettings, create_app

    db = build_store(Path(tmp_path_factory.mktemp("web")))
    with open_store(db) as store:
        curators.add_curator(store, "carol", PASSWORD)
        curators.add_curator(store, "dave", PASSWORD)
    # the setting as an operator gives it: in the server's environment
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PAPERDESK_BASE_URL", BASE_URL)
        settings = WebSettings(admin_token=TOKEN)
    with serve(create_app(db, settings)) as base:
        yield {"base": base, "db": db}


def _client(site: dict[str, Any]) -> httpx.Client:
    return httpx.Client(base_url=site["base"], timeout=30, follow_redirects=False)


def _csrf(c: httpx.Client, path: str) -> str:
    m = re.search(r'name="csrf" value="([0-9a-f]+)"', c.get(path).text)
    assert m, f"no CSRF field on {path}"
    return m.group(1)


def _works(c: httpx.Client) -> list[dict[str, Any]]:
    works: list[dict[str, Any]] = c.get("/index.json", params={"day": "2025-03-17"}).json()["works"]
    return works


def _sign_in(c: httpx.Client, user: str, password: str = PASSWORD) -> httpx.Response:
    return c.post("/login", data={"username": user, "password": password, "csrf": _csrf(c, "/login")})


ADMIN = {"authorization": f"Bearer {TOKEN}"}


def _work_and_author(c: httpx.Client) -> tuple[str, str]:
    works = _works(c)
    author = next(a["author_id"] for w in works for a in w["authors"] if a["author_id"])
    return str(works[0]["work_id"]), str(author)


def _assert_json_error(resp: httpx.Response, status: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    assert "content-security-policy" in resp.headers and resp.headers["x-content-type-options"] == "nosniff"
    body: dict[str, Any] = resp.json()
    assert set(body) == {"error"} and body["error"]["status"] == status and body["error"]["detail"]
    return body


# -- item 3: the Host header -------------------------------------------------------------


@pytest.mark.parametrize("path", ["/subjects/cs.CR.rss", "/feed.atom", "/feed.rss?subject=cs.CR"])
def test_feed_links_ignore_the_host_header(site: dict[str, Any], path: str) -> None:
    with _client(site) as c:
        forged = c.get(path, headers={"host": "evil.example"})
        after = c.get(path)  # a later reader, served from the cache
    for resp in (forged, after):
        assert resp.status_code == 200
        assert b"evil.example" not in resp.content and b"127.0.0.1" not in resp.content
        root = etree.fromstring(resp.content)
        links = [e.get("href") for e in root.iter("{http://www.w3.org/2005/Atom}link")]
        links += [e.text for e in root.iter("link", "guid", "{http://www.w3.org/2005/Atom}id")]
        links = [x for x in links if x]
        assert links and all(x.startswith(BASE_URL) for x in links), links


def test_base_url_setting_is_checked() -> None:
    from paperdesk.errors import PaperdeskError
    from paperdesk.web.app import WebSettings

    assert WebSettings(base_url="https://a.example/x").base_url == "https://a.example/x/"
    for bad in ("javascript:alert(1)//", "papers.example.org", "https://a.example/?q=1"):
        with pytest.raises(PaperdeskError):
            WebSettings(base_url=bad)


# -- item 4: sessions end ----------------------------------------------------------------


def _replay_merge(site: dict[str, Any], cookie: str) -> httpx.Response:
    """An attacker holding a copied session cookie: fresh CSRF pair of their own, then a
    merge from the browser form."""
    with _client(site) as c:
        c.cookies.set("pd_session", cookie)
        a, b = (w["work_id"] for w in _works(c)[:2])
        return c.post(f"/papers/{a}/merge", data={"other": b, "csrf": _csrf(c, f"/papers/{a}")})


def test_cookie_replayed_after_logout_fails(site: dict[str, Any]) -> None:
    with _client(site) as c:
        assert _sign_in(c, "carol").status_code == 303
        cookie = c.cookies["pd_session"]
        # signed in: the session works (a split that the server refuses proves who we are)
        assert c.get("/login").text.count("carol") >= 1
        assert c.post("/logout", data={"csrf": _csrf(c, "/login")}).status_code == 303
    replay = _replay_merge(site, cookie)
    assert replay.status_code == 401, replay.text


def test_cookie_replayed_after_password_reset_fails(site: dict[str, Any]) -> None:
    with _client(site) as c:
        assert _sign_in(c, "dave").status_code == 303
        cookie = c.cookies["pd_session"]
    with open_store(site["db"]) as store:  # what `paperdesk curator add dave` does
        curators.add_curator(store, "dave", "a brand new password")
    replay = _replay_merge(site, cookie)
    assert replay.status_code == 401, replay.text
    with open_store(site["db"]) as store:
        curators.add_curator(store, "dave", PASSWORD)


def test_a_live_session_still_merges(site: dict[str, Any]) -> None:
    with _client(site) as c:
        assert _sign_in(c, "carol").status_code == 303
        works = _works(c)
        a, b = works[-2]["work_id"], works[-1]["work_id"]
        done = c.post(f"/papers/{a}/merge", data={"other": b, "csrf": _csrf(c, f"/papers/{a}")})
        assert done.status_code == 303
        assert c.get(f"/papers/{b}.json").json()["work_id"] == a


# -- item 7: errors, HEAD, Allow, back-off -----------------------------------------------


def test_bad_bodies_and_refused_corrections_are_json_400s(site: dict[str, Any]) -> None:
    with _client(site) as c:
        w, author = _work_and_author(c)
        for path in (f"/api/papers/{w}/merge", f"/api/papers/{w}/split",
                     f"/api/authors/{author}/merge", f"/api/authors/{author}/split"):
            for body in (b"{not json", b'{"other": "W1"', b"\xff\xfe"):
                resp = c.post(path, content=body, headers={**ADMIN, "content-type": "application/json"})
                _assert_json_error(resp, 400)
        unknown = c.post(f"/api/papers/{w}/split", json={"records": "probe:no-such-record"}, headers=ADMIN)
        assert "probe:no-such-record" in _assert_json_error(unknown, 400)["error"]["detail"]
        unknown = c.post(f"/api/authors/{author}/split", json={"works": "probe:no-such-record"}, headers=ADMIN)
        _assert_json_error(unknown, 400)


def test_merging_a_work_into_itself_is_refused(site: dict[str, Any]) -> None:
    with _client(site) as c:
        w, author = _work_and_author(c)
        # merging a work into itself, by its id or by an alias of it
        _assert_json_error(c.post(f"/api/papers/{w}/merge", json={"other": w}, headers=ADMIN), 400)
        _assert_json_error(c.post(f"/api/papers/{w}/merge", json={"other": w.lower()}, headers=ADMIN), 400)
        _assert_json_error(c.post(f"/api/authors/{author}/merge", json={"other": author}, headers=ADMIN), 400)
        _assert_json_error(c.post("/api/papers/W999999/merge", json={"other": w}, headers=ADMIN), 404)


def test_head_and_allow(site: dict[str, Any]) -> None:
    with _client(site) as c:
        wid = _works(c)[0]["work_id"]
        for path in ("/", f"/papers/{wid}", "/feed.atom", "/index.json", "/subjects"):
            get, head = c.get(path), c.head(path)
            assert head.status_code == 200 == get.status_code, path
            assert head.content == b"" and head.headers["content-type"] == get.headers["content-type"]
            assert "content-security-policy" in head.headers
        for method, path in (("POST", f"/papers/{wid}"), ("DELETE", "/api/daily"), ("PUT", "/")):
            resp = c.request(method, path, headers={"accept": "application/json"})
            _assert_json_error(resp, 405)
            assert {"GET", "HEAD"} <= set(resp.headers["allow"].replace(" ", "").split(",")), path
        resp = c.get("/logout")
        assert resp.status_code == 405 and "POST" in resp.headers["allow"]


def test_sign_in_backs_off_per_account(site: dict[str, Any]) -> None:
    with _client(site) as c:
        for _ in range(5):  # five mistakes cost nothing
            assert _sign_in(c, "carol", "not the password").status_code == 401
        blocked = _sign_in(c, "carol")  # even the right password waits now
        assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
        assert _sign_in(c, "dave").status_code == 303  # another account is not held up
        time.sleep(int(blocked.headers["retry-after"]) + 0.2)
        assert _sign_in(c, "carol", "still not it").status_code == 401
        again = _sign_in(c, "carol")
        assert again.status_code == 429  # the wait doubled
        time.sleep(int(again.headers["retry-after"]) + 0.2)
        assert _sign_in(c, "carol").status_code == 303  # and a success clears it
        assert _sign_in(c, "carol", "wrong once more").status_code == 401


def test_links_are_checked_at_ingest(site: dict[str, Any]) -> None:
    with _client(site) as c:
        links = {s["key"]: s["url"] for w in _works(c) for s in w["sources"]}
    for i in range(6):
        assert links[f"probe:link{i}"] is None, links  # dropped (the raw payload keeps it)
    assert links["probe:doi"] == "https://doi.org/10.1234/abc.5"
    assert links["probe:plain"] == "https://example.org/paper/1"
