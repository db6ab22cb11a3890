"""A store of every shape paperdesk ingests, from the real slices in tests/data/shapes/
(see tests/data/README.md): two arXiv feed days, an abstract-only generic list (real feed
abstracts with the titles removed, some without authors or dates), OpenReview papers
(papercopilot list, Markdown abstracts), Crossref works (journal, proceedings, chapter,
dataset, preprint, reference entry) and DBLP/Crossref BibTeX — plus one hostile record
whose every field tries to break a page or an export."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

from paperdesk.ingest import ingest_paths
from paperdesk.resolve.authors import resolve_authors
from paperdesk.resolve.works_run import resolve_works
from paperdesk.search.indexer import update_index
from paperdesk.store import open_store

DATA = Path(__file__).parent / "data" / "shapes"
SLICES = ["feed.jsonl", "abstracts.jsonl", "openreview.jsonl", "crossref.json", "dblp.bib"]

HOSTILE = {
    "source": "evil", "id": "h1",
    "title": 'Break-out } \n@misc{pwn, note = {x} <img src=x onerror="window.__pwned=1">',
    "abstract": "<script>window.__pwned=2</script> \\href{javascript:alert(1)}{click} "
                "\\textbf{bold} $x^2$\nER  - \nTY  - JOUR",
    "authors": ["Mallory }, note = {pwned", "Eve\nAU  - Injected"],
    "arxiv_id": "2401.00001}, note = {pwned",
    "doi": "10.1234/x}\n@misc{",
    "venue": "Journal of Nothing\nER  - \nTY  - JOUR\nTI  - injected",
    "url": "javascript:alert(1)",
    "year": 2024,
}


def build(tmp: Path, index: bool = True) -> Path:
    """Ingest every slice and the hostile record into tmp/shapes.db, resolve (works,
    authors) and, unless told not to, build the search indexes."""
    hostile = tmp / "hostile.jsonl"
    hostile.write_text(json.dumps(HOSTILE) + "\n")
    db = tmp / "shapes.db"
    with open_store(db) as store:
        ingest_paths(store, [DATA / name for name in SLICES] + [hostile])
        resolve_works(store)
        resolve_authors(store)
        if index:
            update_index(store)
    return db


@functools.cache
def shared_db() -> Path:
    """One indexed store of every shape per test run (indexing embeds every abstract, so
    the HTTP and the browser tests share it); removed when the run ends."""
    tmp = Path(tempfile.mkdtemp(prefix="paperdesk-shapes-"))
    atexit.register(shutil.rmtree, tmp, True)
    return build(tmp)
