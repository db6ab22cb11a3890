"""Every shape of record in a real headless Chromium (Debian's /usr/bin/chromium driven by
Playwright), on the store of tests/shapes_store.py: feed, abstract-only generic JSONL,
OpenReview, Crossref, BibTeX and a hostile record. The pages a user reaches are crawled —
no visible "(untitled)", no link without visible text, emphasis rendered, math by KaTeX,
nothing of the hostile record runs — and the citation exports the paper pages offer are
downloaded and parsed by bibtexparser, rispy and citeproc-py. Screenshots of each shape go
to test-artifacts/shapes-*.png."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest

import shapes_store
from conftest import ARTIFACTS, need_chromium
from loopback import serve
from paperdesk import catalog
from paperdesk.store import open_store
from test_export import cite_with_citeproc, parse_bib, parse_ris

pytestmark = pytest.mark.browser

# Visible text of the page without rendered math (KaTeX keeps the TeX source in a hidden
# annotation) and every link that shows no text, no image and no accessible name.
PAGE_FACTS = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll('.katex, script, style').forEach(e => e.remove());
  const empty = [...document.querySelectorAll('a')].filter(a =>
    !a.textContent.trim() && !a.getAttribute('aria-label') && !a.querySelector('img, svg'))
    .map(a => a.outerHTML.slice(0, 120));
  return {text: document.body.innerText, plain: body.textContent, empty,
          links: [...document.querySelectorAll('a[href^="/"]')].map(a => a.getAttribute('href'))};
}"""
SKIP = ("/static", "/login", "/logout", "/openapi", ".json", ".atom", ".rss", "/cite.", "page=")


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[str, dict[str, list[str]]]]:
    need_chromium()
    pytest.importorskip("uvicorn")
    from paperdesk.web.app import WebSettings, create_app

    db = shapes_store.shared_db()
    shapes: dict[str, list[str]] = {}
    with open_store(db) as store:
        for (wid,) in store.conn.execute("SELECT DISTINCT work_id FROM work_records ORDER BY 1"):
            fmt = catalog.paper(store, f"W{wid}")["records"][0]["format"]
            shapes.setdefault(fmt, []).append(f"W{wid}")
    with serve(create_app(db, WebSettings(expensive_per_minute=1_000_000))) as base:
        yield base, shapes


def visit(pg: Any, url: str) -> dict[str, Any]:
    pg.goto(url)
    pg.wait_for_load_state("load")
    facts: dict[str, Any] = pg.evaluate(PAGE_FACTS)
    return facts


def test_crawl_every_shape_no_untitled_no_empty_links(site: tuple[str, dict[str, list[str]]], page: Any) -> None:
    base, shapes = site
    assert {"arxiv-feed", "generic", "papercopilot", "crossref", "bibtex"} <= set(shapes), shapes
    starts = ["/", "/subjects", "/search?q=source:digest", "/search?q=ecology", "/search?q=benchmark"]
    starts += [f"/papers/{w}" for ws in shapes.values() for w in ws]
    seen: set[str] = set()
    failed: list[str] = []  # any response >= 400 but the favicon Chromium asks for
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    todo = deque(starts)
    while todo and len(seen) < 260:
        url = todo.popleft()
        if url in seen:
            continue
        seen.add(url)
        facts = visit(page, base + url)
        assert "(untitled)" not in facts["text"].lower(), url
        assert not facts["empty"], (url, facts["empty"])
        for macro in ("\\textbf{", "\\emph{", "\\textit{", "\\href{"):
            assert macro not in facts["plain"], (url, macro)
        todo.extend(h for h in facts["links"] if not any(s in h for s in SKIP) and h not in seen)
    assert len(seen) >= 120
    assert page.evaluate("window.__pwned === undefined") and not failed, failed
    assert not [e for e in page.errors if "Failed to load resource" not in e], page.errors


def open_emphasised(page: Any, base: str, works: list[str]) -> None:
    """Opens the first of these works whose abstract shows bold or italic text."""
    for w in works:
        page.goto(f"{base}/papers/{w}")
        if page.locator("section.abstract strong, section.abstract em").count():
            return
    raise AssertionError(f"no abstract of {works[:3]}… shows emphasis")


def test_each_shape_as_a_user_sees_it(site: tuple[str, dict[str, list[str]]], page: Any) -> None:
    base, shapes = site
    page.goto(base + "/")  # the newest day that has records
    assert page.locator("article.work").count() > 0
    page.screenshot(path=str(ARTIFACTS / "shapes-daily.png"), full_page=False)
    # an arXiv record whose abstract writes \textbf / \emph: bold and italic, no backslashes
    open_emphasised(page, base, shapes["arxiv-feed"])
    page.wait_for_function("document.querySelectorAll('.math-rendered').length > 0")
    page.screenshot(path=str(ARTIFACTS / "shapes-feed-paper.png"), full_page=True)
    # an abstract-only record: its derived title, marked so, on its page and in search
    page.goto(f"{base}/papers/{shapes['generic'][0]}")
    h1 = page.locator("h1")
    assert h1.locator(".derived-title").count() == 1 and "title from the abstract" in h1.inner_text()
    page.screenshot(path=str(ARTIFACTS / "shapes-untitled-paper.png"), full_page=True)
    page.goto(f"{base}/search?q=source:digest")
    hits = page.locator("article.hit h2 a")
    assert hits.count() == 20
    assert all(hits.nth(i).inner_text().startswith("[") for i in range(hits.count()))
    page.screenshot(path=str(ARTIFACTS / "shapes-search-untitled.png"), full_page=False)
    # OpenReview: Markdown emphasis rendered
    open_emphasised(page, base, shapes["papercopilot"])
    assert "**" not in page.locator("section.abstract").inner_text()
    page.screenshot(path=str(ARTIFACTS / "shapes-openreview-paper.png"), full_page=True)
    # Crossref and BibTeX papers
    for fmt in ("crossref", "bibtex"):
        page.goto(f"{base}/papers/{shapes[fmt][0]}")
        assert page.locator("h1").inner_text().strip()
        page.screenshot(path=str(ARTIFACTS / f"shapes-{fmt}-paper.png"), full_page=True)
    # an author with abstract-only works: the profile lists them by derived title
    page.goto(f"{base}/papers/{shapes['generic'][0]}")
    author = page.locator("p.authors a").first
    if author.count():
        with page.expect_navigation():
            author.click()
        assert page.locator("h4.title .derived-title").count() >= 1
        page.screenshot(path=str(ARTIFACTS / "shapes-author-untitled.png"), full_page=True)


def test_exports_from_the_paper_pages_parse(site: tuple[str, dict[str, list[str]]], page: Any) -> None:
    base, shapes = site
    for fmt, works in shapes.items():
        for w in works[:4]:
            page.goto(f"{base}/papers/{w}")
            for link, check in (("BibTeX", parse_bib), ("RIS", parse_ris)):
                href = page.get_by_role("link", name=link, exact=True).get_attribute("href")
                resp = page.request.get(base + href)
                assert resp.ok, (w, link)
                check(resp.text())
            href = page.get_by_role("link", name="CSL-JSON", exact=True).get_attribute("href")
            (item,) = page.request.get(base + href).json()
            assert cite_with_citeproc(item), (fmt, w)
