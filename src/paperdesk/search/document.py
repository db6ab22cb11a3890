"""What search indexes: one `SearchDoc` per work, built from the work's source records.

A work groups the records of one paper; until works are resolved a record is its own work
(work id = record key). Everything search stores is keyed by work id, so results are works,
never duplicate records.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from paperdesk.model import SourceRecord
from paperdesk.normalize.text import plain_text

# LaTeX formatting commands whose argument is the word: `$\mathcal{NC}$` → `NC`.
_FORMAT_CMD = re.compile(
    r"\\(?:mathcal|mathbf|mathrm|mathit|mathsf|mathtt|mathbb|mathfrak|boldsymbol|bm|"
    r"textbf|textit|textrm|texttt|textsf|text|emph|operatorname|mbox|hat|tilde|bar|vec)\b"
)
_CMD = re.compile(r"\\([A-Za-z]+)")
_MATH_JUNK = re.compile(r"[$^_{}~\\]")
_WS = re.compile(r"\s+")


def index_text(text: str | None) -> str:
    """Text for the keyword index: LaTeX reduced to words so `$\\mathcal{NC}$` is `NC`,
    `$\\alpha$-stable` is `alpha stable`; whitespace collapsed."""
    if not text:
        return ""
    if "\\" not in text and "$" not in text and "{" not in text:
        return " ".join(text.split())  # most abstracts: no LaTeX, skip the regexes
    t = _FORMAT_CMD.sub(" ", text)
    t = _CMD.sub(r" \1 ", t)
    t = _MATH_JUNK.sub(" ", t)
    return _WS.sub(" ", t).strip()


@dataclass
class SearchDoc:
    work_id: str
    keys: list[str]
    title: str = ""
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    date: str | None = None
    """Earliest known date (submission, feed day, publication) — what `--sort date` uses."""
    subjects: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def content_hash(self) -> str:
        """Changes whenever anything indexed changes: unchanged works are skipped."""
        h = hashlib.blake2b(digest_size=16)
        for part in (
            self.title, self.abstract, "\x1f".join(self.authors), str(self.year), self.date or "",
            "\x1f".join(self.subjects), "\x1f".join(self.sources), "\x1f".join(self.keys),
        ):
            h.update(part.encode())
            h.update(b"\x1e")
        return h.hexdigest()

    @property
    def date_int(self) -> int:
        """yyyymmdd as an int (0 when unknown) for sorting by recency."""
        d = (self.date or "")[:10].replace("-", "")
        return int(d) if len(d) == 8 and d.isdigit() else (self.year or 0) * 10000


def _date(r: SourceRecord) -> str | None:
    dates = [d for d in (r.submitted, r.feed_date, r.published, r.updated) if d]
    return min(dates)[:10] if dates else None


def doc_from_records(work_id: str, records: Sequence[SourceRecord]) -> SearchDoc:
    """Merge a work's records: longest title/abstract, fullest author list, earliest date,
    union of subjects and sources (records in any order; ties keep the first)."""
    recs = list(records)
    title = max((r.title_text or plain_text(r.title) or "" for r in recs), key=len, default="")
    abstract = max(
        (r.abstract_text or plain_text(r.abstract) or "" for r in recs), key=len, default=""
    )
    best = max(recs, key=lambda r: len(r.authors)) if recs else None
    authors = [a.display or a.name for a in best.authors] if best else []
    dates = [d for d in (_date(r) for r in recs) if d]
    years = [r.year for r in recs if r.year]
    subjects: list[str] = []
    for r in recs:
        for c in r.categories:
            c = c.strip()
            if c and c.lower() not in {s.lower() for s in subjects}:
                subjects.append(c)
    sources = sorted({r.source for r in recs})
    return SearchDoc(
        work_id=work_id,
        keys=sorted(r.key for r in recs),
        title=title.strip(),
        abstract=abstract.strip(),
        authors=authors,
        year=min(years) if years else (int(min(dates)[:4]) if dates else None),
        date=min(dates) if dates else None,
        subjects=subjects,
        sources=sources,
    )
