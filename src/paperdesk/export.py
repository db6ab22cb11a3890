"""Citation export of a work: BibTeX, RIS and CSL-JSON.

Input is the plain work dict the paper page and `paperdesk work ID --json` show (`title`,
`authors` [{name, given, family}], `year`, `date`, `doi`, `arxiv_id`, `venue`,
`journal_ref`, `url`, `abstract`, `categories`, `id`). BibTeX is written by bibtexparser
so that any BibTeX parser reads it back; text is untrusted, so characters that would break
the entry (unbalanced braces, a bare `%` or `&`) are escaped rather than passed through.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import bibtexparser
from bibtexparser.model import Entry, Field

FORMATS = {"bibtex": "application/x-bibtex", "ris": "application/x-research-info-systems",
           "csl": "application/vnd.citationstyles.csl+json"}


def _family(a: dict[str, Any]) -> str:
    return a.get("family") or (a.get("name") or "").rsplit(" ", 1)[-1]


def _given(a: dict[str, Any]) -> str:
    if a.get("given"):
        return str(a["given"])
    name = a.get("name") or ""
    return name.rsplit(" ", 1)[0] if " " in name else ""


def cite_key(work: dict[str, Any]) -> str:
    """`surname2024firstword`, ASCII only (BibTeX keys are identifiers)."""
    first = work.get("authors") or [{}]
    surname = _family(first[0]) or "anon"
    words = re.findall(r"[A-Za-z]{3,}", work.get("title") or "")
    stop = {"the", "and", "for", "with", "from", "towards", "toward", "on", "via"}
    word = next((w for w in words if w.lower() not in stop), "paper")
    key = f"{surname}{work.get('year') or ''}{word}".lower()
    key = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", key) or "paper"


def _bib_escape(text: str) -> str:
    """Keep LaTeX the source wrote, but never emit an entry a parser would choke on."""
    text = " ".join(text.split())
    text = re.sub(r"(?<!\\)([%&#])", r"\\\1", text)
    depth = 0
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:
            break
    if depth != 0:  # unbalanced braces: escape every brace
        text = text.replace("{", r"\{").replace("}", r"\}")
    return text


def to_bibtex(work: dict[str, Any]) -> str:
    fields: list[tuple[str, str]] = [("title", "{" + _bib_escape(work.get("title") or "") + "}")]
    authors = " and ".join(
        _bib_escape(f"{_family(a)}, {_given(a)}".strip(", ")) for a in work.get("authors") or []
    )
    if authors:
        fields.append(("author", authors))
    if work.get("year"):
        fields.append(("year", str(work["year"])))
    venue = work.get("venue") or work.get("journal_ref")
    if venue:
        fields.append(("journal" if work.get("doi") else "howpublished", _bib_escape(venue)))
    if work.get("doi"):
        fields.append(("doi", _bib_escape(work["doi"])))
    if work.get("arxiv_id"):
        fields += [("eprint", work["arxiv_id"]), ("archiveprefix", "arXiv")]
        cats = work.get("categories") or []
        if cats:
            fields.append(("primaryclass", cats[0]))
    if work.get("url"):
        fields.append(("url", _bib_escape(work["url"])))
    kind = "article" if work.get("doi") or work.get("arxiv_id") else "misc"
    lib = bibtexparser.Library()
    lib.add(Entry(kind, cite_key(work), [Field(k, v) for k, v in fields]))
    return str(bibtexparser.write_string(lib))


def to_ris(work: dict[str, Any]) -> str:
    lines = ["TY  - JOUR" if work.get("doi") else "TY  - GEN"]
    lines.append(f"TI  - {' '.join((work.get('title') or '').split())}")
    for a in work.get("authors") or []:
        lines.append(f"AU  - {_family(a)}, {_given(a)}".rstrip(", "))
    if work.get("year"):
        lines.append(f"PY  - {work['year']}")
    if work.get("date"):
        lines.append(f"DA  - {str(work['date'])[:10].replace('-', '/')}")
    if work.get("venue") or work.get("journal_ref"):
        lines.append(f"JO  - {work.get('venue') or work.get('journal_ref')}")
    if work.get("doi"):
        lines.append(f"DO  - {work['doi']}")
    if work.get("url"):
        lines.append(f"UR  - {work['url']}")
    if work.get("abstract"):
        lines.append(f"AB  - {' '.join(work['abstract'].split())}")
    for c in work.get("categories") or []:
        lines.append(f"KW  - {c}")
    lines.append("ER  - ")
    return "\n".join(lines) + "\n"


def to_csl(work: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": work.get("id") or cite_key(work),
        "type": "article-journal" if work.get("doi") else "article",
        "title": " ".join((work.get("title") or "").split()),
        "author": [{"family": _family(a), "given": _given(a)} for a in work.get("authors") or []],
    }
    if work.get("year"):
        parts = [int(p) for p in str(work.get("date") or work["year"])[:10].split("-") if p.isdigit()]
        item["issued"] = {"date-parts": [parts or [int(work["year"])]]}
    for key, csl in (("doi", "DOI"), ("url", "URL"), ("abstract", "abstract")):
        if work.get(key):
            item[csl] = work[key]
    if work.get("venue") or work.get("journal_ref"):
        item["container-title"] = work.get("venue") or work.get("journal_ref")
    if work.get("arxiv_id"):
        item["number"] = f"arXiv:{work['arxiv_id']}"
    return item
