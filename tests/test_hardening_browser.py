"""Hostile records in a real headless Chromium (Debian's /usr/bin/chromium via Playwright),
served by a real server on loopback: math that would cover the page stays bounded and inside
its element (#18 item 1), and no link to an original is anything but http(s), on the paper,
daily and author pages, even for links stored before ingest checked them (#18 item 2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ARTIFACTS, need_chromium
from loopback import HOSTILE_LINKS, build_store, serve

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    need_chromium()
    pytest.importorskip("uvicorn")
    from paperdesk.web.app import create_app

    # Stored without the ingest check, as an older store holds them: the pages alone must
    # keep every href safe.
    db = build_store(Path(tmp_path_factory.mktemp("hostile")), legacy_links=True)
    with serve(create_app(db)) as base:
        yield base


def _work_of(pg: Any, site: str, title_part: str) -> str:
    pg.goto(site + "/index.json?day=2025-03-17")
    works = pg.evaluate("() => JSON.parse(document.body.innerText).works")
    return str(next(w["work_id"] for w in works if title_part in w["title"]))


# What the page's own geometry says about the math: the rule KaTeX drew, every `.tex`
# element holding math, and how far the document can be scrolled.
_GEOMETRY = """() => {
  const rules = [...document.querySelectorAll('.katex .rule')].map(r => r.getBoundingClientRect());
  const boxes = [...document.querySelectorAll('.tex')].filter(e => e.querySelector('.katex'))
    .map(e => ({rect: e.getBoundingClientRect(), overflow: getComputedStyle(e).overflowY,
                main: e.closest('main').getBoundingClientRect()}));
  return {
    rules: rules.map(r => [r.width, r.height]),
    boxes: boxes.map(b => [b.rect.width, b.rect.height, b.overflow, b.rect.right <= b.main.right + 1]),
    scroll: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
    katex: document.querySelectorAll('.katex').length,
  };
}"""


@pytest.mark.parametrize("where", ["daily", "paper"])
def test_math_bomb_is_bounded(site: str, page: Any, where: str) -> None:
    pg = page
    url = "/?day=2025-03-17" if where == "daily" else "/papers/" + _work_of(pg, site, "Defacing math")
    pg.goto(site + url)
    for summary in pg.locator("details.abstract summary").all():
        summary.click()
    pg.wait_for_selector(".katex .rule", state="attached")
    g = pg.evaluate(_GEOMETRY)
    pg.screenshot(path=str(ARTIFACTS / f"math-bomb-{where}.png"), full_page=False)
    assert g["rules"], "the bomb's rule was not rendered at all"
    for w, h in g["rules"]:  # KaTeX capped it (maxSize): no 387,200 x 582,313 px box
        assert w <= 400 and h <= 400, g
    width, height = g["scroll"]
    assert width <= 1200 and height <= 6000, g  # the page is not stretched by it
    for _w, h, overflow, inside in g["boxes"]:
        assert inside and h <= 600 and overflow != "visible", g  # math stays in its element
    assert g["katex"] >= 2  # ordinary math ($x^2$) still renders


@pytest.mark.parametrize("where", ["daily", "paper", "author"])
def test_only_http_links(site: str, page: Any, where: str) -> None:
    pg = page
    if where == "daily":
        pg.goto(site + "/?day=2025-03-17")
        paths = [""]
    elif where == "paper":
        pg.goto(site + "/index.json?day=2025-03-17")
        works = pg.evaluate("() => JSON.parse(document.body.innerText).works")
        paths = ["/papers/" + w["work_id"] for w in works]
    else:
        pg.goto(site + "/index.json?day=2025-03-17")
        works = pg.evaluate("() => JSON.parse(document.body.innerText).works")
        author = next(a["author_id"] for w in works for a in w["authors"]
                      if a["name"] == "Mallory Probe" and a["author_id"])
        paths = ["/authors/" + author]
    seen = 0
    for path in paths:
        if path:
            pg.goto(site + path)
        # the browser's own reading of every href (after it drops tabs, newlines, case)
        protocols = pg.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.protocol)")
        assert set(protocols) <= {"http:", "https:"}, (path, protocols)
        hrefs = pg.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
        seen += sum("example.org" in h or "doi.org/10.1234" in h for h in hrefs)
        # the hostile records are still shown, as text without a link
        if where != "paper":
            for i in range(len(HOSTILE_LINKS)):
                assert pg.locator(f"text=Hostile link number {i}").count() >= 1
    assert seen >= 2  # the good links (https, doi: rewritten) are still live
    assert pg.evaluate("window.__pwned === undefined")
    pg.screenshot(path=str(ARTIFACTS / f"links-{where}.png"), full_page=False)
