"""What a record's text says beyond its words, for the works matcher: the kind of item a
title names (an erratum, a part, a reply, a comment), whether the title is front matter
that many items share, the venue reduced to comparable words, the first page, and the
abstract's opening sentences.

Why these: on DBLP–ACM data the matcher was not tuned on, most false merges were recurring
column titles ("Guest editorial", "Editor's notes"), an erratum joined to the paper it
corrects and "(part II)" joined to part I. A title names a paper only when it is not
generic and the item is the paper itself; the rest must come from authors, year, venue
and pages (`paperdesk.resolve.pairs`).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from typing import Any

_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}
_WORD_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

# Patterns run on the folded title (lower case, accents folded, punctuation kept).
_Q = r"[\s:.,'\"‘’“”-]*"
_ERRATUM = re.compile(
    r"\b(?:errat(?:um|a)|corrigend(?:um|a)|addend(?:um|a)|retraction(?: note)?|retracted)\b"
    r"(?:\s*(?:to|of|for|on)\b)?" + _Q + r"|^corrections?\s*(?:to\b|:)" + _Q
)
_PART = re.compile(
    r"[\s(\[,:;.-]*\bpart\s+(\d{1,2}|[ivx]{1,4}|one|two|three|four|five|six)\b[)\]]?"
)
_REPLY = re.compile(
    r"^(?:in\s+)?(?:reply|replies|response|responses)\s+(?:to|on)\b" + _Q
    + r"|^rejoinder\b" + _Q + r"|\bauthors?'?s?\s+(?:reply|response)\b" + _Q
)
_COMMENT = re.compile(
    r"^(?:(?:some\s+)?comments?|remarks?|discussion|a\s+comment)\s+(?:on|about|of|to)\b" + _Q
    + r"|\bcomments?\s+on\b" + _Q
)
_ABSTRACT_OF = re.compile(r"^(?:an\s+)?extended\s+abstract\s+(?:of|for|on)\b" + _Q)
_FRONT_TAIL = re.compile(
    r"(?:,|:|\s-{1,2}|\s—)\s*(?:(?:guest\s+)?(?:editor'?s'?\s+|editors'?\s+)?"
    r"(?:foreword|preface|introduction|editorial)|(?:a\s+)?book\s+reviews?)\s*$"
)
"""'Information Visualization, Guest Editors' Foreword', 'X - Book Review': the front
matter of an issue on X or a review of the book X, which other libraries list under X
alone (the review: by its reviewer, `REVIEW_NOTE`)."""
REVIEW_NOTE = "book review"
"""A title whose note holds this names a review, which meets a record titled as the book
only when the authors agree (the reviewer), never the book by its own authors."""

GENERIC_TITLES = frozenset(
    """editorial|guest editorial|editorial introduction|editor s notes|editors notes|editor s note|
    editor s introduction|editors introduction|guest editor s introduction|guest editors introduction|
    letter from the editor|letter from the editors|letters to the editor|from the editor|
    introduction|foreword|preface|title foreword|front matter|back matter|table of contents|contents|
    author index|subject index|index|masthead|cover|in memoriam|obituary|book review|book reviews|
    book review column|reviews|chair s message|chairs message|treasurer s message|president s message|
    message from the chair|message from the chairs|message from the program chairs|welcome message|
    calls for papers|call for papers|calls for papers announcements|announcements|news|trade press news|
    reports|report|research centers|career forum|articles|panel|keynote|keynote address|invited talk|
    tutorial|program committee|organizing committee|list of reviewers|reviewers|acknowledgments|
    acknowledgements|acknowledgment to reviewers|reminiscences on influential papers|influential papers|
    distinguished database profiles|database principles|standards|correspondence|errata|erratum|
    corrigendum|addendum|discussion|rejoinder|abstracts|poster session|demonstrations|industrial session"""
    .replace("\n", "")
    .replace("  ", "")
    .split("|")
)
"""Front-matter and column titles (folded, punctuation as spaces) that many items share."""
_COLUMN_TAIL = frozenset(
    "column columns corner forum news notes message messages editorial report reports "
    "introduction foreword preface reviews announcements profiles update updates digest".split()
)
"""A short title ending in one of these words is a recurring column ('Database theory column')."""
_GENERIC_HEADS = ("report on ", "letter from ", "message from ", "news from ", "notes from ")

_VENUE_ABBREV = {
    "trans": "transactions", "syst": "systems", "sys": "systems", "j": "journal",
    "jour": "journal", "conf": "conference", "proc": "proceedings", "int": "international",
    "intl": "international", "symp": "symposium", "comput": "computing", "sci": "science",
    "eng": "engineering", "inf": "information", "inform": "information", "lett": "letters",
    "rev": "review", "mag": "magazine", "res": "research", "appl": "applications",
    "commun": "communications", "comm": "communications", "assoc": "association",
    "mach": "machinery", "intell": "intelligence", "artif": "artificial", "lang": "languages",
    "softw": "software", "theor": "theoretical", "math": "mathematics", "stat": "statistics",
    "knowl": "knowledge", "data": "data", "bases": "bases", "db": "database",
}
_JOURNAL_WORDS = frozenset(
    "journal transactions record letters magazine review bulletin newsletter communications "
    "quarterly annals".split()
)
_CONFERENCE_WORDS = frozenset("conference symposium workshop proceedings congress meeting".split())
_VENUE_DROP = frozenset(
    "the on of and for in to at acm ieee siam springer elsevier international annual "
    "mdash ndash th st nd rd".split()
)
_NUMBER = re.compile(r"^\d+$")
_PAGE = re.compile(r"^\s*[A-Za-z]{0,2}(\d{1,7})")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9\\$])")
LEAD_SENTENCES = 2
LEAD_MIN_WORDS = 12
"""An opening shorter than this ('We study X.') is shared by too many papers to be evidence."""


_ANY_KIND = re.compile(
    r"errat|corrig|addend|retract|correction|part\s|repl|respon|rejoinder|comment|remark|"
    r"discussion|extended\s+abstract"
)
"""One search that rules out the kind patterns for almost every title (they are hot)."""
_ANY_FRONT = re.compile(r"foreword|preface|introduction|editorial|review")


def title_kinds(folded: str) -> tuple[frozenset[str], str]:
    """(kinds, the title with its kind words removed) of a folded raw title; no kinds:
    (empty set, '')."""
    if not _ANY_KIND.search(folded):
        return frozenset(), ""
    kinds: set[str] = set()
    core = folded
    for name, pat in (
        ("erratum", _ERRATUM),
        ("reply", _REPLY),
        ("comment", _COMMENT),
        ("abstract-of", _ABSTRACT_OF),
    ):
        if pat.search(core):
            kinds.add(name)
            core = pat.sub(" ", core)
    parts = _PART.findall(core)
    if parts:
        n = parts[-1]
        num = int(n) if n.isdigit() else _ROMAN.get(n) or _WORD_NUM.get(n) or 0
        kinds.add(f"part:{num}")
        core = _PART.sub(" ", core)
    if not kinds:
        return frozenset(), ""
    return frozenset(kinds), core


def front_matter_tail(folded: str) -> tuple[str, str]:
    """(the title without a trailing front-matter phrase, the phrase) of a folded raw title;
    (title, '') when it has none or is nothing but front matter."""
    if not _ANY_FRONT.search(folded):
        return folded, ""
    m = _FRONT_TAIL.search(folded)
    if not m or not folded[: m.start()].strip():
        return folded, ""
    return folded[: m.start()], folded[m.start() :]


def is_generic(title: str) -> bool:
    """True for front-matter and column titles (`title`: folded, punctuation as spaces)."""
    if not title:
        return False
    if title in GENERIC_TITLES:
        return True
    words = title.split()
    if len(words) <= 5 and words[-1] in _COLUMN_TAIL:
        return True
    return len(words) <= 8 and title.startswith(_GENERIC_HEADS)


def venue_words(words: list[str]) -> tuple[str, str]:
    """(comparable venue words joined by spaces, 'journal' | 'conference' | '') of a
    venue's folded words."""
    out: list[str] = []
    kind = ""
    for w in words:
        w = _VENUE_ABBREV.get(w, w)
        if w in _JOURNAL_WORDS:
            kind = "journal"
            continue
        if w in _CONFERENCE_WORDS:
            kind = kind or "conference"
            continue
        if w in _VENUE_DROP or _NUMBER.match(w) or len(w) < 2:
            continue
        out.append(w)
    if not kind and len(out) == 1 and len(words) <= 2:
        kind = "conference"  # a bare acronym ('VLDB', 'NeurIPS 2024') names a conference
    return " ".join(out), kind


def venue_agreement(a_words: str, a_kind: str, b_words: str, b_kind: str) -> int:
    """+1 when two venues share a word or one is the other's acronym, -1 when one is a
    journal and the other a conference, 0 when nothing can be said (or a venue is missing)."""
    if not (a_words or a_kind) or not (b_words or b_kind):
        return 0
    if a_kind and b_kind and a_kind != b_kind:
        return -1
    wa, wb = set(a_words.split()), set(b_words.split())
    if wa & wb:
        return 1
    acr_a = "".join(w[0] for w in a_words.split())
    acr_b = "".join(w[0] for w in b_words.split())
    if (len(acr_a) >= 3 and acr_a in wb) or (len(acr_b) >= 3 and acr_b in wa):
        return 1
    return 0


def first_page(extra: Mapping[str, Any] | None) -> str:
    """The first page of a `page`/`pages` field ('123-145', 'e1234', '12:1–12:20')."""
    if not extra:
        return ""
    value = extra.get("page") or extra.get("pages")
    if not isinstance(value, str | int):
        return ""
    m = _PAGE.match(str(value))
    return m.group(1).lstrip("0") if m else ""


def lead_text(abstract: str) -> str:
    """The abstract's opening sentences (raw text), or '' when the abstract has fewer."""
    if not abstract:
        return ""
    head = abstract[:3000]
    parts = _SENTENCE_END.split(head, maxsplit=LEAD_SENTENCES)
    if len(parts) <= LEAD_SENTENCES:
        return ""  # the whole abstract: a lead key would equal for a truncated copy only
    return " ".join(parts[:LEAD_SENTENCES])


def lead_key(words: list[str]) -> int:
    """A stable 63-bit key of the opening's folded words (0 when too short)."""
    if len(words) < LEAD_MIN_WORDS:
        return 0
    b = " ".join(words).encode()
    key = ((zlib.crc32(b) << 31) ^ zlib.adler32(b) ^ (5 << 59)) & (2**63 - 1)
    return key or 1
