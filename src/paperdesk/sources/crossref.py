"""Crossref REST API works: `{"message": {...}}` (one work), `{"message": {"items": [...]}}`
(a page of works), bare work objects one a line, and citeproc-JSON from DOI content
negotiation (the same field names), and the `{"items": [...]}` files of Crossref's public data dump.

Key `doi:<normalised DOI>`, url `https://doi.org/<doi>`. Crossref abstracts are JATS XML
fragments (`<jats:p>…</jats:p>`): the record's `abstract` holds them reduced to text (tags
removed, paragraphs kept as blank-line breaks, entities decoded) because that is what a
reader wants to see; the JATS original goes to `extra["abstract_jats"]` (and `raw` keeps
the whole response item). Dates come as `date-parts` ([[2008, 6, 18]], possibly partial):
`published` is `issued` (Crossref's earliest publication date), `submitted` is `posted`
for preprints, `updated` is the last metadata deposit.
Responses that are not works (journals, members, errors …) are refused as a whole.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize.ids import arxiv_id, normalize_doi
from paperdesk.sources._jsonio import iso_date, obj, objects, objs, text, texts

NAME = "crossref"

_SNIFF_WORKS = re.compile(rb'"message-type"\s*:\s*"work(?:-list)?"')
_SNIFF_DOI = re.compile(rb'"DOI"\s*:\s*"10\.')
_SNIFF_WORK_FIELD = re.compile(rb'"(?:issued|container-title|reference-count|published-print)"\s*:')


def sniff(head: bytes, filename: str) -> bool:
    """A works response (`message-type` work/work-list), or a bare work: upper-case `DOI`
    together with Crossref's hyphenated date/container fields (S2's `externalIds.DOI`
    never comes with those)."""
    if _SNIFF_WORKS.search(head):
        return True
    return bool(_SNIFF_DOI.search(head) and _SNIFF_WORK_FIELD.search(head))


class _NotWorks(Exception):
    pass


def _unwrap(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if not isinstance(value, dict):
        return None
    if "message" in value:
        mtype = value.get("message-type")
        msg = value.get("message")
        if mtype not in (None, "work", "work-list"):
            raise _NotWorks(f"a Crossref {mtype!r} response holds no works")
        if isinstance(msg, dict) and isinstance(msg.get("items"), list):
            return list(msg["items"])
        return [msg]
    if "DOI" not in value and isinstance(value.get("items"), list):
        return list(value["items"])  # the public data file: {"items": [...]} per file
    return None


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    try:
        for got in objects(stream, origin, _unwrap, "a work"):
            if isinstance(got, ParseError):
                yield got
                continue
            item, work = got
            doi = normalize_doi(text(work.get("DOI")))
            if not doi:
                yield ParseError("work has no valid DOI", origin, item.record_no)
                continue
            yield _record(work, doi, item.raw)
    except _NotWorks as exc:
        raise ParseError(str(exc), origin) from None


def date_parts(value: Any) -> str | None:
    """`2008-06-18`, `2008-06` or `2008` from a Crossref date object."""
    d = obj(value)
    parts = d.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list):
        nums = [p for p in parts[0][:3] if isinstance(p, int) and not isinstance(p, bool)]
        if nums and 1000 <= nums[0] <= 9999 and len(nums) == len(parts[0][:3]):
            widths = (4, 2, 2)
            if all(0 <= n < 10**w for n, w in zip(nums, widths, strict=False)):
                return "-".join(f"{n:0{w}d}" for n, w in zip(nums, widths, strict=False))
    return iso_date(d.get("date-time"))


_BLOCK = re.compile(r"</?(?:jats:)?(?:p|title|sec|list-item|list)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]{0,2000}>")


def jats_to_text(jats: str) -> str:
    """Readable text from a JATS fragment: block tags become paragraph breaks, other tags
    go, entities are decoded. A leading "Abstract" heading is dropped (it is a label)."""
    s = re.sub(
        r"^\s*<(?:jats:)?title>\s*Abstract\s*</(?:jats:)?title>", "", jats, flags=re.IGNORECASE
    )
    s = _BLOCK.sub("\n\n", s)
    s = html.unescape(_TAG.sub("", s))
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", s)]
    return "\n\n".join(p for p in paras if p)


def _author(a: dict[str, Any]) -> Author | None:
    given, family = text(a.get("given")), text(a.get("family"))
    name = " ".join(p for p in (given, family) if p) or text(a.get("name"))
    if not name:
        return None
    orcid = text(a.get("ORCID"))
    if orcid:
        m = re.search(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", orcid)
        orcid = m.group(1) if m else None
    return Author(
        name=name,
        given=given,
        family=family,
        affiliations=[n for n in (text(x.get("name")) for x in objs(a.get("affiliation"))) if n],
        orcid=orcid,
    )


def _journal_ref(work: dict[str, Any], venue: str | None) -> str | None:
    volume, issue, page = (text(work.get(k)) for k in ("volume", "issue", "page"))
    if not venue or not (volume or page):
        return None
    ref = venue + (f" {volume}" if volume else "") + (f"({issue})" if issue else "")
    return ref + (f":{page}" if page else "")


def _license(work: dict[str, Any]) -> str | None:
    lics = objs(work.get("license"))
    for lic in lics:
        if lic.get("content-version") == "vor" and text(lic.get("URL")):
            return text(lic.get("URL"))
    return text(lics[0].get("URL")) if lics else None


def _record(work: dict[str, Any], doi: str, raw: bytes) -> SourceRecord:
    titles = texts(work.get("title"))
    containers = texts(work.get("container-title"))
    venue = containers[0] if containers else None
    jats = text(work.get("abstract"))
    extra: dict[str, Any] = {}
    if jats:
        extra["abstract_jats"] = jats
    for key in ("type", "publisher", "member", "language", "volume", "issue", "page"):
        v = text(work.get(key))
        if v:
            extra[key] = v
    for key in ("subtitle", "ISSN", "ISBN", "short-container-title", "alternative-id"):
        vs = texts(work.get(key))
        if vs:
            extra[key.lower()] = vs
    published = date_parts(work.get("issued")) or date_parts(work.get("published"))
    ax = arxiv_id(doi) if doi.startswith("10.48550/arxiv.") else None
    return SourceRecord(
        source="doi",
        source_id=doi,
        raw=raw,
        raw_format=NAME,
        url=f"https://doi.org/{doi}",
        title=titles[0] if titles else None,
        abstract=jats_to_text(jats) if jats else None,
        authors=[a for a in (_author(x) for x in objs(work.get("author"))) if a],
        submitted=date_parts(work.get("posted")),
        updated=date_parts(work.get("deposited")),
        published=published,
        year=int(published[:4]) if published else None,
        categories=texts(work.get("subject")),
        doi=doi,
        arxiv_id=ax,
        journal_ref=_journal_ref(work, venue),
        venue=venue,
        license=_license(work),
        extra=extra,
    )
