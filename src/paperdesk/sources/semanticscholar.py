"""Semantic Scholar Graph API papers: one paper, a batch list (nulls for ids not found), a
page `{"data": [...]}` (search, bulk search, an author's papers, citations / references
where each item wraps the paper as `citingPaper` / `citedPaper`), recommendations
`{"recommendedPapers": [...]}`, an author with `papers`, or one paper a line.

Key `s2:<paperId>`. `externalIds` tie the identities of one paper together: ArXiv →
`arxiv_id`, DOI → `doi`, the rest (DBLP, MAG, PubMed, ACL, CorpusId …) → `ids` under
lower-case names. A batch's `null` entries (ids S2 did not find) are skipped: they carry
nothing to keep, and so are items whose `paperId` is null (citations and references S2
could not resolve to a paper: there is no key to store them under). Any other item without
a valid `paperId` is reported as an error. A paper's nested `citations` / `references`
stay in its raw payload and are not records of their own, unless they would push the
payload over the store's raw size limit: then they (and `embedding`) are cut from `raw`
and `extra["raw_trimmed"]` says so. `extra["author_ids"]` is aligned with `authors`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize import LIMITS
from paperdesk.normalize.ids import arxiv_id, normalize_doi
from paperdesk.sources._jsonio import (
    dumps,
    integer,
    iso_date,
    items,
    obj,
    objs,
    text,
    texts,
    year_of,
)

NAME = "semanticscholar"

_SNIFF = re.compile(rb'"paperId"\s*:')
_PAPER_ID = re.compile(r"[0-9a-f]{40}$")
_WRAPPERS = ("citingPaper", "citedPaper")


def sniff(head: bytes, filename: str) -> bool:
    """`paperId` is Semantic Scholar's own field name."""
    return bool(_SNIFF.search(head))


def _unwrap(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return [v for v in value if v is not None]
    if not isinstance(value, dict) or "paperId" in value:
        return None
    for key in ("data", "recommendedPapers", "papers"):
        inner = value.get(key)
        if isinstance(inner, list):
            return [_unwrap_item(v) for v in inner if v is not None]
    if "total" in value and "offset" in value:
        return []  # an empty results page
    return None


def _unwrap_item(v: Any) -> Any:
    if isinstance(v, dict) and "paperId" not in v:
        for key in _WRAPPERS:
            if isinstance(v.get(key), dict):
                return v[key]
    return v


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    for item in items(stream, origin, _unwrap):
        if item.error is not None:
            yield ParseError(item.error, origin, item.record_no)
            continue
        paper = _unwrap_item(item.value)
        if not isinstance(paper, dict):
            yield ParseError("a paper must be a JSON object", origin, item.record_no)
            continue
        if "paperId" in paper and paper["paperId"] is None:
            continue  # an unresolved citation/reference: S2 has no paper for it
        pid = text(paper.get("paperId"))
        if not pid or not _PAPER_ID.match(pid):
            yield ParseError("paper has no valid paperId", origin, item.record_no)
            continue
        raw = item.raw if paper is item.value else dumps(paper)
        yield _record(paper, pid, raw)


def _journal_ref(journal: dict[str, Any]) -> str | None:
    name = text(journal.get("name"))
    if not name:
        return None
    volume, pages = text(journal.get("volume")), text(journal.get("pages"))
    return name + (f" {volume}" if volume else "") + (f", {pages}" if pages else "")


def _record(paper: dict[str, Any], pid: str, raw: bytes) -> SourceRecord:
    ext = obj(paper.get("externalIds"))
    ids: dict[str, str] = {"s2": pid}
    for key, value in ext.items():
        v = text(value)
        if v and key not in ("ArXiv", "DOI"):
            ids[key.lower()] = v
    journal = obj(paper.get("journal"))
    pub_venue = obj(paper.get("publicationVenue"))
    extra: dict[str, Any] = {}
    types = texts(paper.get("publicationTypes"))
    if types:
        extra["publication_types"] = types
    tldr = text(obj(paper.get("tldr")).get("text"))
    if tldr:
        extra["tldr"] = tldr
    pdf = text(obj(paper.get("openAccessPdf")).get("url"))
    if pdf:
        extra["pdf"] = pdf
    for key, name in (("citationCount", "citation_count"), ("referenceCount", "reference_count")):
        n = integer(paper.get(key))
        if n is not None:
            extra[name] = n
    if len(raw) > LIMITS["raw"]:
        trimmed = [k for k in ("citations", "references", "embedding") if k in paper]
        raw = dumps({k: v for k, v in paper.items() if k not in trimmed})
        extra["raw_trimmed"] = trimmed
    categories = texts(paper.get("fieldsOfStudy"))
    if not categories:
        seen: list[str] = []
        for f in objs(paper.get("s2FieldsOfStudy")):
            c = text(f.get("category"))
            if c and c not in seen:
                seen.append(c)
        categories = seen
    authors: list[Author] = []
    for a in objs(paper.get("authors")):
        author_name = text(a.get("name"))
        if author_name:
            authors.append(Author(name=author_name, affiliations=texts(a.get("affiliations"))))
    author_ids = [
        text(a.get("authorId")) for a in objs(paper.get("authors")) if text(a.get("name"))
    ]
    if any(author_ids):
        extra["author_ids"] = author_ids
    return SourceRecord(
        source="s2",
        source_id=pid,
        raw=raw,
        raw_format=NAME,
        url=text(paper.get("url")) or f"https://www.semanticscholar.org/paper/{pid}",
        title=text(paper.get("title")),
        abstract=text(paper.get("abstract")),
        authors=authors,
        published=iso_date(paper.get("publicationDate")),
        year=year_of(paper.get("year")),
        categories=categories,
        doi=normalize_doi(text(ext.get("DOI"))),
        arxiv_id=arxiv_id(text(ext.get("ArXiv"))),
        journal_ref=_journal_ref(journal),
        venue=text(paper.get("venue")) or text(pub_venue.get("name")) or text(journal.get("name")),
        ids=ids,
        extra=extra,
    )
