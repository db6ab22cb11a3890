"""Evidence about a paper's subject beyond its text: what its authors' earlier papers were
filed under, and its venue's papers.

A paper's text alone gives the primary subject of 3 in 4 papers; an author who filed
twelve papers under cs.CV and one under cs.LG is telling which of the two a borderline
abstract belongs to. The evidence is a per-subject log-lift over the prior,

    e_c = log((n_c + beta * p_c) / (n + beta)) - log p_c,

from the counts `n_c` of the subjects of the records sharing a context key (an author's
folded name, `a:…`; a venue, `v:…`) seen before the paper, shrunk towards the prior `p`
with `beta` pseudo-counts: no history gives e = 0, a long one dominates only as far as the
calibration month says it should (`SubjectModel.context_weight`, fitted jointly with the
softmax temperature).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

BETA = 2.0
"""Pseudo-counts of the prior in each paper's evidence."""
SECONDARY_WEIGHT = 0.5
"""A cross-listed subject counts this much of a primary one in a key's history."""
MAX_AUTHORS = 12
"""Authors of a paper whose histories count (long collaboration lists add noise, and time)."""

_NON_WORD = re.compile(r"[^a-z0-9 ]+")


def name_key(name: str) -> str:
    """`a:` + folded, punctuation-free name ('a:yoshua bengio'); '' for an empty name."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    words = _NON_WORD.sub(" ", text).split()
    return "a:" + " ".join(words) if words else ""


def venue_key(venue: str | None) -> str:
    """`v:` + the venue's letters without its year ('v:colm' for 'colm2024')."""
    if not venue:
        return ""
    words = _NON_WORD.sub(" ", venue.lower()).split()
    words = [w.rstrip("0123456789") for w in words if not w.isdigit()]
    words = [w for w in words if w]
    return "v:" + " ".join(words) if words else ""


_VENUE_IN_COMMENT = re.compile(r"\b([A-Z][A-Za-z]{1,15})(-?\s?(?:19|20)\d{2}|[-'’]\d{2})\b")
"""'Accepted at CVPR 2025', 'NeurIPS'24', 'EMNLP2025': a venue name followed by a year."""
_NOT_VENUES = frozenset(
    "in at to of on the accepted published submitted version conference workshop symposium "
    "proceedings journal international annual spring summer fall autumn winter january "
    "february march april may june july august september october november december "
    "europe asia africa america recognition automation sensing vision copyright".split()
)


def comment_venues(comment: str | None) -> list[str]:
    """`v:` keys of the venues a comment names with a year ('v:cvpr')."""
    if not comment:
        return []
    out = []
    for name, _year in _VENUE_IN_COMMENT.findall(comment[:1000]):
        w = name.lower()
        if len(w) >= 2 and w not in _NOT_VENUES:
            out.append("v:" + w)
    return out


def context_keys(
    authors: Sequence[str], venue: str | None = None, comment: str | None = None
) -> list[str]:
    """A paper's context keys: its authors' names, its venue and the venues its comment
    names ('Accepted at CVPR 2025')."""
    keys = [k for k in (name_key(a) for a in authors[:MAX_AUTHORS]) if k]
    v = venue_key(venue)
    return list(dict.fromkeys([*keys, *([v] if v else []), *comment_venues(comment)]))


class History:
    """Subject counts per context key, added to in time order."""

    def __init__(self, classes: Sequence[str]):
        self.classes = list(classes)
        self.index = {c: i for i, c in enumerate(self.classes)}
        self.counts: dict[str, dict[int, float]] = {}

    def add(self, keys: Iterable[str], subjects: Sequence[str]) -> None:
        """A paper with these context keys was filed under `subjects` (primary first)."""
        idx = [(self.index[s], 1.0 if n == 0 else SECONDARY_WEIGHT)
               for n, s in enumerate(subjects) if s in self.index]
        if not idx:
            return
        for k in keys:
            row = self.counts.setdefault(k, {})
            for i, w in idx:
                row[i] = row.get(i, 0.0) + w

    def add_counts(self, rows: Iterable[tuple[str, str, float]]) -> None:
        """(key, subject, count) rows, as a store keeps them."""
        for k, s, n in rows:
            i = self.index.get(s)
            if i is not None:
                row = self.counts.setdefault(k, {})
                row[i] = row.get(i, 0.0) + n

    def evidence(
        self, papers: Sequence[Sequence[str]], prior: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """(papers, classes) log-lift of each paper's summed key histories over `prior`."""
        out = np.zeros((len(papers), len(self.classes)))
        logp = np.log(prior)
        for n, keys in enumerate(papers):
            c = np.zeros(len(self.classes))
            found = False
            for k in keys:
                row = self.counts.get(k)
                if row:
                    found = True
                    for i, v in row.items():
                        c[i] += v
            if found:
                out[n] = np.log((c + BETA * prior) / (c.sum() + BETA)) - logp
        return out


def evidence_from_counts(
    rows: Sequence[Mapping[str, float]], classes: Sequence[str], prior: NDArray[np.float64]
) -> NDArray[np.float64]:
    """`History.evidence` from each paper's summed subject weights (as the subjects stage
    reads them from the store: subject → weight)."""
    index = {c: i for i, c in enumerate(classes)}
    out = np.zeros((len(rows), len(classes)))
    logp = np.log(prior)
    for n, row in enumerate(rows):
        if not row:
            continue
        c = np.zeros(len(classes))
        for s, w in row.items():
            i = index.get(s)
            if i is not None:
                c[i] += w
        if c.sum() > 0:
            out[n] = np.log((c + BETA * prior) / (c.sum() + BETA)) - logp
    return out


def evidence_of(
    counts: Mapping[str, Mapping[str, float]],
    papers: Sequence[Sequence[str]],
    classes: Sequence[str],
    prior: NDArray[np.float64],
) -> NDArray[np.float64]:
    """`History.evidence` from plain per-key subject counts (as read from a store)."""
    h = History(classes)
    h.add_counts((k, s, n) for k, row in counts.items() for s, n in row.items())
    return h.evidence(papers, prior)
