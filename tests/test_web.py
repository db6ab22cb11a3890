"""In-process HTTP tests of the site and its JSON twins, on real feed records plus a hostile
one (its title and abstract are markup that must render as text)."""

from __future__ import annotations

import json
import re

import bibtexparser
import pytest
from lxml import etree
from starlette.testclient import TestClient

from conftest import BACKENDS, PGSchemas, feed_head, shared_file
from paperdesk.ingest import ingest_paths
from paperdesk.resolve.authors import resolve_authors
from paperdesk.resolve.works_run import resolve_works
from paperdesk.search.indexer import update_index
from paperdesk.store import curators, open_store
from paperdesk.subjects import taxonomy
from paperdesk.web.app import WebSettings, create_app

HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1"> Attention is all you need'
HOSTILE_ABSTRACT = "<script>window.__pwned=1</script> We study $\\mathcal{O}(n^2)$ attention."


@pytest.fixture(scope="module", params=BACKENDS)
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    """The site over a store of the first 600 feed lines, resolved and indexed: on SQLite,
    then on PostgreSQL (every test below runs on both)."""
    tmp = tmp_path_factory.mktemp("web")
    feed = tmp / "feed.jsonl"
    feed.write_bytes(feed_head(600))
    hostile = tmp / "hostile.jsonl"
    hostile.write_text(json.dumps({
        "source": "evil", "id": "1", "title": HOSTILE_TITLE, "abstract": HOSTILE_ABSTRACT,
        "authors": ["Mallory <b>Bold</b>"], "date": "2025-03-18", "categories": ["cs.LG"],
    }) + "\n")
    db = str(tmp / "p.db")
    if request.param == "postgresql":
        schemas = PGSchemas()
        request.addfinalizer(schemas.close)
        db = schemas.new()
    with open_store(db) as store:
        ingest_paths(store, [feed, hostile, shared_file("arxiv/abs/hep-th/papers/9709/9709111.abs")])
        # the hostile record appears on a day of its own, the day before the feed starts
        store.conn.execute("UPDATE records SET feed_date = '2025-03-17', appeared = '2025-03-17' WHERE source = 'evil'")
        resolve_works(store)
        resolve_authors(store)
        update_index(store)
        curators.add_curator(store, "carol", "correct horse battery")
    settings = WebSettings(admin_token="t0ken-for-tests-only")
    return TestClient(create_app(db, settings))


def feed_days(n: int = 600) -> list[str]:
    return sorted({json.loads(line)["feed_date"] for line in feed_head(n).splitlines()})


def test_daily_page_and_twin(client: TestClient) -> None:
    days = feed_days()
    data = client.get("/index.json").json()
    assert data["day"] == days[-1] and data["prev_day"] == days[-2] and data["next_day"] is None
    assert data["total"] == len(data["works"]) or data["pages"] > 1
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for w in data["works"][:5]:
        assert f'href="/papers/{w["work_id"]}"' in page.text
    assert client.get("/api/daily").json() == data
    day = client.get("/index.json", params={"day": "2025-03-18", "subject": "cs"}).json()
    assert day["prev_day"] == "2025-03-17" and day["next_day"] == days[1]
    assert all(any(s["code"].startswith("cs.") for s in w["subjects"]) for w in day["works"])
    counts = {s["code"]: s["count"] for s in day["subject_counts"]}
    cv = client.get("/index.json", params={"day": "2025-03-18", "subject": "cs.CV"}).json()
    assert cv["total"] == counts["cs.CV"] > 0


def test_paper_page_twin_and_exports(client: TestClient) -> None:
    wid = client.get("/index.json").json()["works"][0]["work_id"]
    data = client.get(f"/papers/{wid}.json").json()
    assert data["work_id"] == wid and data["records"][0]["url"].startswith("https://arxiv.org/abs/")
    assert client.get(f"/api/papers/{wid}").json() == data
    html = client.get(f"/papers/{wid}").text
    assert data["records"][0]["url"] in html
    bib = client.get(f"/papers/{wid}/cite.bib")
    lib = bibtexparser.parse_string(bib.text)
    assert not lib.failed_blocks and lib.entries[0]["eprint"] == data["arxiv_id"]
    assert client.get(f"/papers/{wid}/cite.ris").text.startswith("TY  - ")
    assert client.get(f"/papers/{wid}/cite.csl.json").json()[0]["title"]


def test_record_keys_lead_to_their_work(client: TestClient) -> None:
    work = client.get("/index.json").json()["works"][0]
    key = work["sources"][0]["key"]
    assert client.get(f"/papers/{key}.json").json()["work_id"] == work["work_id"]
    assert client.get(f"/papers/{key}/cite.bib").status_code == 200
    old = client.get("/papers/arxiv:hep-th/9709111.json").json()  # a key with a slash
    assert old["records"][0]["key"] == "arxiv:hep-th/9709111" and old["work_id"].startswith("W")
    assert client.get("/papers/arxiv:0000.00000.json").json()["error"]["status"] == 404


def test_hostile_text_renders_as_text(client: TestClient) -> None:
    day = client.get("/", params={"day": "2025-03-17"}).text
    assert "window.__pwned" in day  # the text is there …
    assert "<script>window.__pwned" not in day and "<img src=x" not in day  # … never as markup
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in day
    assert "Mallory" in day and "<b>Bold" not in day and "&lt;/b" in day


def test_no_inline_script_and_strict_csp(client: TestClient) -> None:
    resp = client.get("/")
    csp = resp.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("style-src-attr")[0]
    assert resp.headers["x-content-type-options"] == "nosniff"
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", resp.text), "inline script found"
    assert " on" not in re.sub(r'"[^"]*"', "", "".join(re.findall(r"<[a-z][^>]*>", resp.text)))


@pytest.mark.parametrize(
    ("url", "status"),
    [("/papers/W999999", 404), ("/papers/nonsense", 404), ("/?day=2026-13-45", 400),
     ("/?subject=no.such", 400), ("/?page=0", 400), ("/nope", 404)],
)
def test_one_error_shape(client: TestClient, url: str, status: int) -> None:
    html = client.get(url)
    assert html.status_code == status and "text/html" in html.headers["content-type"]
    j = client.get(url, headers={"accept": "application/json"})
    body = j.json()
    assert j.status_code == status and set(body) == {"error"}
    assert body["error"]["status"] == status and body["error"]["title"] and body["error"]["detail"]


def test_feeds_are_valid(client: TestClient) -> None:
    atom = client.get("/feed.atom")
    assert atom.headers["content-type"].startswith("application/atom+xml")
    root = etree.fromstring(atom.content)
    ns = {"a": "http://www.w3.org/2005/Atom"}
    entries = root.findall("a:entry", ns)
    assert entries and all(e.find("a:title", ns).text for e in entries)
    assert all(e.find("a:id", ns).text.startswith("http") for e in entries)
    rss = etree.fromstring(client.get("/feed.rss", params={"subject": "cs.CV"}).content)
    assert rss.tag == "rss" and rss.findall("channel/item")


def test_openapi_and_body_limit(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert "/api/daily" in spec["paths"] and "/api/papers/{ref}" in spec["paths"]
    big = client.post("/api/daily", content=b"x" * (2 << 20))
    assert big.status_code == 413 and big.json()["error"]["status"] == 413


def test_subjects_index_and_pages(client: TestClient) -> None:
    index = client.get("/subjects.json").json()
    assert client.get("/api/subjects").json() == index
    cs = next(g for g in index["groups"] if g["code"] == "cs")
    lg = next(c for a in cs["archives"] for c in a["categories"] if c["code"] == "cs.LG")
    assert lg["name"] == taxonomy.load().get("cs.LG").name and lg["count"] > 0  # type: ignore[union-attr]
    html = client.get("/subjects").text
    assert 'href="/subjects/cs.LG"' in html and lg["name"] in html
    page = client.get("/subjects/cs.LG.json").json()
    assert page["kind"] == "category" and 0 < len(page["works"]) <= 50
    assert all(any(s["code"] == "cs.LG" for s in w["subjects"]) for w in page["works"])
    days = [w["date"] for w in page["works"]]
    assert days == sorted(days, reverse=True)  # newest first
    alias = client.get("/subjects/math.IT.json").json()
    assert alias["code"] == "cs.IT" and alias["redirected_from"] == "math.IT"
    archive = client.get("/subjects/cs.json").json()
    assert archive["kind"] == "archive" and archive["count"] >= lg["count"]
    assert client.get("/subjects/cs.LG").status_code == 200
    atom = etree.fromstring(client.get("/subjects/cs.LG.atom").content)
    assert atom.findall("{http://www.w3.org/2005/Atom}entry")
    assert client.get("/subjects/no.such.json").json()["error"]["status"] == 404


def test_author_pages(client: TestClient) -> None:
    works = client.get("/index.json").json()["works"]
    author = next(a for w in works for a in w["authors"] if a["author_id"])
    data = client.get(f"/authors/{author['author_id']}.json").json()
    assert data["name"] and data["heading"] == f"Publications and source records attributed to {data['name']}"
    assert data["records_count"] >= 1 and data["records_count_text"].startswith("at least ")
    assert client.get(f"/api/authors/{author['author_id']}").json() == data
    html = client.get(f"/authors/{author['author_id']}").text
    assert "Linked to original sources" in html and "<svg" in html
    for w in data["works"]:
        assert all(r["url"] for r in w["records"])
    found = client.get("/authors.json", params={"q": author["name"]}).json()["authors"]
    assert author["author_id"] in [a["author_id"] for a in found]
    assert client.get("/authors/a0000000000.json").json()["error"]["status"] == 404


def _csrf(client: TestClient, path: str) -> str:
    html = client.get(path).text
    m = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert m, "page has no CSRF field"
    return m.group(1)


def test_writes_need_a_curator_and_csrf(client: TestClient) -> None:
    works = client.get("/index.json").json()["works"]
    a, b = works[0]["work_id"], works[1]["work_id"]
    anon = client.post(f"/api/papers/{a}/merge", json={"other": b})
    assert anon.status_code == 401 and anon.json()["error"]["status"] == 401
    wrong = client.post(f"/api/papers/{a}/merge", json={"other": b},
                        headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401
    client.cookies.clear()
    # sign in: without the CSRF token the form is refused, with it the session starts
    assert client.post("/login", data={"username": "carol", "password": "correct horse battery"}).status_code == 403
    token = _csrf(client, "/login")
    bad = client.post("/login", data={"username": "carol", "password": "wrong password!", "csrf": token})
    assert bad.status_code == 401
    ok = client.post("/login", data={"username": "carol", "password": "correct horse battery",
                                     "csrf": token, "next": "//evil.example/"}, follow_redirects=False)
    assert ok.status_code == 303 and ok.headers["location"] == "/"  # no open redirect
    # a signed-in browser still needs the CSRF token on every POST
    assert client.post(f"/papers/{a}/merge", data={"other": b}).status_code == 403
    done = client.post(f"/papers/{a}/merge", data={"other": b, "csrf": _csrf(client, f"/papers/{a}")},
                       follow_redirects=False)
    assert done.status_code == 303
    merged = client.get(f"/papers/{b}.json").json()
    assert merged["work_id"] == a and merged["redirected_from"] == b
    # the admin token works for scripts, without cookies or CSRF
    client.cookies.clear()
    split_key = merged["records"][-1]["key"]
    res = client.post(f"/api/papers/{a}/split", json={"records": split_key},
                      headers={"authorization": "Bearer t0ken-for-tests-only"})
    assert res.status_code == 200 and res.json()["who"] == "admin"


def test_search_page_twin_facets_and_errors(client: TestClient) -> None:
    data = client.get("/search.json", params={"q": "diffusion", "mode": "keyword"}).json()
    assert data["total"] > 0 and data["hits"]
    assert all("diffusion" in (h["title"] + (h["snippet"] or "")).lower() for h in data["hits"][:5])
    assert {f["value"] for f in data["facets"]["subject"]} and data["facets"]["year"]
    assert client.get("/api/search", params={"q": "diffusion", "mode": "keyword"}).json()["hits"] == data["hits"]
    html = client.get("/search", params={"q": "diffusion", "mode": "keyword"}).text
    assert f'href="/papers/{data["hits"][0]["work_id"]}"' in html and "<mark>" in html
    marked = [h["snippet"][a:b].lower() for h in data["hits"] for a, b in h["highlights"]]
    assert marked and all(m.startswith("diffus") for m in marked)  # the query word, stemmed
    hybrid = client.get("/search.json", params={"q": "image generation with diffusion"}).json()
    assert hybrid["hits"] and hybrid["mode_used"] in ("hybrid", "keyword")
    for bad in ('"unclosed phrase', "title:(open", "year:20x..y"):
        err = client.get("/search.json", params={"q": bad})
        assert err.status_code == 400 and err.json()["error"]["detail"]
        page = client.get("/search", params={"q": bad})
        assert page.status_code == 400 and "<h1>400 Bad Request</h1>" in page.text
    atom = etree.fromstring(client.get("/search.atom", params={"q": "diffusion"}).content)
    assert atom.findall("{http://www.w3.org/2005/Atom}entry")


def test_related_and_similar(client: TestClient) -> None:
    works = client.get("/index.json").json()["works"]
    paper = client.get(f"/papers/{works[0]['work_id']}.json").json()
    assert paper["similar"] and all(s["work_id"] != paper["work_id"] for s in paper["similar"])
    rel = client.get("/related.json", params={"text": paper["abstract"]}).json()
    assert rel["hits"][0]["work_id"] == paper["work_id"]  # its own abstract finds it first
    assert "textarea" in client.get("/related").text


def test_cached_pages_still_get_a_token_per_visitor(client: TestClient) -> None:
    wid = client.get("/index.json").json()["works"][0]["work_id"]
    other = TestClient(client.app)
    client.get(f"/papers/{wid}")  # warms the cache
    t1, t2 = _csrf(client, f"/papers/{wid}"), _csrf(other, f"/papers/{wid}")
    assert t1 != t2 and "__PAPERDESK_CSRF_TOKEN__" not in other.get(f"/papers/{wid}").text
    assert other.cookies.get("pd_csrf")
