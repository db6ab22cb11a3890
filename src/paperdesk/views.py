"""JSON shapes shared by the CLI and the web layer (one place, so both agree).

A record's JSON carries what later stages derived for it: its `work_id` (resolve), each
author's `author_id` (author profiles), its `subjects` marked given or predicted and its
other `classification_codes` (classify). Each is null / empty until that stage has run.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from paperdesk.model import SourceRecord
from paperdesk.store.base import Store


def record_json(store: Store, rec: SourceRecord, payloads: bool = False) -> dict[str, Any]:
    """The documented `record --json` shape (docs/cli.md)."""
    # here, not at the top: the resolver's modules are not for every user of the views
    from paperdesk.resolve.works_curate import work_id_for

    data = rec.to_dict()
    key = rec.key
    data["work_id"] = work_id_for(store, key)
    ids = {a["position"]: a["author_id"] for a in store.authors.record_authors(key)}
    for pos, author in enumerate(data["authors"]):
        author["author_id"] = ids.get(pos)
    data["subjects"] = store.subjects.of_records([key]).get(key, [])
    data["classification_codes"] = store.subjects.codes_of(key)
    if payloads:
        out = []
        for p in store.record_payloads(key):
            body: bytes = p.pop("body")
            try:
                p["body"] = body.decode("utf-8")
            except UnicodeDecodeError:
                p["body_base64"] = base64.b64encode(body).decode()
            out.append(p)
        data["payloads"] = out
    return data


# -- how a record's text is shown ------------------------------------------------------------

_MARKDOWN_FORMATS = frozenset({"openreview", "papercopilot"})
_PLAIN_FORMATS = frozenset({"crossref", "openalex", "semanticscholar"})


def text_markup(raw_format: str | None) -> str:
    """The markup a record's title and abstract carry, by the parser that read it:
    "markdown" (OpenReview: Markdown with LaTeX math), "plain" (Crossref, OpenAlex,
    Semantic Scholar: their text is already plain), else "latex" (arXiv, BibTeX, lists)."""
    if raw_format in _MARKDOWN_FORMATS:
        return "markdown"
    if raw_format in _PLAIN_FORMATS:
        return "plain"
    return "latex"


# -- display titles ------------------------------------------------------------------------

DERIVED_MAX = 110
"""A derived title is cut at the last word boundary before this many characters."""

# Labels of structured abstracts ("BACKGROUND:", "Objective.") that are not a sentence.
_LABEL = re.compile(
    r"^\s*(?:abstract|background|context|introduction|motivation|objectives?|purpose|aims?"
    r"|summary|importance|rationale)\s*[:.\-\u2013\u2014]\s*",
    re.IGNORECASE,
)
# A sentence ends at . ? ! followed by a space and an upper-case letter, digit or quote —
# not after an abbreviation, an initial or "et al.".
_END = re.compile(r"[.?!](?=\s+[\"'\u201c(\[]?[A-Z0-9])")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|et al|cf|vs|resp|approx|Fig|Figs|Eq|Eqs|Sec|Ref|Refs|Dr|Prof|Mr|Ms|"
    r"St|No|Vol|al|etc|ca|viz|Inc|Ltd|Co|Corp|U\.S|U\.K)|\b[A-Z])$"
)


def _first_sentence(text: str) -> str:
    for m in _END.finditer(text):
        head = text[: m.start()]
        if _ABBREV.search(head):
            continue
        if len(head) >= 25:  # "Background." and the like: take the next sentence too
            mark = text[m.start()]
            return head if mark == "." else head + mark
    return text


def derive_title(abstract: str | None) -> str | None:
    """A title for a work its sources gave none: the abstract's first sentence as plain
    text, cut at a word boundary, in square brackets (the cataloguers' mark for a title
    supplied by the catalogue rather than the work). None without an abstract."""
    from paperdesk.normalize.text import plain_text

    text = plain_text(abstract or "") or ""
    text = " ".join(text.split())
    text = _LABEL.sub("", text, count=1)
    if not text:
        return None
    sentence = _first_sentence(text).strip()
    if len(sentence) > DERIVED_MAX:
        cut = sentence[: DERIVED_MAX + 1]
        space = cut.rfind(" ")
        sentence = (cut[:space] if space > DERIVED_MAX // 2 else cut[:DERIVED_MAX]).rstrip(" ,;:-")
        sentence += "\u2026"
    return f"[{sentence}]"


def display_title(
    title: str | None, abstract: str | None, label: str | None = None
) -> tuple[str, str]:
    """(`display_title`, `display_title_from`): the source's title when it gave one
    ("title"), else one derived from the abstract ("abstract"), else a bracketed
    description from the record's identifier ("identifier") — never empty."""
    if title and title.strip():
        return title, "title"
    derived = derive_title(abstract)
    if derived:
        return derived, "abstract"
    return f"[{label or 'A record'}: no title or abstract]", "identifier"
