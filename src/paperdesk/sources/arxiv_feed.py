"""Daily arXiv feed digests as JSON lines, one new submission a line:

    {"id": "2503.11677", "pdf": "https://arxiv.org/pdf/2503.11677",
     "abs": "https://arxiv.org/abs/2503.11677", "authors": ["Jungyeon Park", …],
     "title": "…", "categories": ["cs.HC", "cs.CV"], "comment": null,
     "summary": "… with arXiv's hard line breaks and LaTeX …", "feed_date": "2025-03-18"}

Some digests write `cate` (one primary category string) and `url` (abs or pdf link)
instead of `categories`/`abs`/`pdf`. Category lists may mix in MSC and ACM codes
(`"94A29, 94A08"`, `"I.4.2; E.4"`): they are kept as given, after the arXiv categories
(primary first), as `SourceRecord.categories` allows; the subjects stage tells them apart
(`subjects.taxonomy.split_categories`). The feed has no dates of its own besides
`feed_date` (the announcement day), so `submitted`/`updated` stay empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord, Version
from paperdesk.sources._arxiv_common import (
    first_json_object,
    json_arxiv_id,
    new_record,
    opt_str,
    parse_json_lines,
    version_list,
)

NAME = "arxiv-feed"


def sniff(head: bytes, filename: str) -> bool:
    """A JSON object line with `feed_date`, `summary` and an arXiv link (`abs`/`url`/`pdf`)."""
    d = first_json_object(head)
    if isinstance(d, bytes):
        return b'"feed_date"' in d and b'"summary"' in d
    return (
        d is not None
        and "id" in d
        and "feed_date" in d
        and "summary" in d
        and ("abs" in d or "url" in d or "pdf" in d)
    )


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    """One record per line; a bad line is yielded as a ParseError with its line number."""
    return parse_json_lines(stream, origin, _record)


def _record(d: dict[str, Any], raw: bytes) -> SourceRecord:
    aid, latest = json_arxiv_id(d)
    rec = new_record(
        aid,
        raw,
        NAME,
        title=opt_str(d, "title"),
        abstract=opt_str(d, "summary"),
        comments=opt_str(d, "comment"),
        feed_date=opt_str(d, "feed_date"),
        versions=[Version(v) for v in version_list(latest)],
    )
    authors = d.get("authors") or []
    if type(authors) is not list:
        raise TypeError("'authors' should be a list of names")
    for name in authors:
        if type(name) is not str:
            raise TypeError("'authors' should be a list of names")
        if name.strip():
            rec.authors.append(Author(name=name.strip()))
    cats = d.get("categories")
    if cats is None:
        cats = (opt_str(d, "cate") or "").replace(",", " ").split()
    elif type(cats) is not list or not all(type(c) is str for c in cats):
        raise TypeError("'categories' should be a list of codes")
    rec.categories = [c.strip() for c in cats if c.strip()]
    pdf = opt_str(d, "pdf")
    link = opt_str(d, "url")
    if pdf is None and link and "/pdf/" in link:
        pdf = link
    if pdf:
        rec.extra["pdf"] = pdf
    return rec
