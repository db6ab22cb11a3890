"""Citation export of a work: BibTeX, RIS and CSL-JSON.

Input is the plain work dict the paper page and its JSON twin show (`catalog.paper`):
`title`, `display_title`, `authors` [{name, given, family}], `year`, `date`, `doi`,
`arxiv_id`, `venue`, `url`, `abstract`, `subjects`/`categories`, `work_id`, and `records`
(each with `source`, `type`, `venue`, `journal_ref`, `volume`, `issue`, `pages`, …).

What a work *is* decides the entry type (`kind_of`): a journal article (`@article`, RIS
`JOUR`, CSL `article-journal`), a conference paper (`@inproceedings`, `CONF`,
`paper-conference`), a chapter or reference entry (`@incollection`, `CHAP`, `chapter`), a
dataset (`@misc`, `DATA`, `dataset`), an arXiv preprint — written the way arXiv writes its
own BibTeX: `@misc` with `eprint`, `archivePrefix`, `primaryClass` and `url` (RIS `GEN`,
CSL `article` with `publisher: arXiv` and `number: arXiv:ID`) — or anything else (`@misc`,
`GEN`, `document`).

Each format is written so that Zotero's own import translators (BibTeX.js, RIS.js,
CSL JSON.js; docs/web.md says which commit and how it was run) keep the title, creators,
date, DOI, URL, arXiv id and container without a warning: BibTeX adds biblatex's `date`
(Zotero keeps the day, `year` stays for BibTeX styles) and `eprinttype`; RIS gives a
conference paper's container as `C3` (proceedings title) as well as `T2` (conference name);
CSL-JSON keeps the arXiv id of a published work in `note` as `arXiv: ID` (Zotero's Extra).

Every field is untrusted text (#18): identifiers are validated (an arXiv id, a DOI, an
arXiv category, an http(s) URL — anything else is left out), and text is made safe per
format: for BibTeX one line, control characters dropped, `%&#` escaped, braces balanced
(unbalanced or backslash-escaped ones spelled `\\textbraceleft{}`/`\\textbraceright{}`), no
backslash right before the closing brace; for RIS one line per tag (every kind of line break folded into a space,
so no value can end the record or start a tag); CSL-JSON is JSON and is written by a JSON
encoder. A work without a title gets its bracketed display title (derived from the
abstract) and a note saying so.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import bibtexparser
from bibtexparser.model import Entry, Field

FORMATS = {"bibtex": "application/x-bibtex", "ris": "application/x-research-info-systems",
           "csl": "application/vnd.citationstyles.csl+json"}

ARXIV_ID = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z][a-z.-]{1,20}/\d{7})$")
ARXIV_CATEGORY = re.compile(r"^[a-z][a-z-]{0,15}(?:\.[A-Za-z][A-Za-z-]{0,15})?$")
DOI = re.compile(r"^10\.\d{4,9}/[^\s{}\\\"<>]{1,300}$")
URL = re.compile(r"^https?://[^\s{}\\\"<>]{1,2000}$", re.IGNORECASE)
DERIVED_NOTE = "Title supplied by paperdesk from the first sentence of the abstract: the source gives none"

# Source work types (Crossref / OpenAlex `type`, BibTeX entry type) → kind.
_JOURNAL_TYPES = {"journal-article", "article", "journal", "review"}
_CONFERENCE_TYPES = {"proceedings-article", "inproceedings", "conference", "paper-conference",
                     "conference-paper"}
_CHAPTER_TYPES = {"book-chapter", "reference-entry", "incollection", "inbook", "chapter",
                  "book-section", "book-part"}
_DATASET_TYPES = {"dataset"}
_PREPRINT_TYPES = {"posted-content", "preprint"}
_CONFERENCE_WORDS = re.compile(
    r"\b(?:proc(?:eedings|\.)?|conference|conf\.|workshop|symposium|ICLR|ICML|NeurIPS|NIPS|"
    r"CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|AAAI|IJCAI|COLM|CoRL|AISTATS|UAI|KDD|SIGIR|WWW|3DV)\b",
    re.IGNORECASE,
)
_JOURNAL_WORDS = re.compile(r"\b(?:journal|transactions|letters|review|annals)\b", re.IGNORECASE)
_UNDECIDED = re.compile(r"\b(?:submitted to|under review|rejected|withdrawn|desk)\b", re.IGNORECASE)


# -- text safety ---------------------------------------------------------------------------

_ASCII_SPACES = {ord(c): " " for c in "\t\n\v\f\r\x1c\x1d\x1e\x1f"}


def one_line(text: Any) -> str:
    """Any text as one line: every line break or other whitespace (CR, LF, U+2028, VT …)
    one space, control and format characters dropped."""
    s = str(text or "").translate(_ASCII_SPACES)
    if not s.isprintable():
        # Only then a character at a time: `isprintable` is false for exactly the
        # categories dropped here (and for whitespace other than a space), so a printable
        # text, the usual one, needs none of it.
        s = "".join(" " if c.isspace() else c for c in s
                    if c.isspace() or unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co"))
    return " ".join(s.split())


def _bib_escape(text: Any) -> str:
    """Keep the LaTeX the source wrote, but never emit a field any BibTeX parser would
    read differently: one line, `%&#` escaped, braces balanced however a parser counts
    them (with or without treating `\\{` as escaped), no trailing backslash."""
    s = one_line(text)
    s = re.sub(r"(?<!\\)([%&#])", r"\\\1", s)
    s = s.replace("\\{", "\\textbraceleft{}").replace("\\}", "\\textbraceright{}")
    depth = 0
    for ch in s:
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:
            break
    if depth != 0:
        s = s.replace("{}", "\x00").replace("{", "\\textbraceleft\x00").replace("}", "\\textbraceright\x00")
        s = s.replace("\x00", "{}")
    if s.endswith("\\"):  # bibtexparser reads `\\}` as an escaped brace too
        s += " "
    return s


def valid_arxiv_id(value: Any) -> str | None:
    s = str(value or "").strip()
    s = re.sub(r"v\d+$", "", s)
    return s if ARXIV_ID.match(s) else None


def valid_doi(value: Any) -> str | None:
    s = str(value or "").strip()
    return s if DOI.match(s) else None


def valid_url(value: Any) -> str | None:
    s = str(value or "").strip()
    return s if URL.match(s) else None


def valid_category(value: Any) -> str | None:
    s = str(value or "").strip()
    return s if ARXIV_CATEGORY.match(s) else None


# -- what the work is ----------------------------------------------------------------------

def _family(a: dict[str, Any]) -> str:
    return a.get("family") or (a.get("name") or "").rsplit(" ", 1)[-1]


def _given(a: dict[str, Any]) -> str:
    if a.get("given"):
        return str(a["given"])
    name = a.get("name") or ""
    return name.rsplit(" ", 1)[0] if " " in name else ""


def _plain(text: Any) -> str:
    """Title/abstract text without its LaTeX/Markdown markup, for RIS and CSL-JSON (their
    readers show text as it is; BibTeX keeps the LaTeX, it is TeX)."""
    from paperdesk.normalize.text import plain_text

    return one_line(plain_text(str(text)) if text else "")


def _title(work: dict[str, Any], plain: bool = False) -> tuple[str, bool]:
    """(title, derived?)."""
    title = _plain(work.get("title")) if plain else one_line(work.get("title"))
    if title:
        return title, False
    shown = one_line(work.get("display_title"))
    if not shown:
        from paperdesk.views import display_title

        shown = display_title(None, work.get("abstract"), work.get("work_id"))[0]
    return shown, True


def kind_of(work: dict[str, Any]) -> dict[str, Any]:
    """{"kind": journal | conference | chapter | dataset | preprint | other, "container":
    venue or None, "volume", "issue", "pages", "publisher"} from the work's records."""
    records = work.get("records") or []
    out: dict[str, Any] = {"kind": "other", "container": None}

    def take(kind: str, rec: dict[str, Any] | None, container: Any) -> dict[str, Any]:
        out.update(kind=kind, container=one_line(container) or None)
        for key in ("volume", "issue", "pages", "publisher"):
            out[key] = one_line((rec or {}).get(key)) or None
        return out

    for r in records:  # a source that says what the work is
        t = str(r.get("type") or "").lower()
        venue = r.get("venue")
        if t in _JOURNAL_TYPES and venue and r.get("source") != "arxiv":
            return take("journal", r, venue)
        if t in _CONFERENCE_TYPES and venue:
            return take("conference", r, venue)
        if t in _CHAPTER_TYPES and venue:
            return take("chapter", r, venue)
        if t in _DATASET_TYPES and r.get("source") != "arxiv":
            return take("dataset", r, venue)
    for r in records:  # an accepted OpenReview paper: its venue
        venue = str(r.get("venue") or "")
        if r.get("source") == "openreview" and venue and not _UNDECIDED.search(venue):
            return take("journal" if _JOURNAL_WORDS.search(venue) and not _CONFERENCE_WORDS.search(venue)
                        else "conference", r, venue)
    for r in records:  # arXiv's journal-ref: published, where it says
        ref = str(r.get("journal_ref") or "")
        if ref:
            return take("conference" if _CONFERENCE_WORDS.search(ref) else "journal", None, ref)
    for r in records:  # a list's venue with a DOI: published there
        venue = str(r.get("venue") or "")
        if venue and not r.get("type") and valid_doi(work.get("doi")) and r.get("source") != "arxiv":
            return take("conference" if _CONFERENCE_WORDS.search(venue) else "journal", r, venue)
    if valid_arxiv_id(work.get("arxiv_id")):
        return take("preprint", None, None)
    if any(str(r.get("type") or "").lower() in _PREPRINT_TYPES for r in records):
        return take("preprint", None, None)
    if not records and work.get("venue"):  # a bare work dict (no records): its venue
        return take("journal" if work.get("doi") else "other", None, work["venue"])
    return take("other", None, work.get("venue"))


def _primary_class(work: dict[str, Any]) -> str | None:
    cats = [s.get("code") if isinstance(s, dict) else s for s in work.get("subjects") or []]
    cats += list(work.get("categories") or [])
    subjects = work.get("subjects") or []
    if subjects and isinstance(subjects[0], dict) and subjects[0].get("predicted"):
        cats = list(work.get("categories") or [])  # a prediction is not arXiv's filing
    return next((c for c in (valid_category(c) for c in cats) if c), None)


def cite_key(work: dict[str, Any]) -> str:
    """`surname2024firstword`, ASCII only (BibTeX keys are identifiers)."""
    first = work.get("authors") or [{}]
    surname = _family(first[0]) or "anon"
    words = re.findall(r"[A-Za-z]{3,}", work.get("title") or work.get("display_title") or "")
    stop = {"the", "and", "for", "with", "from", "towards", "toward", "on", "via"}
    word = next((w for w in words if w.lower() not in stop), "paper")
    key = f"{surname}{work.get('year') or ''}{word}".lower()
    key = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", key)[:64] or "paper"


def _year(work: dict[str, Any]) -> int | None:
    y = work.get("year")
    try:
        y = int(y) if y is not None else None
    except (TypeError, ValueError):
        return None
    return y if y and 1000 <= y <= 2999 else None


def _date_parts(work: dict[str, Any]) -> list[int]:
    year = _year(work)
    date = str(work.get("date") or "")[:10]
    m = re.match(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$", date)
    if m and year and int(m.group(1)) == year:
        return [int(p) for p in m.groups() if p]
    return [year] if year else []


# -- BibTeX --------------------------------------------------------------------------------

def to_bibtex(work: dict[str, Any]) -> str:
    what = kind_of(work)
    kind = what["kind"]
    title, derived = _title(work)
    arxiv = valid_arxiv_id(work.get("arxiv_id"))
    doi = valid_doi(work.get("doi"))
    fields: list[tuple[str, str]] = [("title", "{" + _bib_escape(title) + "}")]
    authors = " and ".join(
        _bib_escape(f"{_family(a)}, {_given(a)}".strip(", ")) for a in work.get("authors") or []
    )
    if authors:
        fields.append(("author", authors))
    if _year(work):
        fields.append(("year", str(_year(work))))
    parts = _date_parts(work)
    if len(parts) > 1:  # biblatex's date: Zotero keeps month and day (BibTeX styles use year)
        fields.append(("date", "-".join(f"{p:02d}" for p in parts)))
    container = what["container"]
    if kind == "journal" and container:
        fields.append(("journal", _bib_escape(container)))
        entry = "article"
    elif kind == "conference" and container:
        fields.append(("booktitle", _bib_escape(container)))
        entry = "inproceedings"
    elif kind == "chapter" and container:
        fields.append(("booktitle", _bib_escape(container)))
        entry = "incollection"
    else:
        entry = "misc"
        if kind in ("other", "dataset") and container:
            fields.append(("howpublished", _bib_escape(container)))
    # (an @article's publisher: Zotero's journal articles have none before zotero-schema 33,
    # Dec 2025, and it warns and drops it there)
    keys = {"article": ("volume", "issue", "pages"), "inproceedings": ("volume", "pages", "publisher"),
            "incollection": ("pages", "publisher"), "misc": ("publisher",)}
    for key in keys.get(entry, ()):
        if what.get(key):
            fields.append(("number" if key == "issue" else key, _bib_escape(what[key])))
    if arxiv:
        # archivePrefix is arXiv's own spelling (BibTeX); eprinttype is biblatex's, the one
        # Zotero's BibTeX import reads (it keeps the id as `arXiv: ID` in Extra).
        fields += [("eprint", arxiv), ("archivePrefix", "arXiv"), ("eprinttype", "arXiv")]
        primary = _primary_class(work)
        if primary:
            fields.append(("primaryClass", primary))
    if doi:
        fields.append(("doi", _bib_escape(doi)))
    url = f"https://arxiv.org/abs/{arxiv}" if arxiv else valid_url(work.get("url"))
    if url:
        fields.append(("url", url))
    if derived:
        fields.append(("note", DERIVED_NOTE))
    lib = bibtexparser.Library()
    lib.add(Entry(entry, cite_key(work), [Field(k, v) for k, v in fields]))
    return str(bibtexparser.write_string(lib))


# -- RIS -----------------------------------------------------------------------------------

_RIS_TYPE = {"journal": "JOUR", "conference": "CONF", "chapter": "CHAP", "dataset": "DATA",
             "preprint": "GEN", "other": "GEN"}


def to_ris(work: dict[str, Any]) -> str:
    """RIS as Zotero's RIS translator reads it back: GEN imports as a journal article (RIS
    has no preprint type; Zotero writes its own preprints as GEN too), so a preprint's
    arXiv id goes to the archive fields (DB, AN), not to ones Zotero would turn into notes.
    A conference paper's container is both `T2` (Zotero: conference name) and `C3`
    (proceedings title, what BibTeX's booktitle and CSL's container-title become)."""
    what = kind_of(work)
    kind = what["kind"]
    title, derived = _title(work, plain=True)
    lines: list[tuple[str, str]] = [("TY", _RIS_TYPE[kind]), ("TI", title)]
    for a in work.get("authors") or []:
        name = one_line(f"{_family(a)}, {_given(a)}").strip(", ")
        if name:
            lines.append(("AU", name))
    if _year(work):
        lines.append(("PY", str(_year(work))))
    parts = _date_parts(work)
    if len(parts) == 3:
        lines.append(("DA", f"{parts[0]:04d}/{parts[1]:02d}/{parts[2]:02d}"))
    if what["container"] and kind in ("journal", "conference", "chapter"):
        lines.append(("T2", what["container"]))
        if kind == "conference":
            lines.append(("C3", what["container"]))
    tags = {"journal": ("VL", "IS", "SP"), "conference": ("VL", "SP", "PB"), "chapter": ("SP", "PB"),
            "dataset": ("PB",)}.get(kind, ())
    for key, tag in (("volume", "VL"), ("issue", "IS"), ("pages", "SP"), ("publisher", "PB")):
        if tag in tags and what.get(key):
            lines.append((tag, what[key]))
    doi = valid_doi(work.get("doi"))
    if doi:
        lines.append(("DO", doi))
    arxiv = valid_arxiv_id(work.get("arxiv_id"))
    if arxiv:
        lines += [("DB", "arXiv"), ("AN", f"arXiv:{arxiv}")]
    url = f"https://arxiv.org/abs/{arxiv}" if arxiv else valid_url(work.get("url"))
    if url:
        lines.append(("UR", url))
    if work.get("abstract"):
        lines.append(("AB", _plain(work["abstract"])))
    for s in work.get("subjects") or work.get("categories") or []:
        code = valid_category(s.get("code") if isinstance(s, dict) else s)
        if code:
            lines.append(("KW", code))
    if derived:
        lines.append(("N1", DERIVED_NOTE))
    out = [f"{tag}  - {one_line(value)}" for tag, value in lines if one_line(value)]
    return "\n".join(out) + "\nER  - \n"


# -- CSL-JSON ------------------------------------------------------------------------------

_CSL_TYPE = {"journal": "article-journal", "conference": "paper-conference", "chapter": "chapter",
             "dataset": "dataset", "preprint": "article", "other": "document"}


def to_csl(work: dict[str, Any]) -> dict[str, Any]:
    what = kind_of(work)
    kind = what["kind"]
    title, derived = _title(work, plain=True)
    item: dict[str, Any] = {
        "id": one_line(work.get("work_id") or work.get("id")) or cite_key(work),
        "type": _CSL_TYPE[kind],
        "title": title,
        "author": [
            {"family": one_line(_family(a)), "given": one_line(_given(a))}
            for a in work.get("authors") or [] if one_line(_family(a))
        ],
    }
    parts = _date_parts(work)
    if parts:
        item["issued"] = {"date-parts": [parts]}
    doi = valid_doi(work.get("doi"))
    if doi:
        item["DOI"] = doi
    arxiv = valid_arxiv_id(work.get("arxiv_id"))
    url = f"https://arxiv.org/abs/{arxiv}" if arxiv else valid_url(work.get("url"))
    if url:
        item["URL"] = url
    if work.get("abstract"):
        item["abstract"] = _plain(work["abstract"])
    notes = []
    if kind in ("journal", "conference", "chapter", "dataset"):
        if what["container"]:
            item["container-title"] = what["container"]
        for key, csl in (("volume", "volume"), ("issue", "issue"), ("pages", "page"),
                         ("publisher", "publisher")):
            if what.get(key) and (kind in ("journal", "conference") or csl in ("page", "publisher")):
                item[csl] = what[key]
        if arxiv:  # published, and on arXiv: Zotero reads `arXiv: ID` in note into Extra
            notes.append(f"arXiv: {arxiv}")
    elif kind == "preprint" and arxiv:
        item["publisher"] = "arXiv"
        item["number"] = f"arXiv:{arxiv}"
    if derived:
        notes.append(DERIVED_NOTE)
    if notes:
        item["note"] = "\n".join(notes)
    return item
