"""Normal forms next to the originals: ids, DOIs, names and plain text for indexing.

`finish(record)` is the one entry point the ingest pipeline calls on every parsed record;
parsers stay simple because of it (they report what the source says, this makes it uniform).
"""

from __future__ import annotations

from paperdesk.errors import ParseError
from paperdesk.model import SourceRecord
from paperdesk.normalize.ids import arxiv_id, normalize_doi, split_arxiv_id
from paperdesk.normalize.names import normalize_author
from paperdesk.normalize.text import plain_text

__all__ = ["finish", "arxiv_id", "normalize_doi", "split_arxiv_id", "LIMITS"]

# Field size limits: far above any real paper, low enough that a hostile or broken input
# cannot bloat the store. A record over a limit is rejected (never truncated silently).
LIMITS = {
    "title": 2_000,
    "abstract": 100_000,
    "authors": 5_000,
    "author_name": 500,
    "comments": 10_000,
    "raw": 2_000_000,
}


def check_limits(record: SourceRecord) -> None:
    """Raise ParseError naming the field when a record exceeds a size limit."""
    if record.title and len(record.title) > LIMITS["title"]:
        raise ParseError(f"title is {len(record.title)} characters (limit {LIMITS['title']})")
    if record.abstract and len(record.abstract) > LIMITS["abstract"]:
        raise ParseError(
            f"abstract is {len(record.abstract)} characters (limit {LIMITS['abstract']})"
        )
    if len(record.authors) > LIMITS["authors"]:
        raise ParseError(f"{len(record.authors)} authors (limit {LIMITS['authors']})")
    for a in record.authors:
        if len(a.name) > LIMITS["author_name"]:
            raise ParseError(f"an author name is {len(a.name)} characters")
    if record.comments and len(record.comments) > LIMITS["comments"]:
        raise ParseError(f"comments are {len(record.comments)} characters")
    if len(record.raw) > LIMITS["raw"]:
        raise ParseError(f"raw payload is {len(record.raw)} bytes (limit {LIMITS['raw']})")


def finish(record: SourceRecord) -> SourceRecord:
    """Validate limits and fill the normalised fields in place; returns the record."""
    check_limits(record)
    if not record.source or not record.source_id:
        raise ParseError("record has no source or id")
    record.doi = normalize_doi(record.doi) or record.doi
    if record.arxiv_id:
        record.arxiv_id = arxiv_id(record.arxiv_id) or record.arxiv_id
    record.title_text = plain_text(record.title)
    record.abstract_text = plain_text(record.abstract)
    for a in record.authors:
        normalize_author(a)
    if record.year is None:
        for d in (record.published, record.submitted, record.feed_date, record.updated):
            if d and len(d) >= 4 and d[:4].isdigit():
                record.year = int(d[:4])
                break
    return record
