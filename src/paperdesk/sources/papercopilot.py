"""papercopilot "paperlists" JSON lines: accepted papers of conferences, one per line.

Each line has `paper_id` (`venue:openreview id`), `openreview_id`, `venue` (`colm2025`),
`title`, `abstract`, `authors` (list, or a `;`-separated string in older lists), `keywords`
(`;`-separated), `status` (Poster/Oral …), `site`, and in some lists `aff`, `tldr`,
`primary_area`, `track`.

The key is `openreview:<openreview_id>`: the OpenReview forum id, so the same paper read
from the OpenReview API (parser `openreview`) and from this list is one record, whichever
came first. A paper without an `openreview_id` (lists of non-OpenReview venues) keeps
`papercopilot:<paper_id>`. `raw_format` stays "papercopilot" so provenance is never lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.sources._jsonio import objects, text, texts, year_of

NAME = "papercopilot"

FORUM_URL = "https://openreview.net/forum?id="

_SNIFF = re.compile(rb'"openreview_id"\s*:')
_SNIFF_PAPER = re.compile(rb'"paper_id"\s*:|"site"\s*:|"status"\s*:')


def sniff(head: bytes, filename: str) -> bool:
    """`openreview_id` beside `paper_id`/`site`/`status` is papercopilot's own vocabulary."""
    return bool(_SNIFF.search(head) and _SNIFF_PAPER.search(head))


def _unwrap(value: Any) -> list[Any] | None:
    return value if isinstance(value, list) else None


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    for got in objects(stream, origin, _unwrap, "a paper"):
        if isinstance(got, ParseError):
            yield got
            continue
        item, paper = got
        rec = _record(paper, item.raw)
        if rec is None:
            yield ParseError("paper has neither openreview_id nor paper_id", origin, item.record_no)
        else:
            yield rec


def _split(value: Any) -> list[str]:
    if isinstance(value, list):
        return texts(value)
    s = text(value)
    return [p.strip() for p in s.split(";") if p.strip()] if s else []


def _record(d: dict[str, Any], raw: bytes) -> SourceRecord | None:
    forum = text(d.get("openreview_id"))
    paper_id = text(d.get("paper_id"))
    if not forum and not paper_id:
        return None
    venue = text(d.get("venue"))
    names = _split(d.get("authors"))
    affs = _split(d.get("aff"))
    authors = [
        Author(name=n, affiliations=[affs[i]] if len(affs) == len(names) else [])
        for i, n in enumerate(names)
    ]
    extra: dict[str, Any] = {}
    for key in ("status", "track", "tldr", "primary_area", "pdf", "github", "project"):
        v = text(d.get(key))
        if v:
            extra[key] = v
    ids = {"papercopilot": paper_id} if paper_id else {}
    if forum:
        ids["openreview"] = forum
    site = text(d.get("site"))
    m = re.search(r"(\d{4})$", venue or "")
    return SourceRecord(
        source="openreview" if forum else "papercopilot",
        source_id=forum or paper_id or "",
        raw=raw,
        raw_format=NAME,
        url=FORUM_URL + forum if forum else site,
        title=text(d.get("title")),
        abstract=text(d.get("abstract")),
        authors=authors,
        year=year_of(m.group(1)) if m else year_of(d.get("year")),
        venue=venue,
        keywords=_split(d.get("keywords")),
        categories=_split(d.get("primary_area")),
        ids=ids,
        extra=extra,
    )
