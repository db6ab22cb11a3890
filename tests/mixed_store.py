"""A store of records of every non-feed shape, from the small real slices in tests/data/:
an abstract-only digest (generic JSONL, no titles, no dates), a plain list with titles and
years, OpenReview notes (API v2) and a papercopilot list, Crossref works, BibTeX."""

from __future__ import annotations

from pathlib import Path

from conftest import DATA

FILES = [
    DATA / "generic" / "digest.jsonl",
    DATA / "generic" / "mylist.jsonl",
    DATA / "openreview" / "api-v2-notes.json",
    DATA / "openreview" / "papercopilot.jsonl",
    DATA / "crossref" / "works.json",
    DATA / "bibtex" / "accents.bib",
]


def ingest_mixed(db: Path | str) -> int:
    """Ingest every file of `FILES` into the store at `db`; the records stored."""
    from paperdesk.ingest import ingest_paths
    from paperdesk.store import open_store

    with open_store(db) as store:
        ingest_paths(store, FILES, on_error="skip")
        return store.count_records()
