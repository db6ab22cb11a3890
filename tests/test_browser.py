"""End to end in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
the daily feed, day and subject navigation, a paper page, math rendering, and a hostile
abstract that must not execute. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conftest import ARTIFACTS, feed_head, need_chromium
from loopback import serve
from paperdesk.ingest import ingest_paths
from paperdesk.resolve.authors import resolve_authors
from paperdesk.resolve.works_run import resolve_works
from paperdesk.search.indexer import update_index
from paperdesk.store import open_store

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    need_chromium()
    pytest.importorskip("uvicorn")
    from paperdesk.web.app import create_app

    tmp = tmp_path_factory.mktemp("site")
    feed = tmp / "feed.jsonl"
    feed.write_bytes(feed_head(400))
    hostile = tmp / "hostile.jsonl"
    hostile.write_text(json.dumps({
        "source": "evil", "id": "1",
        "title": 'Hostile <img src=x onerror="window.__pwned=1"> paper about $\\alpha$',
        "abstract": "<script>window.__pwned=2</script> Bounds of $\\mathcal{O}(n^2)$ and $x^2$.",
        "authors": ["Mallory"], "categories": ["cs.LG"],
    }) + "\n")
    db = tmp / "p.db"
    with open_store(db) as store:
        ingest_paths(store, [feed, hostile])
        store.conn.execute("UPDATE records SET feed_date = '2025-03-17', appeared = '2025-03-17' WHERE source = 'evil'")
        resolve_works(store)
        resolve_authors(store)
        update_index(store)
    with serve(create_app(db)) as base:
        yield base


def test_daily_navigation_and_paper(site: str, page: object) -> None:
    pg = page  # playwright Page
    pg.goto(site + "/")  # type: ignore[attr-defined]
    latest = pg.locator("h1 time").inner_text()  # type: ignore[attr-defined]
    pg.screenshot(path=str(ARTIFACTS / "daily.png"), full_page=False)  # type: ignore[attr-defined]
    # previous day by the link
    pg.locator("nav.days a[rel=prev]").click()  # type: ignore[attr-defined]
    pg.wait_for_load_state()  # type: ignore[attr-defined]
    prev = pg.locator("h1 time").inner_text()  # type: ignore[attr-defined]
    assert prev < latest
    # subject filter: choosing in the menu navigates by itself (progressive JS)
    first_subject = pg.locator("#subject option").nth(1).get_attribute("value")  # type: ignore[attr-defined]
    with pg.expect_navigation():  # type: ignore[attr-defined]
        pg.select_option("#subject", first_subject)  # type: ignore[attr-defined]
    assert f"subject={first_subject}" in pg.url  # type: ignore[attr-defined]
    n = pg.locator("article.work").count()  # type: ignore[attr-defined]
    assert n > 0
    # open a paper, keyboard only
    pg.locator("article.work h2 a").first.focus()  # type: ignore[attr-defined]
    with pg.expect_navigation():  # type: ignore[attr-defined]
        pg.keyboard.press("Enter")  # type: ignore[attr-defined]
    assert "/papers/" in pg.url  # type: ignore[attr-defined]
    assert pg.locator("section.record").count() >= 1  # type: ignore[attr-defined]
    assert "arxiv.org/abs/" in pg.locator("section.record a").first.get_attribute("href")  # type: ignore[attr-defined]
    pg.screenshot(path=str(ARTIFACTS / "paper.png"), full_page=True)  # type: ignore[attr-defined]


def test_math_renders_and_hostile_markup_does_not_run(site: str, page: object) -> None:
    pg = page
    pg.goto(site + "/?day=2025-03-17")  # type: ignore[attr-defined]
    pg.locator("details.abstract summary").first.click()  # type: ignore[attr-defined]
    pg.wait_for_selector(".katex")  # type: ignore[attr-defined]
    assert pg.locator("h2.title .katex").count() == 1  # type: ignore[attr-defined]  # $\alpha$ in the title
    assert pg.locator("details.abstract .katex").count() == 2  # type: ignore[attr-defined]
    assert pg.evaluate("window.__pwned === undefined")  # type: ignore[attr-defined]
    assert pg.locator("img[src=x]").count() == 0  # type: ignore[attr-defined]
    assert "<script>window.__pwned=2</script>" in pg.locator("details.abstract p").inner_text()  # type: ignore[attr-defined]
    pg.screenshot(path=str(ARTIFACTS / "hostile-and-math.png"), full_page=False)  # type: ignore[attr-defined]
    assert not [e for e in pg.errors if "Content Security Policy" in e]  # type: ignore[attr-defined]


def test_follow_an_author_and_search(site: str, page: object) -> None:
    pg = page
    pg.goto(site + "/")  # type: ignore[attr-defined]
    link = pg.locator("article.work p.authors a").first  # type: ignore[attr-defined]
    name = link.inner_text()
    with pg.expect_navigation():  # type: ignore[attr-defined]
        link.click()
    assert "/authors/" in pg.url  # type: ignore[attr-defined]
    assert pg.locator("h1").inner_text() == name  # type: ignore[attr-defined]
    assert "Publications and source records attributed to" in pg.content()  # type: ignore[attr-defined]
    assert pg.locator("figure.chart svg rect").count() >= 1  # type: ignore[attr-defined]
    pg.screenshot(path=str(ARTIFACTS / "author.png"), full_page=True)  # type: ignore[attr-defined]
    # search from the header box
    pg.fill("#q-top", "diffusion")  # type: ignore[attr-defined]
    with pg.expect_navigation():  # type: ignore[attr-defined]
        pg.press("#q-top", "Enter")  # type: ignore[attr-defined]
    assert "/search?q=diffusion" in pg.url  # type: ignore[attr-defined]
    assert pg.locator("article.hit").count() > 0  # type: ignore[attr-defined]
    pg.screenshot(path=str(ARTIFACTS / "search.png"), full_page=False)  # type: ignore[attr-defined]
    # a malformed query is a clear message, not a crash
    pg.goto(site + "/search?q=%22unclosed")  # type: ignore[attr-defined]
    assert "400" in pg.locator("h1").inner_text() and "quote" in pg.locator("section.error").inner_text().lower()  # type: ignore[attr-defined]
    pg.goto(site + "/subjects")  # type: ignore[attr-defined]
    pg.screenshot(path=str(ARTIFACTS / "subjects.png"), full_page=False)  # type: ignore[attr-defined]
