"""The site on a store of every shape (tests/shapes_store.py), over HTTP in process: every
page reachable from the home page, the subjects, a few searches and every work's paper
page is crawled — no "(untitled)", no link without text, derived titles marked, text
macros rendered — and the JSON twins keep `title` as the source gave it beside
`display_title`; feeds give every entry a title."""

from __future__ import annotations

import re
from collections import deque
from html.parser import HTMLParser
from typing import Any

import pytest
from lxml import etree
from starlette.testclient import TestClient

import shapes_store
from paperdesk.store import open_store
from paperdesk.web.app import WebSettings, create_app

SEARCHES = ["model", "ecology", "learning", "language models", "data", "3D", "benchmark"]


class Page(HTMLParser):
    """Links (href, text) and visible text of a page (script/style/pre skipped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self.text: list[str] = []
        self._a: list[str] | None = None
        self._href = ""
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "title"):
            self._skip += 1
        if tag == "a":
            self._a, self._href = [], dict(attrs).get("href") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "title"):
            self._skip -= 1
        if tag == "a" and self._a is not None:
            self.links.append((self._href, "".join(self._a).strip()))
            self._a = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text.append(data)
        if self._a is not None:
            self._a.append(data)


@pytest.fixture(scope="module")
def site() -> tuple[TestClient, list[str]]:
    db = shapes_store.shared_db()
    with open_store(db) as store:
        works = [f"W{w}" for (w,) in store.conn.execute("SELECT DISTINCT work_id FROM work_records ORDER BY 1")]
    return TestClient(create_app(db, WebSettings(expensive_per_minute=1_000_000))), works


def crawl(client: TestClient, starts: list[str], limit: int = 600) -> dict[str, Page]:
    seen: dict[str, Page] = {}
    todo = deque(starts)
    while todo and len(seen) < limit:
        url = todo.popleft()
        if url in seen:
            continue
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        if "text/html" not in r.headers["content-type"]:
            continue
        page = Page()
        page.feed(r.text)
        seen[url] = page
        for href, _ in page.links:
            if href.startswith("/") and not href.startswith(("/static", "/login", "/logout", "/openapi")) \
                    and not re.search(r"(\.json|\.atom|\.rss|/cite\.\w+(\.json)?)$|[?&]page=", href):
                todo.append(href)
    return seen


def test_no_untitled_and_no_empty_links_anywhere(site: tuple[TestClient, list[str]]) -> None:
    client, works = site
    starts = ["/", "/subjects"] + [f"/search?q={q}" for q in SEARCHES] + [f"/papers/{w}" for w in works]
    pages = crawl(client, starts)
    assert len(pages) >= len(works) + 10
    derived = 0
    for url, page in pages.items():
        text = " ".join("".join(page.text).split())
        assert "(untitled)" not in text.lower() and "(no title)" not in text.lower(), url
        empty = [href for href, label in page.links if not label]
        assert not empty, (url, empty)
        derived += text.count("title from the abstract")
    assert derived >= 24  # the abstract-only records, on their pages and in lists


def test_search_of_untitled_records_shows_derived_titles(site: tuple[TestClient, list[str]]) -> None:
    client, _ = site
    data = client.get("/search.json", params={"q": "source:digest"}).json()
    assert data["total"] >= 20 and data["hits"]
    for h in data["hits"]:
        assert h["title"] == "" and h["display_title_from"] == "abstract"
        assert h["display_title"].startswith("[") and h["display_title"].endswith("]")
    html = client.get("/search", params={"q": "source:digest"}).text
    assert html.count('class="derived-title"') == len(data["hits"])


def test_json_keeps_title_and_adds_display_title(site: tuple[TestClient, list[str]]) -> None:
    client, works = site
    froms = set()
    for w in works:
        data = client.get(f"/papers/{w}.json").json()
        assert data["display_title"] and data["display_title_from"] in ("title", "abstract", "identifier")
        froms.add(data["display_title_from"])
        if data["display_title_from"] == "title":
            assert data["display_title"] in [r["title"] for r in data["records"]]
        else:
            assert all(not (r["title"] or "").strip() for r in data["records"]) and data["title"] is None
        for s in data["similar"]:
            assert s["display_title"], s
    assert froms == {"title", "abstract"}


def test_text_macros_render_on_paper_pages(site: tuple[TestClient, list[str]]) -> None:
    client, works = site
    shown = {"strong": 0, "em": 0, "a": 0}
    for w in works:
        data = client.get(f"/papers/{w}.json").json()
        abstract = data["abstract"] or ""
        if not any(m in abstract for m in ("\\textbf{", "\\emph{", "\\textit{", "**")):
            continue
        html = client.get(f"/papers/{w}").text
        section = html.split('<section class="abstract">', 1)[1].split("</section>", 1)[0]
        plain = re.sub(r"\$[^$]*\$|\\\(.*?\\\)", "", section)  # math is KaTeX's
        for macro in ("\\textbf{", "\\emph{", "\\textit{"):
            assert macro not in plain, (w, macro)
        shown["strong"] += section.count("<strong>")
        shown["em"] += section.count("<em>")
        shown["a"] += section.count('rel="nofollow noopener ugc"')
        assert "\\textbf" in abstract or "\\emph" in abstract or "\\textit" in abstract or "**" in abstract
    assert shown["strong"] >= 3 and shown["em"] >= 3, shown


def test_hostile_record_page_is_inert(site: tuple[TestClient, list[str]]) -> None:
    client, _ = site
    html = client.get("/papers/evil:h1").text
    assert "<script>window" not in html and "<img src=x" not in html
    assert "<a href=\"javascript" not in html.split('<section class="abstract">', 1)[1].split("</section>")[0]


def entries(xml: bytes) -> list[Any]:
    root = etree.fromstring(xml)
    return root.findall("{http://www.w3.org/2005/Atom}entry") or root.findall("channel/item")


def test_feeds_give_every_entry_a_title(site: tuple[TestClient, list[str]]) -> None:
    client, _ = site
    for url in ("/search.atom?q=source:digest", "/search.rss?q=source:digest", "/feed.atom"):
        r = client.get(url)
        assert r.status_code == 200, url
        items = entries(r.content)
        assert items, url
        for e in items:
            title = e.findtext("{http://www.w3.org/2005/Atom}title") or e.findtext("title")
            assert title and title.strip() and "(untitled)" not in title, (url, title)
    digest = entries(client.get("/search.atom?q=source:digest").content)
    assert all((e.findtext("{http://www.w3.org/2005/Atom}title") or "").startswith("[") for e in digest)
