"""In a real headless Chromium (as tests/test_browser.py): a store of non-feed records only
(abstract-only JSONL, a plain list, OpenReview, Crossref, BibTeX) served the way `make demo`
serves, right after the ingest with the stages in the background: the home page lists
papers at once, says the stages are running, and shows resolved works once they are done."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ARTIFACTS, CHROMIUM, need_chromium
from loopback import free_port
from mixed_store import ingest_mixed

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    need_chromium()
    db = Path(tmp_path_factory.mktemp("firstpage")) / "p.db"
    ingest_mixed(db)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperdesk", "--db", str(db), "serve", "--port", str(port),
         "--background-stages"],
        env={**os.environ, "PAPERDESK_PROGRESS": "0"}, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(base + "/api/status", timeout=5):  # noqa: S310
                break
        except OSError:
            time.sleep(0.05)
    yield base
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(30)


def _status(base: str) -> dict[str, object]:
    with urllib.request.urlopen(base + "/api/status", timeout=10) as resp:  # noqa: S310
        data: dict[str, object] = json.loads(resp.read())
        return data


def test_home_page_lists_non_feed_papers_before_and_after_the_stages(served: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update"],
        )
        pg = browser.new_page(viewport={"width": 1200, "height": 900})
        pg.goto(served + "/")
        assert pg.locator("article.work").count() > 0
        assert "No papers yet" not in pg.content()
        running = _status(served)["state"] == "running"
        if running and pg.locator(".pipeline-status").count():
            assert "running" in pg.locator(".pipeline-status").inner_text()
            pg.screenshot(path=str(ARTIFACTS / "firstpage-running.png"))
        deadline = time.monotonic() + 240
        while _status(served)["state"] != "ready" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _status(served)["state"] == "ready"
        pg.reload()
        assert pg.locator(".pipeline-status").count() == 0
        hrefs = [a.get_attribute("href") for a in pg.locator("article.work h2 a").all()]
        assert hrefs and all(h and h.startswith("/papers/W") for h in hrefs)
        pg.screenshot(path=str(ARTIFACTS / "firstpage-ready.png"), full_page=True)
        # Older days: the sources' own publication days (OpenReview, Crossref, a list).
        pg.locator("nav.days a[rel=prev]").click()
        pg.wait_for_load_state()
        assert pg.locator("article.work").count() > 0
        browser.close()
