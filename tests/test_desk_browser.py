"""The desk end to end in headless Chromium (Playwright): sign up, import a BibTeX file,
star papers on the daily page, see the "for you" day, save a search and open its Atom
feed (validated as Atom) — the path issue 20's "done" names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import ARTIFACTS, CHROMIUM, need_chromium
from loopback import chromium_page, feed_store, serve
from test_desk_web import _check_atom

PASSWORD = "correct horse battery"
BIB = """@misc{park2025, title = {Simulation of prosthetic vision with PRIMA system},
  author = {Park, Jungyeon and Goldstein, Anna Kochnev}, eprint = {2503.11677}, archivePrefix = {arXiv}}
@article{kokane2025, title = {{CORDIC} Is All You Need}, author = {Kokane, Omkar and Teman, Adam}, year = {2025}}
@book{knuth1968, title = {The Art of Computer Programming}, author = {Knuth, Donald E.}, year = {1968}}
"""

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    need_chromium()
    pytest.importorskip("playwright.sync_api")
    from paperdesk.web.app import WebSettings, create_app

    tmp = tmp_path_factory.mktemp("deskbrowser")
    db = feed_store(tmp)
    bib = tmp / "library.bib"
    bib.write_text(BIB)
    with serve(create_app(db, WebSettings(signup=True))) as base:
        yield {"base": base, "bib": bib}


def test_sign_up_import_star_for_you_and_feed(site: dict[str, Any]) -> None:
    base = site["base"]
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(CHROMIUM) as page:
        failed: list[str] = []  # any response >= 400 but the favicon Chromium asks for
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
                if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
        # sign up
        page.goto(f"{base}/login")
        page.click("text=Sign up")
        page.fill("#username", "reader")
        page.fill("#password", PASSWORD)
        page.fill("#password2", PASSWORD)
        page.click("form.login button[type=submit]")
        page.wait_for_url(f"{base}/desk")
        assert "Signed in as reader" in page.inner_text("main")
        # import a BibTeX file
        page.set_input_files("#import-file", str(site["bib"]))
        page.click("form.import button[type=submit]")
        report = page.locator(".import-report")
        report.wait_for()
        text = report.inner_text()
        assert "Imported 3 bibtex entries" in text
        assert "by arXiv id" in text and "by title and authors" in text and "kept as your own records" in text
        assert page.locator(".library-items li").count() == 3
        page.screenshot(path=str(ARTIFACTS / "desk-import.png"), full_page=True)
        # stars on the daily page: saved ones filled, a click saves another in place
        page.goto(f"{base}/?day=2025-03-18")
        page.wait_for_selector('button.star[data-saved="1"]')
        saved = page.locator('button.star[data-saved="1"]')
        assert saved.count() == 2  # the two imported works of that day
        free = page.locator('button.star[data-saved="0"]').first
        item = free.get_attribute("data-item")
        free.click()
        page.wait_for_selector(f'button.star[data-item="{item}"][data-saved="1"]')
        me = page.evaluate("fetch('/api/me').then(r => r.json())")
        assert item in me["saved"] and len(me["saved"]) == 4
        page.screenshot(path=str(ARTIFACTS / "desk-stars.png"))
        # the "for you" day: ranked with reasons, saved papers left out
        page.click("a.for-you-link")
        page.wait_for_selector("article.for-you")
        first = page.locator("article.for-you").first
        assert first.locator(".reasons li").count() >= 1
        assert first.locator(".new-badge").count() == 1
        ids = page.eval_on_selector_all("article.for-you", "els => els.map(e => e.id)")
        assert item not in ids and not set(me["saved"]) & set(ids)
        page.screenshot(path=str(ARTIFACTS / "desk-for-you.png"))
        hidden = ids[0]
        first.locator("button.not-relevant").click()
        page.wait_for_selector("article.for-you")
        assert hidden not in page.eval_on_selector_all("article.for-you", "els => els.map(e => e.id)")
        # a saved search and its feed address (shown once)
        page.goto(f"{base}/desk")
        page.fill("#search-name", "splatting")
        page.fill("#search-query", "gaussian -slam cat:cs.CV")
        page.click("text=Save search")
        page.click('button.feed-for[data-search="splatting"]')
        url = page.input_value("#new-feed-url")
        assert "/feeds/" in url and url.endswith(".atom")
        assert not failed, failed
        assert not [e for e in page.errors if "404" not in e or failed], page.errors
    # subscribe as a feed reader would: no cookies, only the secret address
    path = url.split("/feeds/", 1)[1]
    r = httpx.get(f"{base}/feeds/{path}", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/atom+xml")
    root = _check_atom(r.content)
    entries = root.findall("{http://www.w3.org/2005/Atom}entry")
    assert entries and not any("slam" in (e.findtext("{http://www.w3.org/2005/Atom}title") or "").lower()
                               for e in entries)
    assert Path(ARTIFACTS / "desk-for-you.png").exists()
