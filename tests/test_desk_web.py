"""The desk over real HTTP (uvicorn on 127.0.0.1, a real SQLite store of 300 feed records):
sign-up and its switch, every write signed in and CSRF-checked, one user never reaching
another's desk, curators alone curating, the private Atom feeds (validated) and their
revocation, sessions ending at sign-out and at a password change."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from lxml import etree

from conftest import BACKENDS, PGSchemas
from loopback import feed_store, serve
from paperdesk.store import curators, open_store

PASSWORD = "correct horse battery"
ATOM = "{http://www.w3.org/2005/Atom}"
BIB = b"""@misc{a, title = {Simulation of prosthetic vision with PRIMA system},
author = {Park, Jungyeon}, eprint = {2503.11677}, archivePrefix = {arXiv}}
@book{b, title = {A Book Nobody Indexed Here}, author = {Nobody, Some}, year = {1999}}
"""


@pytest.fixture(scope="module", params=BACKENDS)
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Two servers (sign-up open, closed) on one store: SQLite, then PostgreSQL."""
    from paperdesk.web.app import WebSettings, create_app

    tmp = tmp_path_factory.mktemp("deskweb")
    schemas = PGSchemas()
    request.addfinalizer(schemas.close)
    db = feed_store(tmp, db=schemas.new() if request.param == "postgresql" else None)
    with open_store(db) as store:
        curators.add_curator(store, "carol", PASSWORD)
        curators.add_user(store, "bob", PASSWORD)
    with serve(create_app(db, WebSettings(signup=True))) as base, \
            serve(create_app(db, WebSettings(signup=False))) as closed:
        yield {"base": base, "closed": closed, "db": db}


def _client(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, timeout=30, follow_redirects=False)


def _csrf(c: httpx.Client, path: str = "/login") -> str:
    m = re.search(r'name="csrf" value="([0-9a-f]+)"', c.get(path, follow_redirects=True).text)
    assert m, f"no CSRF field on {path}"
    return m.group(1)


def _sign_in(c: httpx.Client, user: str, password: str = PASSWORD) -> None:
    r = c.post("/login", data={"username": user, "password": password, "csrf": _csrf(c)})
    assert r.status_code == 303, r.text


def _sign_up(c: httpx.Client, user: str) -> httpx.Response:
    return c.post("/signup", data={"username": user, "password": PASSWORD, "password2": PASSWORD,
                                   "csrf": _csrf(c, "/signup")})


def _work(c: httpx.Client, n: int = 0) -> str:
    return str(c.get("/index.json", params={"day": "2025-03-18"}).json()["works"][n]["work_id"])


def test_sign_up_is_switchable(site: dict[str, Any]) -> None:
    with _client(site["closed"]) as c:
        assert c.get("/signup").status_code == 404
        r = c.post("/signup", data={"username": "x", "password": PASSWORD, "password2": PASSWORD,
                                    "csrf": _csrf(c)})
        assert r.status_code == 404
        assert "Sign up" not in c.get("/login").text
    with _client(site["base"]) as c:
        assert 'href="/signup"' in c.get("/login").text
        r = _sign_up(c, "anna")
        assert r.status_code == 303 and r.headers["location"] == "/desk"
        assert c.get("/api/me").json()["user"] == "anna"
        assert c.get("/desk").status_code == 200
    with _client(site["base"]) as c:
        assert _sign_up(c, "anna").status_code == 400  # taken
        r = c.post("/signup", data={"username": "newer", "password": PASSWORD, "password2": "other password",
                                    "csrf": _csrf(c, "/signup")})
        assert r.status_code == 400 and "differ" in r.text
        r = c.post("/signup", data={"username": "shorty", "password": "short", "password2": "short",
                                    "csrf": _csrf(c, "/signup")})
        assert r.status_code == 400 and "10 characters" in r.text
        r = c.post("/signup", data={"username": "nocsrf", "password": PASSWORD, "password2": PASSWORD})
        assert r.status_code == 403
    with open_store(site["db"]) as store:
        assert curators.role_of(store, "anna") == "user"
        assert store.desk.user("newer") is None and store.desk.user("nocsrf") is None


def test_writes_need_a_session_and_the_csrf_token(site: dict[str, Any]) -> None:
    w = None
    with _client(site["base"]) as anon:
        w = _work(anon)
        token = _csrf(anon, "/")
        r = anon.post("/api/library/add", json={"item": w}, headers={"X-CSRF-Token": token})
        assert r.status_code == 401
        r = anon.post("/desk/library/add", data={"item": w, "csrf": token, "next": "/"})
        assert r.status_code == 303 and r.headers["location"].startswith("/login?next=")
        assert anon.get("/desk").headers["location"].startswith("/login?next=/desk")
        assert anon.get("/api/desk").status_code == 401
        assert anon.get("/desk/library.bib").status_code == 401
    with _client(site["base"]) as c:
        _sign_in(c, "bob")
        r = c.post("/api/library/add", json={"item": w})  # no CSRF token
        assert r.status_code == 403
        r = c.post("/api/library/add", json={"item": w}, headers={"X-CSRF-Token": "0" * 64})
        assert r.status_code == 403
        token = _csrf(c, "/desk")
        r = c.post("/api/library/add", json={"item": w}, headers={"X-CSRF-Token": token})
        assert r.status_code == 200 and r.json()["added"] is True
        assert w in c.get("/api/me").json()["saved"]
        r = c.post("/api/library/add", json={"item": "W999999"}, headers={"X-CSRF-Token": token})
        assert r.status_code == 404 and r.json()["error"]["status"] == 404
        r = c.post("/api/library/add", content=b"{nope", headers={"X-CSRF-Token": token,
                                                                   "Content-Type": "application/json"})
        assert r.status_code == 400
        r = c.post("/desk/library/remove", data={"item": w, "csrf": token})
        assert r.status_code == 303
        assert w not in c.get("/api/me").json()["saved"]
        # a plain user is no curator
        r = c.post(f"/papers/{w}/merge", data={"other": _work(c, 1), "csrf": token})
        assert r.status_code == 401


def test_one_user_never_sees_another_users_desk(site: dict[str, Any]) -> None:
    with _client(site["base"]) as a, _client(site["base"]) as b:
        _sign_up(a, "alma")
        token = _csrf(a, "/desk")
        r = a.post("/api/library/import", data={"csrf": token}, files={"file": ("lib.bib", BIB)})
        assert r.status_code == 200, r.text
        report = r.json()
        assert [x["matched"] for x in report["report"]] == ["arxiv", "own"]
        own = report["report"][1]["item"]
        a.post("/api/searches", json={"name": "mine", "query": "vision -medical"}, headers={"X-CSRF-Token": token})
        _sign_in(b, "bob")
        bt = _csrf(b, "/desk")
        desk = b.get("/api/desk").json()
        assert desk["user"] == "bob"
        assert all(i["item"] != own for i in desk["library"]) and desk["searches"] == []
        assert "A Book Nobody" not in b.get("/desk").text
        # naming alma's own record gets bob nothing
        r = b.post("/api/library/add", json={"item": own}, headers={"X-CSRF-Token": bt})
        assert r.status_code == 404
        r = b.post("/api/feedback", json={"item": own, "label": "-1"}, headers={"X-CSRF-Token": bt})
        assert r.status_code == 404
        r = b.post("/api/searches/remove", json={"name": "mine"}, headers={"X-CSRF-Token": bt})
        assert r.status_code == 404
        assert [s["name"] for s in a.get("/api/desk").json()["searches"]] == ["mine"]
        # nor revoke her feed address, though he names its id
        feed = a.post("/api/tokens", json={"search": "mine"}, headers={"X-CSRF-Token": token}).json()
        r = b.post("/api/tokens/revoke", json={"id": feed["id"]}, headers={"X-CSRF-Token": bt})
        assert r.status_code == 200 and r.json()["revoked"] == 0
        assert b.get(feed["path"]).status_code == 200  # the address itself is the secret
        assert a.get("/api/desk").json()["tokens"][0]["id"] == feed["id"]
        assert "tokens" in b.get("/api/desk").json() and not b.get("/api/desk").json()["tokens"]
        # alma's export holds her records, bob's none of them
        assert "A Book Nobody Indexed Here" in a.get("/desk/library.bib").text
        assert "A Book Nobody Indexed Here" not in b.get("/desk/library.bib").text


_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
_IRI = re.compile(r"^(https?://|urn:|tag:)\S+$")


def _check_atom(xml: bytes) -> etree._Element:
    """RFC 4287's must-haves: a feed id, title, updated and author (or one per entry);
    each entry an id, a title, an updated date-time and an http(s) link; ids unique
    absolute IRIs; dates RFC 3339 date-times with a zone (section 3.3)."""
    root = etree.fromstring(xml)
    assert root.tag == f"{ATOM}feed"
    for tag in ("id", "title", "updated"):
        assert root.find(f"{ATOM}{tag}") is not None and (root.find(f"{ATOM}{tag}").text or "").strip()
    assert _RFC3339.match(root.findtext(f"{ATOM}updated") or ""), root.findtext(f"{ATOM}updated")
    assert _IRI.match(root.findtext(f"{ATOM}id") or "")
    feed_author = root.find(f"{ATOM}author") is not None
    ids = []
    for e in root.findall(f"{ATOM}entry"):
        for tag in ("id", "title", "updated"):
            assert (e.find(f"{ATOM}{tag}").text or "").strip()
        assert _RFC3339.match(e.findtext(f"{ATOM}updated") or ""), e.findtext(f"{ATOM}updated")
        assert _IRI.match(e.findtext(f"{ATOM}id") or ""), e.findtext(f"{ATOM}id")
        datetime.fromisoformat(e.find(f"{ATOM}updated").text)
        assert e.find(f"{ATOM}link").get("href", "").startswith(("http://", "https://"))
        assert feed_author or e.find(f"{ATOM}author") is not None
        ids.append(e.find(f"{ATOM}id").text)
    assert len(ids) == len(set(ids))
    self_link = [x for x in root.findall(f"{ATOM}link") if x.get("rel") == "self"]
    assert len(self_link) == 1
    return root


def test_private_feeds_validate_and_can_be_revoked(site: dict[str, Any]) -> None:
    with _client(site["base"]) as c:
        _sign_up(c, "feedy")
        token = _csrf(c, "/desk")
        c.post("/api/library/add", json={"item": _work(c)}, headers={"X-CSRF-Token": token})
        r = c.post("/api/searches", json={"name": "splat", "query": "gaussian splatting -slam cat:cs.CV"},
                   headers={"X-CSRF-Token": token})
        assert r.status_code == 200, r.text
        assert c.post("/api/searches", json={"name": "bad", "query": "title:("},
                      headers={"X-CSRF-Token": token}).status_code == 400
        feeds = {}
        for search in (None, "splat"):
            r = c.post("/api/tokens", json={"search": search} if search else {}, headers={"X-CSRF-Token": token})
            assert r.status_code == 200
            feeds[search] = r.json()
        listed = c.get("/api/desk").json()["tokens"]
        assert {t["scope"] for t in listed} == {"personal", "search:splat"}
        assert all(feeds[s]["token"] not in str(listed) for s in feeds)  # shown once, never listed
    with _client(site["base"]) as reader:  # a feed reader: no cookies, only the address
        personal = reader.get(feeds[None]["path"])
        assert personal.status_code == 200 and personal.headers["content-type"].startswith("application/atom+xml")
        assert "no-store" in personal.headers["cache-control"]
        root = _check_atom(personal.content)
        assert len(root.findall(f"{ATOM}entry")) > 0
        search = reader.get(feeds["splat"]["path"])
        root = _check_atom(search.content)
        titles = [e.find(f"{ATOM}title").text.lower() for e in root.findall(f"{ATOM}entry")]
        assert titles and not any("slam" in t for t in titles)
        assert reader.get("/feeds/" + "x" * 43 + ".atom").status_code == 404
        assert reader.get("/feeds/short.atom").status_code == 404
    with _client(site["base"]) as c:
        _sign_in(c, "feedy")
        token = _csrf(c, "/desk")
        r = c.post("/api/tokens/revoke", json={"id": feeds["splat"]["id"]}, headers={"X-CSRF-Token": token})
        assert r.json()["revoked"] == 1
    with _client(site["base"]) as reader:
        assert reader.get(feeds["splat"]["path"]).status_code == 404
        assert reader.get(feeds[None]["path"]).status_code == 200


def test_sessions_end_at_sign_out_and_password_change(site: dict[str, Any]) -> None:
    with _client(site["base"]) as c:
        _sign_up(c, "sess")
        cookie = c.cookies.get("pd_session")
        token = _csrf(c, "/desk")
        assert c.post("/logout", data={"csrf": token}).status_code == 303
    with _client(site["base"]) as replay:
        replay.cookies.set("pd_session", cookie)
        assert replay.get("/api/me").json()["user"] is None
        _sign_in(replay, "sess")
        assert replay.get("/api/me").json()["user"] == "sess"
        with open_store(site["db"]) as store:
            curators.set_password(store, "sess", "a brand new password")
        assert replay.get("/api/me").json()["user"] is None


def test_every_write_needs_the_csrf_token(site: dict[str, Any]) -> None:
    """Each POST route of the app, sent by a signed-in curator (so no role check stops it
    first) without the CSRF token, as JSON and as a form, is refused with 403 and changes
    nothing."""
    from paperdesk.web.app import WebSettings, create_app

    posts = sorted({r.path for r in create_app(site["db"], WebSettings(signup=True)).routes  # type: ignore[attr-defined]
                    if "POST" in (getattr(r, "methods", None) or ())})
    assert len(posts) >= 25 and "/desk/password" in posts and "/api/library/import" in posts
    with _client(site["base"]) as c:
        _sign_in(c, "carol")
        work = _work(c)
        before = c.get("/api/desk").json()
        for path in posts:
            url = path.replace("{work_id}", work).replace("{author_id}", "a0123456789")
            fields = {"item": work, "name": "x", "query": "x", "kind": "subject", "value": "cs.LG",
                      "label": "1", "id": "0" * 12, "other": work, "current": PASSWORD,
                      "password": "another password", "password2": "another password", "username": "carol"}
            for kind in ("json", "form", "wrong"):
                if kind == "json":
                    r = c.post(url, json=fields)
                elif kind == "form":
                    r = c.post(url, data=fields, files={"file": ("a.bib", BIB)} if "import" in url else None)
                else:
                    r = c.post(url, json=fields, headers={"X-CSRF-Token": "f" * 64})
                assert r.status_code == 403, (url, kind, r.status_code, r.text[:200])
        assert c.get("/api/desk").json() == before
        assert c.get("/api/me").json()["user"] == "carol"  # the password is unchanged too


def test_a_password_change_on_the_web_ends_every_other_session(site: dict[str, Any]) -> None:
    new = "a brand new password"
    with _client(site["base"]) as a, _client(site["base"]) as b:
        _sign_up(a, "pw")
        _sign_in(b, "pw")
        old = a.cookies.get("pd_session")
        token = _csrf(a, "/desk")
        r = a.post("/desk/password", data={"current": "not my password", "password": new, "password2": new,
                                           "csrf": token})
        assert r.status_code == 403 and "not right" in r.text
        r = a.post("/api/password", json={"current": PASSWORD, "password": new, "password2": "typo"},
                   headers={"X-CSRF-Token": token})
        assert r.status_code == 400 and "differ" in r.json()["error"]["detail"]
        assert b.get("/api/me").json()["user"] == "pw"  # nothing changed yet
        r = a.post("/api/password", json={"current": PASSWORD, "password": new, "password2": new},
                   headers={"X-CSRF-Token": token})
        assert r.status_code == 200 and r.json()["changed"] is True
        assert a.get("/api/me").json()["user"] == "pw"  # this browser: a new session
        assert a.cookies.get("pd_session") != old
        assert b.get("/api/me").json()["user"] is None  # every other one ended
    with _client(site["base"]) as c:
        c.cookies.set("pd_session", old)
        assert c.get("/api/me").json()["user"] is None
    with _client(site["base"]) as c:
        r = c.post("/login", data={"username": "pw", "password": PASSWORD, "csrf": _csrf(c)})
        assert r.status_code == 401
        _sign_in(c, "pw", new)


def test_stars_on_rows_and_pages_and_the_for_you_day(site: dict[str, Any]) -> None:
    with _client(site["base"]) as c:
        daily = c.get("/", params={"day": "2025-03-18"}).text
        listing = c.get("/index.json", params={"day": "2025-03-18"}).json()
        works = listing["works"]
        assert daily.count('class="star"') == len(works)
        assert f'data-item="{works[0]["work_id"]}"' in c.get(f"/papers/{works[0]['work_id']}").text
        assert c.get("/for-you").headers["location"].startswith("/login")
        _sign_up(c, "fy")
        token = _csrf(c, "/desk")
        c.post("/api/library/add", json={"item": works[0]["work_id"]}, headers={"X-CSRF-Token": token})
        day = c.get("/api/for-you", params={"day": "2025-03-18"}).json()
        ids = [h["work_id"] for h in day["hits"]]
        assert works[0]["work_id"] not in ids and len(ids) == min(200, listing["total"] - 1)
        assert all(h["new"] for h in day["hits"]) and all(h["reasons"] for h in day["hits"])
        again = c.get("/api/for-you", params={"day": "2025-03-18"}).json()
        assert not any(h["new"] for h in again["hits"])  # shown once
        rest = c.get("/api/for-you", params={"day": "2025-03-18", "new": 1}).json()["hits"]
        assert len(rest) == listing["total"] - 1 - len(ids) and not {h["work_id"] for h in rest} & set(ids)
        r = c.post("/desk/feedback", data={"item": ids[0], "label": "-1", "csrf": token})
        assert r.status_code == 303
        html = c.get("/for-you", params={"day": "2025-03-18"}).text
        assert f'id="{ids[0]}"' not in html and f'id="{ids[1]}"' in html
