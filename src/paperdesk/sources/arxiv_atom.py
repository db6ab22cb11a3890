"""arXiv API responses: Atom 1.0 feeds with `arxiv:` and `opensearch:` extensions.

Each `<entry>` is one paper at its latest version: the id URL ends in `vN`, `published`
is the v1 date and `updated` the vN date. The version list is therefore `v1 … vN` with
dates on the first and last only (the API does not give the ones in between).
The API reports a bad query as a feed with one pseudo-entry whose id is under
`/api/errors` (`incorrect id format for abc`): that becomes a ParseError, not a paper.
`page_info()` gives the harvester totalResults/startIndex/itemsPerPage for paging.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from lxml import etree

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord, Version
from paperdesk.sources._arxiv_common import (
    free,
    new_record,
    split_id,
    to_int,
    version_list,
    xml_elements,
    xml_text,
)

NAME = "arxiv-atom"

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"


@dataclass
class AtomPage:
    """One API response as the harvester needs it."""

    records: list[SourceRecord | ParseError] = field(default_factory=list)
    total_results: int | None = None
    start_index: int | None = None
    items_per_page: int | None = None
    error: str | None = None
    """The message of the API's error entry, when the query was refused."""


def sniff(head: bytes, filename: str) -> bool:
    """An Atom feed that carries arXiv's namespace or arXiv API ids."""
    h = head[:65536]
    return (
        b"<feed" in h
        and b"http://www.w3.org/2005/Atom" in h
        and (b"arxiv.org/schemas/atom" in h or b"arxiv.org/api" in h)
    )


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    """The papers of one API response; the API's error entry is yielded as a ParseError."""
    yield from _iter(stream, origin, AtomPage())


def page_info(body: bytes, origin: str = "<arxiv api response>") -> AtomPage:
    """Parse a whole response body: records plus the opensearch paging numbers.

    Raises ParseError when the body is not an Atom feed at all.
    """
    page = AtomPage()
    page.records = list(_iter(io.BytesIO(body), origin, page))
    return page


def _iter(stream: BinaryIO, origin: str, page: AtomPage) -> Iterator[SourceRecord | ParseError]:
    tags = (
        f"{ATOM}entry",
        f"{OPENSEARCH}totalResults",
        f"{OPENSEARCH}startIndex",
        f"{OPENSEARCH}itemsPerPage",
    )
    n = 0
    for elem in xml_elements(stream, origin, tags, f"{ATOM}entry", f"{ATOM}feed"):
        tag = elem.tag
        if tag == f"{ATOM}entry":
            n += 1
            try:
                yield _entry(elem)
            except ParseError as exc:
                if page.error is None and exc.message.startswith("arXiv API error"):
                    page.error = exc.message
                yield ParseError(exc.message, origin, n)
            free(elem)
        elif tag == f"{OPENSEARCH}totalResults":
            page.total_results = to_int(elem.text)
        elif tag == f"{OPENSEARCH}startIndex":
            page.start_index = to_int(elem.text)
        elif tag == f"{OPENSEARCH}itemsPerPage":
            page.items_per_page = to_int(elem.text)


def _entry(entry: etree._Element) -> SourceRecord:
    ident = xml_text(entry, f"{ATOM}id") or ""
    if "/api/errors" in ident:
        message = xml_text(entry, f"{ATOM}summary") or ident
        raise ParseError(f"arXiv API error: {message}")
    parts = split_id(ident)
    if parts is None:
        raise ParseError(f"entry id {ident[:200]!r} is not an arXiv id")
    aid, latest = parts
    published = xml_text(entry, f"{ATOM}published")
    updated = xml_text(entry, f"{ATOM}updated")
    rec = new_record(
        aid,
        etree.tostring(entry, with_tail=False),
        NAME,
        title=xml_text(entry, f"{ATOM}title", strip=False),
        abstract=xml_text(entry, f"{ATOM}summary", strip=False),
        submitted=published,
        updated=updated or published,
        comments=xml_text(entry, f"{ARXIV}comment", strip=False),
        journal_ref=xml_text(entry, f"{ARXIV}journal_ref", strip=False),
        doi=xml_text(entry, f"{ARXIV}doi"),
    )
    labels = version_list(latest)
    rec.versions = [Version(v) for v in labels]
    if rec.versions:
        rec.versions[0].date = published
        rec.versions[-1].date = updated if len(labels) > 1 else published
    primary = entry.find(f"{ARXIV}primary_category")
    cats = []
    if primary is not None and primary.get("term"):
        cats.append(primary.get("term", "").strip())
    for c in entry.iterfind(f"{ATOM}category"):
        term = (c.get("term") or "").strip()
        if term and term not in cats:
            cats.append(term)
    rec.categories = cats
    for a in entry.iterfind(f"{ATOM}author"):
        name = xml_text(a, f"{ATOM}name")
        if not name:
            continue
        affs = [t.strip() for t in (x.text for x in a.iterfind(f"{ARXIV}affiliation")) if t]
        rec.authors.append(Author(name=name, affiliations=[t for t in affs if t]))
    for link in entry.iterfind(f"{ATOM}link"):
        if link.get("title") == "pdf" and link.get("href"):
            rec.extra["pdf"] = link.get("href")
    return rec
