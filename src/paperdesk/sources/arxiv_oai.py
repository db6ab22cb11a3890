"""arXiv OAI-PMH responses (ListRecords / GetRecord) in the `arXiv`, `arXivRaw` and
`oai_dc` metadata formats.

`arXivRaw` is the one to harvest: it is the only OAI format with the full version history
(`<version version="v2"><date>RFC 2822</date><size>11kb</size></version>`) and the author
line exactly as submitted. `arXiv` splits authors into keyname/forenames/affiliation but
only gives `created`/`updated` dates, so its records carry `v1` alone when the paper was
never revised and no version list otherwise (a guessed one would overwrite a true history
from another format). `oai_dc` is accepted for completeness; its subjects are category
*names*, kept as keywords.

The parser streams with `lxml.etree.iterparse` and frees each `<record>` once read, so a
multi-GB concatenation of responses never sits in memory. Deleted records
(`<header status="deleted">`) are skipped. `page_info()` reads one response body for the
harvester: records, `resumptionToken`, OAI `<error>` and the last datestamp.
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
    add_class_codes,
    child_texts,
    free,
    new_record,
    parsed_author,
    pick,
    rfc2822_to_iso,
    split_arxiv_authors,
    to_int,
    xml_elements,
    xml_text,
)

NAME = "arxiv-oai"

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV = "{http://arxiv.org/OAI/arXiv/}"
RAW = "{http://arxiv.org/OAI/arXivRaw/}"
OAI_DC = "{http://www.openarchives.org/OAI/2.0/oai_dc/}"
DC = "{http://purl.org/dc/elements/1.1/}"

# OAI-PMH's "nothing to list" is an answer, not a failure.
NO_RECORDS = "noRecordsMatch"


@dataclass
class OaiPage:
    """One OAI-PMH response as the harvester needs it."""

    records: list[SourceRecord | ParseError] = field(default_factory=list)
    token: str | None = None
    """The resumptionToken to ask for the next page; None on the last page."""
    cursor: int | None = None
    complete_list_size: int | None = None
    error_code: str | None = None
    """OAI `<error code=…>` (`badArgument`, `idDoesNotExist`, `noRecordsMatch` …)."""
    error_message: str | None = None
    last_datestamp: str | None = None
    """Datestamp of the last header in the page (deleted ones included): the checkpoint."""
    max_datestamp: str | None = None
    """Latest datestamp in the page: OAI lists are not sorted by datestamp."""
    response_date: str | None = None
    deleted: int = 0


def sniff(head: bytes, filename: str) -> bool:
    """An OAI-PMH envelope from arXiv (its namespace and an arXiv identifier or format)."""
    h = head[:65536]
    return (
        b"<OAI-PMH" in h
        and b"openarchives.org/OAI/2.0/" in h
        and (b"arxiv.org" in h.lower() or b"arXiv" in h)
    )


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    """Records of one OAI-PMH response document.

    An OAI `<error>` other than noRecordsMatch (badArgument, idDoesNotExist …) raises
    ParseError: the file is an error report, not an empty list.
    """
    page = OaiPage()
    yield from _iter(stream, origin, page)
    if page.error_code and page.error_code != NO_RECORDS:
        raise ParseError(f"OAI-PMH error {page.error_code}: {page.error_message or ''}", origin)


def page_info(body: bytes, origin: str = "<oai-pmh response>") -> OaiPage:
    """Parse a whole response body: records plus paging and error information.

    Raises ParseError when the body is not an OAI-PMH document (an HTML 503 page, a
    truncated download); an OAI `<error>` is reported in the page, not raised.
    """
    page = OaiPage()
    page.records = list(_iter(io.BytesIO(body), origin, page))
    return page


def _iter(stream: BinaryIO, origin: str, page: OaiPage) -> Iterator[SourceRecord | ParseError]:
    tags = (
        f"{OAI}record",
        f"{OAI}header",
        f"{OAI}resumptionToken",
        f"{OAI}error",
        f"{OAI}responseDate",
    )
    n = 0
    for elem in xml_elements(stream, origin, tags, f"{OAI}record", f"{OAI}OAI-PMH"):
        tag = elem.tag
        if tag == f"{OAI}header":
            stamp = xml_text(elem, f"{OAI}datestamp")
            if stamp:
                page.last_datestamp = stamp
                if page.max_datestamp is None or stamp > page.max_datestamp:
                    page.max_datestamp = stamp
            parent = elem.getparent()
            if parent is None or parent.tag != f"{OAI}record":
                free(elem)  # a ListIdentifiers header: nothing more to read
        elif tag == f"{OAI}record":
            n += 1  # position in the file, deleted records included
            header = elem.find(f"{OAI}header")
            if header is not None and header.get("status") == "deleted":
                page.deleted += 1
            else:
                try:
                    yield _record(elem)
                except ParseError as exc:
                    yield ParseError(exc.message, origin, n)
            free(elem)
        elif tag == f"{OAI}resumptionToken":
            page.token = (elem.text or "").strip() or None
            page.cursor = to_int(elem.get("cursor"))
            page.complete_list_size = to_int(elem.get("completeListSize"))
        elif tag == f"{OAI}error":
            page.error_code = elem.get("code") or "unknown"
            page.error_message = (elem.text or "").strip() or None
        elif tag == f"{OAI}responseDate":
            page.response_date = (elem.text or "").strip() or None


def _record(rec: etree._Element) -> SourceRecord:
    header = rec.find(f"{OAI}header")
    datestamp = xml_text(header, f"{OAI}datestamp") if header is not None else None
    ident = xml_text(header, f"{OAI}identifier") if header is not None else None
    meta = rec.find(f"{OAI}metadata")
    body = None if meta is None else next((c for c in meta if isinstance(c.tag, str)), None)
    if body is None:
        raise ParseError(f"record {ident or '?'} has no metadata")
    raw = etree.tostring(rec, with_tail=False)
    if body.tag == f"{RAW}arXivRaw":
        out = _base(RAW, body, ident, raw)
    elif body.tag == f"{ARXIV}arXiv":
        out = _base(ARXIV, body, ident, raw)
    elif body.tag == f"{OAI_DC}dc":
        out = _oai_dc(body, ident, raw)
    else:
        raise ParseError(f"unsupported metadata format {body.tag!r}")
    if datestamp:
        out.extra["oai_datestamp"] = datestamp
    return out


def _base(ns: str, body: etree._Element, ident: str | None, raw: bytes) -> SourceRecord:
    """Fields `arXiv` and `arXivRaw` share (same element names, different namespaces)."""
    t = child_texts(body)
    parts = split_arxiv_id(pick(t, f"{ns}id")) or split_arxiv_id(ident)
    if parts is None:
        raise ParseError(f"no arXiv id in record {ident or '?'}")
    rec = new_record(
        parts[0],
        raw,
        NAME,
        title=pick(t, f"{ns}title", strip=False),
        abstract=pick(t, f"{ns}abstract", strip=False),
        comments=pick(t, f"{ns}comments", strip=False),
        journal_ref=pick(t, f"{ns}journal-ref", strip=False),
        doi=pick(t, f"{ns}doi"),
        license=pick(t, f"{ns}license"),
        categories=(pick(t, f"{ns}categories") or "").split(),
    )
    for tag, key in (
        ("report-no", "report_no"),
        ("msc-class", "msc_class"),
        ("acm-class", "acm_class"),
        ("proxy", "proxy"),
        ("submitter", "submitter"),
    ):
        value = pick(t, f"{ns}{tag}")
        if value:
            rec.extra[key] = value
    add_class_codes(rec)
    if ns == RAW:
        _raw_fields(rec, body, t)
    else:
        _arxiv_fields(rec, body, t)
    return rec


def _raw_fields(rec: SourceRecord, body: etree._Element, t: dict[str, str]) -> None:
    """arXivRaw: the version history and the author line as submitted."""
    for v in body.iterchildren(f"{RAW}version"):
        label = (v.get("version") or "").strip()
        if not label:
            continue
        vt = child_texts(v)
        rec.versions.append(
            Version(label, rfc2822_to_iso(pick(vt, f"{RAW}date")), pick(vt, f"{RAW}size"))
        )
    rec.versions.sort(key=lambda v: to_int(v.version[1:]) or 0)
    if rec.versions:
        rec.submitted = rec.versions[0].date
        rec.updated = rec.versions[-1].date
    rec.authors = split_arxiv_authors(pick(t, f"{RAW}authors"))


def _arxiv_fields(rec: SourceRecord, body: etree._Element, t: dict[str, str]) -> None:
    """arXiv: created/updated dates and authors already split by arXiv."""
    created = pick(t, f"{ARXIV}created")
    updated = pick(t, f"{ARXIV}updated")
    rec.submitted = created
    rec.updated = updated or created
    if created and not updated:
        rec.versions = [Version("v1", created)]
    for authors in body.iterchildren(f"{ARXIV}authors"):
        for a in authors.iterchildren(f"{ARXIV}author"):
            at = child_texts(a)
            family = pick(at, f"{ARXIV}keyname") or ""
            given = pick(at, f"{ARXIV}forenames")
            if not family and not given:
                continue
            affs = [_clean(x.text) for x in a.iterchildren(f"{ARXIV}affiliation")]
            rec.authors.append(
                parsed_author(family, given, pick(at, f"{ARXIV}suffix"), [x for x in affs if x])
            )
        break  # one <authors> element


def _oai_dc(body: etree._Element, ident: str | None, raw: bytes) -> SourceRecord:
    urls = [t for t in (_clean(e.text) for e in body.iterfind(f"{DC}identifier")) if t]
    parts = split_arxiv_id(ident) or next((p for p in map(split_arxiv_id, urls) if p), None)
    if parts is None:
        raise ParseError(f"no arXiv id in record {ident or '?'}")
    aid = parts[0]
    rec = new_record(aid, raw, NAME)
    rec.title = xml_text(body, f"{DC}title", strip=False)
    for e in body.iterfind(f"{DC}creator"):
        name = _clean(e.text)
        if not name:
            continue
        family, sep, given = name.partition(",")
        if sep:
            rec.authors.append(Author(name=name, family=family.strip(), given=given.strip()))
        else:
            rec.authors.append(Author(name=name))
    for e in body.iterfind(f"{DC}description"):
        text = e.text or ""
        if text.startswith("Comment:"):
            rec.comments = text[len("Comment:") :].strip()
        elif rec.abstract is None:
            rec.abstract = text
    rec.keywords = [t for t in (_clean(e.text) for e in body.iterfind(f"{DC}subject")) if t]
    dates = [t for t in (_clean(e.text) for e in body.iterfind(f"{DC}date")) if t]
    if dates:
        rec.submitted, rec.updated = dates[0], dates[-1]
    for u in urls:
        if u.startswith("doi:"):
            rec.doi = u[4:].strip()
    return rec


def _clean(text: str | None) -> str | None:
    return text.strip() or None if text else None
