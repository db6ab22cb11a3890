"""Identifier normal forms: arXiv ids (old and new style, with versions), DOIs, OpenReview ids.

Each function takes whatever a source or a user wrote (a bare id, `arXiv:` form, an abs or
pdf URL, an OAI identifier, a `doi:` or resolver URL, URL-encoded or with a trailing full
stop from a sentence) and returns the one canonical spelling the store keys on, or None
when there is no such id in it. They never raise on odd input.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

# Archives that had old-style ids (`hep-th/9709111`), from arXiv's taxonomy. Checking the
# archive keeps `and/1234567`-like text from passing as an id.
OLD_ARCHIVES = frozenset(
    "acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg "
    "comp-gas cond-mat cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph "
    "mtrl-th nlin nucl-ex nucl-th patt-sol physics plasm-ph q-alg q-bio quant-ph solv-int "
    "supr-con".split()
)

# New style: YYMM.NNNN (2007-04 … 2014-12) or YYMM.NNNNN (2015-01 …), optional vN.
_NEW = re.compile(r"(?<!\d)(?<!\d\.)(\d{2})(\d{2})\.(\d{4,5})(?:v(\d+))?(?![\d])")
_NEW_EXACT = re.compile(r"(\d{2})(\d{2})\.(\d{4,5})(?:v(\d+))?")
# Old style: archive[.SC]/YYMMNNN, optional vN; the archive is matched case-insensitively.
_OLD = re.compile(
    r"(?<![A-Za-z\-])([A-Za-z][A-Za-z\-]*)(?:\.[A-Za-z]{2})?/(\d{2})(\d{2})(\d{3})(?:v(\d+))?(?!\d)"
)


def _valid_new(yy: str, mm: str, num: str) -> bool:
    month = int(mm)
    if not 1 <= month <= 12:
        return False
    yymm = int(yy + mm)
    if yymm < 704:
        return False
    return len(num) == (4 if yymm < 1501 else 5)


def _valid_old(archive: str, yy: str, mm: str) -> bool:
    # Old-style ids ran from 1991-08 to 2007-03.
    return archive in OLD_ARCHIVES and 1 <= int(mm) <= 12 and (int(yy) >= 91 or int(yy) <= 7)


def _version(digits: str | None) -> str | None:
    """`v3` from `"3"` or `"03"`; None for no version or the impossible `v0`."""
    return f"v{int(digits)}" if digits and int(digits) > 0 else None


def split_arxiv_id(text: str | None) -> tuple[str, str | None] | None:
    """`(id_without_version, "vN" or None)` from anything that carries an arXiv id.

    Takes bare ids (`2401.01234v3`, `0704.0001`, `hep-th/9709111v2`), `arXiv:` forms,
    abs/pdf URLs (`https://arxiv.org/pdf/2401.01234v3.pdf`), OAI identifiers
    (`oai:arXiv.org:hep-th/9709111`) and arXiv DOIs (`10.48550/arXiv.2401.01234`).
    Old-style subject classes are dropped (`math.AG/0101001` → `math/0101001`) and the
    archive is lower-cased, as arXiv's canonical ids are. Dates are checked (month 01-12,
    4-digit numbers until 2014, 5-digit after), so version numbers, years and DOIs of
    other publishers are not mistaken for ids. None when there is no id.
    """
    if not text:
        return None
    # The commonest case, with string tests only: a bare new-style id without a version,
    # already canonical (every record's id, checked by its parser and again by `finish`).
    # The same checks as `_valid_new`; anything else takes the general path below.
    n = len(text)
    if (
        (n == 10 or n == 9)
        and text[4] == "."
        and text.isascii()
        and text[:4].isdigit()
        and text[5:].isdigit()
        and "01" <= text[2:4] <= "12"
        and text[:4] >= "0704"
        and n == (9 if text[:4] < "1501" else 10)
    ):
        return text, None
    m = _NEW_EXACT.fullmatch(text)  # already a bare new-style id (with a version)
    if m and _valid_new(m.group(1), m.group(2), m.group(3)):
        return f"{m.group(1)}{m.group(2)}.{m.group(3)}", _version(m.group(4))
    s = text.strip()
    if len(s) > 2_000:  # ids live in short fields; do not scan a pasted abstract
        s = s[:2_000]
    if "%" in s:
        s = unquote(s)
    if "/" in s:
        for m in _OLD.finditer(s):
            archive = m.group(1).lower()
            if _valid_old(archive, m.group(2), m.group(3)):
                v = m.group(5)
                return f"{archive}/{m.group(2)}{m.group(3)}{m.group(4)}", _version(v)
    for m in _NEW.finditer(s):
        yy, mm, num, v = m.groups()
        if _valid_new(yy, mm, num):
            return f"{yy}{mm}.{num}", _version(v)
    return None


def arxiv_id(text: str | None) -> str | None:
    """The arXiv id without version (`2401.01234`, `hep-th/9709111`), or None."""
    parts = split_arxiv_id(text)
    return parts[0] if parts else None


def arxiv_version(text: str | None) -> str | None:
    """The version part (`v2`) of an arXiv id or URL, or None when it has none."""
    parts = split_arxiv_id(text)
    return parts[1] if parts else None


# --- DOIs -------------------------------------------------------------------------------

_DOI_PREFIX = re.compile(
    r"^(?:(?:https?://)?(?:(?:dx\.|www\.)?doi\.org|doi\.acm\.org|hdl\.handle\.net)/"
    r"|doi:\s*|info:doi/|urn:doi:)",
    re.IGNORECASE,
)
_DOI = re.compile(r"10\.\d{4,9}/\S+")
_TRAIL = ".,;:'\"!?>]}"
_PAIRS = {")": "(", "]": "["}


def normalize_doi(text: str | None) -> str | None:
    """Lower-case DOI `10.NNNN/suffix` without resolver prefix, or None.

    Accepts `10.1103/PhysRevD.75.124007`, `doi:10…`, `https://doi.org/10…`,
    `http://dx.doi.org/10…`, URL-encoded forms (`10.1002%2Fasi.24898`) and a DOI at the
    end of a sentence (`… 10.1017/S0963180123000464.`). Trailing punctuation is dropped
    unless it is part of the DOI (a closing parenthesis that closes one inside it, as in
    `10.1016/0370-2693(92)90710-L`). Of several DOIs in one field (arXiv lists erratum
    DOIs after the main one) the first is kept. DOIs are case-insensitive by the DOI
    handbook, so lower case is the canonical key.
    """
    if not text:
        return None
    s = text.strip()
    if len(s) > 2_000:
        s = s[:2_000]
    if "%" in s:
        s = unquote(s)
    s = _DOI_PREFIX.sub("", s).strip()
    if not s.startswith("10."):
        m = _DOI.search(s)
        if not m:
            return None
        s = m.group(0)
    s = s.split()[0] if s else s
    while s and (s[-1] in _TRAIL or (s[-1] in _PAIRS and s.count(_PAIRS[s[-1]]) < s.count(s[-1]))):
        s = s[:-1]
    if not _DOI.fullmatch(s):
        return None
    return s.lower()


def doi_url(doi: str) -> str:
    """The resolver link for a normalised DOI (the `url` of a Crossref record)."""
    return "https://doi.org/" + doi


# --- OpenReview -------------------------------------------------------------------------

_OPENREVIEW_URL = re.compile(
    r"openreview\.net/(?:forum|pdf|attachment)\?(?:[^#\s]*&)?id=([^&#\s]+)"
)
_OPENREVIEW_ID = re.compile(r"[A-Za-z0-9_\-]{6,20}")


def openreview_id(text: str | None) -> str | None:
    """The forum / note id (`05T81ScPFb`) from a bare id, `openreview:` key or forum URL.

    OpenReview ids are case-sensitive, so they are returned as written. None when the
    text is not an id (wrong length or characters).
    """
    if not text:
        return None
    s = text.strip()
    if len(s) > 2_000:
        return None
    m = _OPENREVIEW_URL.search(s)
    if m:
        s = unquote(m.group(1))
    elif s.lower().startswith("openreview:"):
        s = s[len("openreview:") :].strip()
    return s if _OPENREVIEW_ID.fullmatch(s) else None
