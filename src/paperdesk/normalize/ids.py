"""Identifier normal forms: arXiv ids (old and new style, with versions) and DOIs."""

from __future__ import annotations

import re

# New style: 0704.0001 (4.4 digits, 2007-2014) or 2401.01234 (4.5 digits, 2015-), optional vN.
_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(v\d+)?(?!\d)")
# Old style: hep-th/9709111, math.AG/0101001, cond-mat/0001001v2 (archive[.SUBJ]/YYMMNNN).
_OLD = re.compile(r"([a-z][a-z\-]*(?:\.[A-Z]{2})?)/(\d{7})(v\d+)?(?!\d)")


def split_arxiv_id(text: str | None) -> tuple[str, str | None] | None:
    """`(id_without_version, "vN" or None)` from an id, `arXiv:` form or abs/pdf URL.

    Old-style subject-class suffixes are dropped from the id (`math.AG/0101001` →
    `math/0101001`), as arXiv itself does for canonical ids. None when no id is found.
    """
    if not text:
        return None
    s = text.strip()
    s = re.sub(r"^(?:arxiv:)", "", s, flags=re.IGNORECASE)
    m = _OLD.search(s)
    if m and (m.start() == 0 or "/abs/" in s or "/pdf/" in s or ":" in s[: m.start()]):
        archive = m.group(1).split(".")[0]
        return f"{archive}/{m.group(2)}", m.group(3)
    m = _NEW.search(s)
    if m:
        return m.group(1), m.group(2)
    return None


def arxiv_id(text: str | None) -> str | None:
    """The arXiv id without version, or None."""
    parts = split_arxiv_id(text)
    return parts[0] if parts else None


_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


def normalize_doi(text: str | None) -> str | None:
    """Lower-case DOI without resolver prefix (`https://doi.org/`, `doi:`), or None.

    DOIs are case-insensitive by the DOI handbook, so lower case is the canonical key.
    """
    if not text:
        return None
    s = _DOI_PREFIX.sub("", text.strip()).strip()
    if not s.startswith("10.") or "/" not in s:
        return None
    return s.lower()
