"""OpenAlex works: one work, a results page `{"meta": …, "results": [...]}`, a list, or
one work a line (the snapshot's shape).

OpenAlex ships no plain abstract, only `abstract_inverted_index` ({word: [positions]}); the
text is rebuilt by placing every word at its positions (`rebuild_abstract`). Key
`openalex:W…` (the short id). DOI, PMID, PMCID and MAG ids come from `ids`; an arXiv id
from an arxiv.org landing page among the locations, since OpenAlex has no arXiv id field.
Categories are the topics (primary first), else the legacy concepts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize.ids import arxiv_id, normalize_doi
from paperdesk.sources._jsonio import integer, iso_date, obj, objects, objs, text, texts, year_of

NAME = "openalex"

_SNIFF = re.compile(
    rb'"id"\s*:\s*"https://openalex\.org/W\d+"|"abstract_inverted_index"\s*:|"authorships"\s*:'
)
_WORK_ID = re.compile(r"(?:https?://openalex\.org/)?(W\d{1,15})$", re.IGNORECASE)

# An inverted index cannot place more words than this: a hostile position like 10**9
# would otherwise ask for a billion-slot list.
MAX_ABSTRACT_WORDS = 20_000


def sniff(head: bytes, filename: str) -> bool:
    """An OpenAlex work id, or the fields only OpenAlex names so."""
    return bool(_SNIFF.search(head))


def _unwrap(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and "id" not in value and isinstance(value.get("results"), list):
        return list(value["results"])
    return None


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    for got in objects(stream, origin, _unwrap, "a work"):
        if isinstance(got, ParseError):
            yield got
            continue
        item, work = got
        m = _WORK_ID.match(text(work.get("id")) or "")
        if not m:
            yield ParseError("work has no OpenAlex id (W…)", origin, item.record_no)
            continue
        try:
            abstract = rebuild_abstract(work.get("abstract_inverted_index"))
        except ValueError as exc:
            yield ParseError(str(exc), origin, item.record_no)
            continue
        yield _record(work, m.group(1).upper(), abstract, item.raw)


def rebuild_abstract(index: Any) -> str | None:
    """The abstract text from OpenAlex's inverted index; None when there is none.

    Positions nobody claims stay out (no double spaces); a position claimed twice keeps
    the first word. Raises ValueError for an index that is not {str: [int]} or too large.
    """
    if index is None:
        return None
    if not isinstance(index, dict):
        raise ValueError("abstract_inverted_index is not an object")
    slots: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list):
            raise ValueError(f"abstract_inverted_index[{word[:40]!r}] is not a list")
        for p in positions:
            if isinstance(p, bool) or not isinstance(p, int) or p < 0:
                raise ValueError("abstract_inverted_index holds a non-integer position")
            if p >= MAX_ABSTRACT_WORDS * 10 or len(slots) >= MAX_ABSTRACT_WORDS:
                raise ValueError("abstract_inverted_index is implausibly large")
            slots.setdefault(p, word)
    text_ = " ".join(slots[p] for p in sorted(slots))
    return text_ or None


def _short(value: Any, pattern: str) -> str | None:
    s = text(value)
    if not s:
        return None
    m = re.search(pattern, s)
    return m.group(1) if m else None


def _author(a: dict[str, Any]) -> Author | None:
    person = obj(a.get("author"))
    name = text(person.get("display_name")) or text(a.get("raw_author_name"))
    if not name:
        return None
    affs = [n for n in (text(i.get("display_name")) for i in objs(a.get("institutions"))) if n]
    if not affs:
        affs = texts(a.get("raw_affiliation_strings"))
    return Author(
        name=name,
        affiliations=affs,
        orcid=_short(person.get("orcid"), r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])"),
    )


def _categories(work: dict[str, Any]) -> list[str]:
    primary = text(obj(work.get("primary_topic")).get("display_name"))
    names = [n for n in (text(t.get("display_name")) for t in objs(work.get("topics"))) if n]
    if not names:
        concepts = sorted(objs(work.get("concepts")), key=lambda c: -_score(c.get("score")))
        names = [n for n in (text(c.get("display_name")) for c in concepts) if n]
    if primary:
        names = [primary] + [n for n in names if n != primary]
    return names


def _score(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _record(work: dict[str, Any], wid: str, abstract: str | None, raw: bytes) -> SourceRecord:
    ids_in = obj(work.get("ids"))
    doi = normalize_doi(text(work.get("doi")) or text(ids_in.get("doi")))
    ids: dict[str, str] = {"openalex": wid}
    pmid = _short(ids_in.get("pmid"), r"(\d+)/?$")
    pmc_no = _short(ids_in.get("pmcid"), r"(\d+)/?$")  # OpenAlex drops the "PMC"
    pmcid = f"PMC{pmc_no}" if pmc_no else None
    mag = text(ids_in.get("mag"))
    for key, v in (("pmid", pmid), ("pmcid", pmcid), ("mag", mag)):
        if v:
            ids[key] = v
    primary = obj(work.get("primary_location"))
    locations = [primary, *objs(work.get("locations"))]
    venue = text(obj(primary.get("source")).get("display_name"))
    ax = None
    for loc in locations:
        url = text(loc.get("landing_page_url")) or ""
        if "arxiv.org/abs/" in url:
            ax = arxiv_id(url)
            break
    biblio = obj(work.get("biblio"))
    extra: dict[str, Any] = {}
    for key in ("type", "language"):
        v = text(work.get(key))
        if v:
            extra[key] = v
    oa_url = text(obj(work.get("open_access")).get("oa_url"))
    if oa_url:
        extra["oa_url"] = oa_url
    for key in ("volume", "issue", "first_page", "last_page"):
        v = text(biblio.get(key))
        if v:
            extra[key] = v
    cited = integer(work.get("cited_by_count"))
    if cited is not None:
        extra["cited_by_count"] = cited
    kws = [n for n in (text(k.get("display_name")) for k in objs(work.get("keywords"))) if n]
    return SourceRecord(
        source="openalex",
        source_id=wid,
        raw=raw,
        raw_format=NAME,
        url=f"https://openalex.org/{wid}",
        title=text(work.get("title")) or text(work.get("display_name")),
        abstract=abstract,
        authors=[a for a in (_author(x) for x in objs(work.get("authorships"))) if a],
        published=iso_date(work.get("publication_date")),
        updated=iso_date(work.get("updated_date")),
        year=year_of(work.get("publication_year")),
        categories=_categories(work),
        doi=doi,
        arxiv_id=ax,
        venue=venue,
        license=text(primary.get("license")),
        ids=ids,
        keywords=kws,
        extra=extra,
    )
