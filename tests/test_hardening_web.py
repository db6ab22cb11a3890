"""#18 over real HTTP (a uvicorn server on loopback, httpx as the client, a real SQLite
file): feed links from the configured base URL whatever the Host header says (item 3),
sessions that end with sign-out and password changes (item 4), and the smaller items of
7 — JSON errors for bad bodies and refused corrections, no self-merge, HEAD and `Allow`,
a per-account sign-in back-off."""

from __future__ import annotations

import re
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


def test_links_are_checked_at_ingest(site: dict[str, Any]) -> None:
    with _client(site) as c:
        links = {s["key"]: s["url"] for w in _works(c) for s in w["sources"]}
    for i in range(6):
        assert links[f"probe:link{i}"] is None, links  # dropped (the raw payload keeps it)
    assert links["probe:doi"] == "https://doi.org/10.1234/abc.5"
    assert links["probe:plain"] == "https://example.org/paper/1"
