"""A real uvicorn server on a loopback port for HTTP and browser tests, and a small store
of hand-written hostile records (no shared data needed)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """`with serve(create_app(db)) as base:` — base is `http://127.0.0.1:PORT`."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextmanager
def chromium_page(executable: str) -> Iterator[Any]:
    """A Playwright page in Debian's Chromium (1200 x 900), its console errors collected
    in `page.errors`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.errors = errors
        try:
            yield pg
        finally:
            browser.close()


HOSTILE_LINKS = [
    "javascript:window.__pwned=1",
    "JaVaScRiPt:window.__pwned=2",
    "java\nscript:window.__pwned=3",
    " \tjavascript:window.__pwned=4",
    "data:text/html,<script>window.__pwned=5</script>",
    "vbscript:msgbox(6)",
]
MATH_BOMB = "$\\color{red}{\\rule{10000em}{10000em}}$"


def hostile_records() -> list[dict[str, Any]]:
    """Records (generic JSON lines) of one day: one per hostile link, a `doi:` link, a
    plain one, and one whose title and abstract hold the math bomb. All share an author,
    so their author page lists every link."""
    base = {"source": "probe", "authors": ["Mallory Probe", "Alice Plain"], "date": "2025-03-17",
            "categories": ["cs.CR"]}
    out = [
        {**base, "id": f"link{i}", "title": f"Hostile link number {i}", "url": url,
         "abstract": f"A record whose link is hostile (case {i})."}
        for i, url in enumerate(HOSTILE_LINKS)
    ]
    out.append({**base, "id": "doi", "title": "A paper linked by its DOI", "url": "doi:10.1234/abc.5",
                "abstract": "The link is an identifier."})
    out.append({**base, "id": "plain", "title": "A plainly linked paper",
                "url": "https://example.org/paper/1", "abstract": "Nothing odd here."})
    out.append({**base, "id": "math", "title": f"Defacing math {MATH_BOMB}",
                "url": "https://example.org/paper/2",
                "abstract": f"Before {MATH_BOMB} after, and $x^2$ still renders."})
    return out


def build_store(tmp: Path, records: list[dict[str, Any]] | None = None, *,
                legacy_links: bool = False) -> Path:
    """A resolved, keyword-indexed store of `records` (default: `hostile_records()`), all
    on the daily page of 2025-03-17. `legacy_links`: ingested without the link check, as
    a store made before it holds them (what the templates must still defuse)."""
    from unittest import mock

    import paperdesk.normalize
    from paperdesk.ingest import ingest_paths
    from paperdesk.resolve.authors import resolve_authors
    from paperdesk.resolve.works_run import resolve_works
    from paperdesk.search.indexer import update_index
    from paperdesk.store import open_store

    src = tmp / "records.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in (records or hostile_records())))
    db = tmp / ("legacy.db" if legacy_links else "p.db")
    unchecked = mock.patch.object(paperdesk.normalize, "safe_link", lambda url: url, create=True)
    with open_store(db) as store:
        if legacy_links:
            with unchecked:
                ingest_paths(store, [src], workers=0)
        else:
            ingest_paths(store, [src], workers=0)
        store.conn.execute("UPDATE records SET feed_date = '2025-03-17'")
        resolve_works(store)
        resolve_authors(store)
        update_index(store, embed=False, show_progress=False)
    return db


def feed_store(tmp: Path, lines: int = 300, db: str | None = None) -> Path | str:
    """A resolved, keyword-indexed store of the committed feed's first `lines` lines (the
    desk's HTTP, feed and browser tests): `tmp/p.db`, or the store `db` names (a URL)."""
    from conftest import feed_head
    from paperdesk.ingest import ingest_paths
    from paperdesk.resolve.works_run import resolve_works
    from paperdesk.search.indexer import update_index
    from paperdesk.store import open_store

    feed = tmp / "feed.jsonl"
    feed.write_bytes(feed_head(lines))
    target: Path | str = db or tmp / "p.db"
    with open_store(target) as store:
        ingest_paths(store, [feed], workers=0)
        resolve_works(store)
        update_index(store, embed=False, show_progress=False)
    return target
