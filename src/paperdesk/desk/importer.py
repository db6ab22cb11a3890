"""`paperdesk library import`: read an existing library (BibTeX, RIS, CSL-JSON or Zotero's
JSON export), match each entry to a work and save it, and keep the entries that match
nothing as the user's own records (they still teach the recommender).

Matching, most certain first: the DOI (`10.48550/arXiv.*` DOIs are arXiv ids), the arXiv
id (BibTeX `eprint`, an arxiv.org URL, Zotero's `arXiv:` note), then the title (plain text,
folded) together with at least one author's family name. Each entry's report says which
of these matched, or that none did. The format is judged from the content.
"""

from __future__ import annotations

import io
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from paperdesk.desk.library import require_user
from paperdesk.errors import PaperdeskError, ParseError
from paperdesk.normalize.ids import arxiv_id, normalize_doi
from paperdesk.normalize.text import plain_text
from paperdesk.store.base import Store, now
from paperdesk.store.codec import decode_record

MAX_BYTES = 64 << 20
MAX_ENTRIES = 50_000
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_ARXIV_IN_TEXT = re.compile(r"(?:arxiv[:\s]\s*|arxiv\.org/(?:abs|pdf)/)([\w./-]+?)(?:v\d+)?(?:\.pdf)?(?:[\s,;]|$)",
                            re.IGNORECASE)


@dataclass
class Entry:
    """One library entry, whatever its format."""

    origin: str
    """`FORMAT:KEY` (the entry's citation key or number in the file)."""
    title: str | None = None
    authors: list[dict[str, str | None]] = field(default_factory=list)
    year: int | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    abstract: str | None = None
    venue: str | None = None
    url: str | None = None
    categories: list[str] = field(default_factory=list)


def fold_title(text: str | None) -> str:
    """A title reduced to its words: markup dropped, accents folded, lower case."""
    s = plain_text(text or "") or ""
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()
    return " ".join(re.findall(r"[a-z0-9]+", s))


def fold_name(text: str | None) -> str:
    s = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode().lower()
    return " ".join(re.findall(r"[a-z]+", s))


def _ids(doi: Any, *texts: Any) -> tuple[str | None, str | None]:
    """(DOI, arXiv id) from a DOI field and free text (URL, eprint, notes)."""
    d = normalize_doi(str(doi)) if doi else None
    ax = None
    if d:
        m = _ARXIV_DOI.match(d)
        if m:
            ax, d = arxiv_id(m.group(1)), None
    for t in texts:
        if ax or not t:
            continue
        ax = arxiv_id(str(t))
        if ax is None:
            m = _ARXIV_IN_TEXT.search(str(t))
            ax = arxiv_id(m.group(1)) if m else None
    return d, ax


def _year(value: Any) -> int | None:
    m = re.search(r"\b(1[5-9]\d\d|2\d\d\d)\b", str(value or ""))
    return int(m.group(1)) if m else None


def _person(given: Any, family: Any, name: Any = None) -> dict[str, str | None]:
    g = str(given).strip() if given else None
    f = str(family).strip() if family else None
    full = str(name).strip() if name else " ".join(x for x in (g, f) if x)
    return {"name": full, "given": g, "family": f or (full.rsplit(" ", 1)[-1] if full else None)}


# -- formats ---------------------------------------------------------------------------

def _bibtex(data: bytes) -> list[Entry]:
    from paperdesk.sources import bibtex

    out = []
    for rec in bibtex.parse(io.BytesIO(data), "import"):
        if isinstance(rec, ParseError):
            continue
        extra = rec.extra or {}
        doi, ax = _ids(rec.doi, rec.arxiv_id, extra.get("eprint"), rec.url, extra.get("note"))
        out.append(Entry(
            origin=f"bibtex:{rec.source_id}", title=rec.title,
            authors=[_person(a.given, a.family, a.display or a.name) for a in rec.authors],
            year=rec.year, doi=doi, arxiv_id=ax, abstract=rec.abstract,
            venue=rec.venue or rec.journal_ref, url=rec.url, categories=list(rec.categories),
        ))
    return out


_RIS_LINE = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")


def _ris(text: str) -> list[Entry]:
    out: list[Entry] = []
    cur: dict[str, list[str]] = {}
    n = 0
    for line in text.splitlines():
        m = _RIS_LINE.match(line.rstrip())
        if not m:
            continue
        tag, value = m.group(1), (m.group(2) or "").strip()
        if tag == "ER":
            n += 1
            out.append(_ris_entry(cur, n))
            cur = {}
            continue
        cur.setdefault(tag, []).append(value)
    if cur.get("TI") or cur.get("T1"):
        out.append(_ris_entry(cur, n + 1))
    return out


def _ris_entry(f: dict[str, list[str]], n: int) -> Entry:
    def one(*tags: str) -> str | None:
        return next((f[t][0] for t in tags if f.get(t) and f[t][0]), None)

    authors = []
    for a in f.get("AU", []) + f.get("A1", []):
        family, _, given = a.partition(",")
        authors.append(_person(given.strip() or None, family.strip()) if given else _person(None, None, a))
    urls = f.get("UR", []) + f.get("L1", [])
    doi, ax = _ids(one("DO"), *urls, one("M1"), one("N1"), one("ID"))
    return Entry(
        origin=f"ris:{one('ID') or n}", title=one("TI", "T1"), authors=authors,
        year=_year(one("PY", "Y1", "DA")), doi=doi, arxiv_id=ax, abstract=one("AB", "N2"),
        venue=one("T2", "JO", "JF", "BT"), url=urls[0] if urls else None,
        categories=[k for k in f.get("KW", []) if re.match(r"^[a-z-]+\.[A-Za-z]{2}$", k)],
    )


def _csl(items: list[dict[str, Any]]) -> list[Entry]:
    out = []
    for n, it in enumerate(items, 1):
        issued = (it.get("issued") or {}).get("date-parts") or [[None]]
        year = _year(issued[0][0] if issued and issued[0] else None) or _year((it.get("issued") or {}).get("raw"))
        doi, ax = _ids(it.get("DOI"), it.get("URL"), it.get("number"), it.get("archive_location"), it.get("note"))
        out.append(Entry(
            origin=f"csl:{it.get('id') or n}", title=it.get("title"),
            authors=[_person(a.get("given"), a.get("family"), a.get("literal")) for a in it.get("author") or []
                     if isinstance(a, dict)],
            year=year, doi=doi, arxiv_id=ax, abstract=it.get("abstract"),
            venue=it.get("container-title"), url=it.get("URL"),
        ))
    return out


def _zotero(items: list[dict[str, Any]]) -> list[Entry]:
    """Zotero's own JSON (the Web API's items, `{"key", "data": {…}}`, or the data alone,
    as Better BibTeX's JSON export lists them under `items`)."""
    out = []
    for n, raw in enumerate(items, 1):
        it = raw.get("data", raw)
        if it.get("itemType") in ("attachment", "note", "annotation"):
            continue
        creators = [c for c in it.get("creators") or [] if isinstance(c, dict)
                    and c.get("creatorType", "author") == "author"]
        doi, ax = _ids(it.get("DOI"), it.get("archiveID"), it.get("url"), it.get("extra"),
                       it.get("reportNumber"))
        out.append(Entry(
            origin=f"zotero:{it.get('key') or it.get('citationKey') or n}", title=it.get("title"),
            authors=[_person(c.get("firstName"), c.get("lastName"), c.get("name")) for c in creators],
            year=_year(it.get("date")), doi=doi, arxiv_id=ax, abstract=it.get("abstractNote"),
            venue=it.get("publicationTitle") or it.get("proceedingsTitle") or it.get("repository"),
            url=it.get("url"),
        ))
    return out


def parse(data: bytes) -> tuple[str, list[Entry]]:
    """(format, entries) of a library file, its format judged from the content."""
    if len(data) > MAX_BYTES:
        raise PaperdeskError(f"library files are limited to {MAX_BYTES >> 20} MiB")
    text = data.decode("utf-8-sig", errors="replace")
    head = text.lstrip()[:1]
    if not head:
        raise PaperdeskError("empty file: nothing to import")
    if head in "[{":
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise PaperdeskError(f"not valid JSON: {exc}") from None
        items = doc.get("items", []) if isinstance(doc, dict) else doc
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise PaperdeskError("a JSON library is a list of CSL-JSON items or Zotero items")
        if any("creators" in i.get("data", i) or "itemType" in i.get("data", i) for i in items):
            return "zotero", _zotero(items)
        return "csl", _csl(items)
    if re.search(r"^TY  -", text, re.MULTILINE):
        return "ris", _ris(text)
    if "@" in text:
        return "bibtex", _bibtex(data)
    raise PaperdeskError("unknown library format (BibTeX, RIS, CSL-JSON or Zotero JSON)")


# -- matching ----------------------------------------------------------------------------

def _pick(found: list[tuple[str, int | None]]) -> str:
    """The work of the first record that has one, else the first record's key."""
    for _, wid in found:
        if wid is not None:
            return f"W{wid}"
    return found[0][0]


def _families(entry: Entry) -> set[str]:
    return {fold_name(a.get("family")).rsplit(" ", 1)[-1] for a in entry.authors if a.get("family")} - {""}


def match(store: Store, entries: list[Entry]) -> list[tuple[str | None, str | None]]:
    """(item, how) per entry: how = doi | arxiv | title+authors | None (no match)."""
    desk = store.desk
    by_doi = desk.records_by_ids("doi", [e.doi for e in entries if e.doi])
    by_ax = desk.records_by_ids("arxiv", [e.arxiv_id for e in entries if e.arxiv_id])
    out: list[tuple[str | None, str | None]] = []
    need: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        if e.doi and e.doi in by_doi:
            out.append((_pick(by_doi[e.doi]), "doi"))
        elif e.arxiv_id and e.arxiv_id in by_ax:
            out.append((_pick(by_ax[e.arxiv_id]), "arxiv"))
        else:
            out.append((None, None))
            t = fold_title(e.title)
            if len(t) >= 12:
                need.setdefault(t, []).append(i)
    if need:
        hits: dict[str, list[str]] = {}
        for key, title in desk.titles():
            t = fold_title(title)
            if t in need:
                hits.setdefault(t, []).append(key)
        data = desk.record_data([k for ks in hits.values() for k in ks])
        works = desk.record_works(list(data))
        for t, idx in need.items():
            for i in idx:
                fams = _families(entries[i])
                for key in sorted(hits.get(t, [])):
                    rec = decode_record(data[key])
                    theirs = {fold_name(a.family or a.name).rsplit(" ", 1)[-1] for a in rec.authors}
                    if not fams or fams & theirs:
                        out[i] = (f"W{works[key]}" if key in works else key, "title+authors")
                        break
    return out


def import_library(store: Store, username: str, data: bytes) -> dict[str, Any]:
    """Import a library file into `username`'s library; the report lists every entry with
    how it matched (`doi`, `arxiv`, `title+authors`, `own` for an own record kept)."""
    require_user(store, username)
    fmt, entries = parse(data)
    if len(entries) > MAX_ENTRIES:
        raise PaperdeskError(f"at most {MAX_ENTRIES} entries a file")
    matched = match(store, entries)
    saved = {i.item for i in store.desk.library(username)}
    own_titles = {fold_title(r.data.get("title")): r.id for r in store.desk.own_records(username)}
    stamp = now()
    report = []
    with store.transaction():
        for e, (item, how) in zip(entries, matched, strict=True):
            if item is None:
                how = "own"
                t = fold_title(e.title)
                if t and t in own_titles:
                    item = f"mine:{own_titles[t]}"
                else:
                    data_ = {k: v for k, v in asdict(e).items() if k != "origin" and v not in (None, [], "")}
                    item = f"mine:{store.desk.add_own(username, data_, e.origin, stamp)}"
                    if t:
                        own_titles[t] = int(item[5:])
            added = item not in saved and store.desk.add_items(username, [item], stamp) == 1
            saved.add(item)
            report.append({"entry": e.origin, "title": e.title, "matched": how, "item": item,
                           "added": added})
    counts: dict[str, int] = {}
    for r in report:
        counts[str(r["matched"])] = counts.get(str(r["matched"]), 0) + 1
    return {"user": username, "format": fmt, "entries": len(entries), "by": counts, "report": report}
