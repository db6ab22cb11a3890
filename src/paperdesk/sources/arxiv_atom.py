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
from paperdesk.normalize.ids import split_arxiv_id
from paperdesk.sources._arxiv_common import (
    child_texts,
    free,
    new_record,
    pick,
    to_int,
    version_list,
    xml_elements,
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
    t = child_texts(entry)
    ident = pick(t, f"{ATOM}id") or ""
    if "/api/errors" in ident:
        message = pick(t, f"{ATOM}summary") or ident
        raise ParseError(f"arXiv API error: {message}")
    parts = split_arxiv_id(ident)
    if parts is None:
        raise ParseError(f"entry id {ident[:200]!r} is not an arXiv id")
    aid, latest = parts
    published = pick(t, f"{ATOM}published")
    updated = pick(t, f"{ATOM}updated")
    rec = new_record(
        aid,
        etree.tostring(entry, with_tail=False),
        NAME,
        title=pick(t, f"{ATOM}title", strip=False),
        abstract=pick(t, f"{ATOM}summary", strip=False),
        submitted=published,
        updated=updated or published,
        comments=pick(t, f"{ARXIV}comment", strip=False),
        journal_ref=pick(t, f"{ARXIV}journal_ref", strip=False),
        doi=pick(t, f"{ARXIV}doi"),
    )
    labels = version_list(latest)
    rec.versions = [Version(v) for v in labels]
    if rec.versions:
        rec.versions[0].date = published
        rec.versions[-1].date = updated if len(labels) > 1 else published
    primary: str | None = None
    cats: list[str] = []
    for child in entry:
        tag = child.tag
        if tag == f"{ATOM}author":
            a = child_texts(child)
            name = pick(a, f"{ATOM}name")
            if name:
                affs = child.iterchildren(f"{ARXIV}affiliation")
                rec.authors.append(Author(name, affiliations=[x for x in map(_aff, affs) if x]))
        elif tag == f"{ATOM}category":
            term = (child.get("term") or "").strip()
            if term and term not in cats:
                cats.append(term)
        elif tag == f"{ARXIV}primary_category":
            primary = (child.get("term") or "").strip() or None
        elif tag == f"{ATOM}link" and child.get("title") == "pdf" and child.get("href"):
            rec.extra["pdf"] = child.get("href")
    if primary:
        cats = [primary, *(c for c in cats if c != primary)]
    rec.categories = cats
    return rec


def _aff(elem: etree._Element) -> str | None:
    return (elem.text or "").strip() or None
