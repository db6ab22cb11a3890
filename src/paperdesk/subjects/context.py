"""Evidence about a paper's subject beyond its text: what its authors' earlier papers were
filed under, and its venue's papers.

A paper's text alone gives the primary subject of 3 in 4 papers; an author who filed
twelve papers under cs.CV and one under cs.LG is telling which of the two a borderline
abstract belongs to. The evidence is a per-subject log-lift over the prior,

    e_c = log((n_c + beta * p_c) / (n + beta)) - log p_c,

from the counts `n_c` of the subjects of the records sharing a context key of one kind (an
author's folded name, `a:…`; a venue, `v:…`) seen before the paper, shrunk towards the
prior `p` with `beta` pseudo-counts: no history gives e = 0, a long one dominates only as
far as the calibration month says it should (`SubjectModel.context_weights`, one per kind,
fitted jointly with the softmax temperature).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np
from numpy.typing import NDArray

BETA = 2.0
"""Pseudo-counts of the prior in each paper's evidence."""
RECENT_KEY = "r:"
"""The context key of the recent mix: the primaries given in the RECENT_DAYS before."""
RECENT_DAYS = 14
"""Days of given primaries in the recent mix (of 7, 14, 28 and 56 on the rolling months,
14 had the best top-1 with every month's calibration error under 0.05)."""
RECENT_BETA = 200.0
"""Pseudo-counts of the prior in the recent mix: a fortnight holds thousands of papers,
a rare subject a handful."""
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


KeyCounts = Mapping[str, Mapping[str, float]]
"""One paper's context: each of its keys that has a history → subject → weight."""


KINDS = ("authors", "recent", "venue")
"""The kinds of context evidence, each weighed on its own (`SubjectModel.context_weights`):
an author's history and a venue's say different amounts (a venue's papers spread over
more subjects than one person's), and the recent mix says how the subjects' shares have
moved since training (a cs.LG-heavy fortnight differs from a cs.CV-heavy one)."""
_KIND_OF_PREFIX = {"a:": "authors", "v:": "venue", RECENT_KEY[:2]: "recent"}

class History:
    """Subject weights per context key, added to in time order (a primary counts 1, a
    cross-listed subject SECONDARY_WEIGHT), and the given primaries per day."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, float]] = {}
        self.days: dict[str, Counter[str]] = {}

    def add(self, keys: Iterable[str], subjects: Sequence[str], day: str = "") -> None:
        """A paper with these context keys was filed under `subjects` (primary first) on
        `day` (YYYY-MM-DD)."""
        if not subjects:
            return
        weighted = [(s, 1.0 if n == 0 else SECONDARY_WEIGHT) for n, s in enumerate(subjects)]
        for k in keys:
            row = self.counts.setdefault(k, {})
            for s, w in weighted:
                row[s] = row.get(s, 0.0) + w
        if day:
            self.days.setdefault(day[:10], Counter())[subjects[0]] += 1

    def recent(self, day: str) -> dict[str, float]:
        """The primaries given in the RECENT_DAYS before `day`."""
        end = date.fromisoformat(day[:10])
        out: Counter[str] = Counter()
        for n in range(1, RECENT_DAYS + 1):
            out.update(self.days.get((end - timedelta(days=n)).isoformat(), {}))
        return {s: float(c) for s, c in out.items()}

    def of(self, keys: Iterable[str], day: str = "") -> dict[str, dict[str, float]]:
        """The histories of those of `keys` that have one (a paper's `KeyCounts`), and with
        `day` the recent mix before it."""
        out = {k: row for k in keys if (row := self.counts.get(k))}
        if day and (mix := self.recent(day)):
            out[RECENT_KEY] = mix
        return out


def evidence(
    papers: Sequence[KeyCounts],
    classes: Sequence[str],
    prior: NDArray[np.float64],
    kinds: Sequence[str] = KINDS,
) -> dict[str, NDArray[np.float64]]:
    """Per kind, the (papers, classes) log-lift over `prior` of each paper's summed key
    histories of that kind (rows of zeros for papers without any)."""
    index = {c: i for i, c in enumerate(classes)}
    out = {k: np.zeros((len(papers), len(classes))) for k in kinds}
    logp = np.log(prior)
    for n, keys in enumerate(papers):
        sums: dict[str, NDArray[np.float64]] = {}
        for key, row in keys.items():
            kind = _KIND_OF_PREFIX.get(key[:2])
            if kind not in out:
                continue
            c = sums.get(kind)
            if c is None:
                c = sums[kind] = np.zeros(len(classes))
            for s, w in row.items():
                i = index.get(s)
                if i is not None:
                    c[i] += w
        for kind, c in sums.items():
            total = c.sum()
            if total > 0:
                beta = RECENT_BETA if kind == "recent" else BETA
                out[kind][n] = np.log((c + beta * prior) / (total + beta)) - logp
    return out


def online_evidence(
    history: History,
    examples: Sequence[Any],
    classes: Sequence[str],
    prior: NDArray[np.float64],
    kinds: Sequence[str] = KINDS,
) -> dict[str, NDArray[np.float64]]:
    """`evidence` of `examples` (with `.date`, `.context`, `.subjects`) as a daily run
    sees them: each paper with the histories of every paper of an earlier day and the
    recent mix before its day, `history` holding those before the first; the examples
    are added to `history` on the way."""
    order = sorted(range(len(examples)), key=lambda i: examples[i].date)
    out = {k: np.zeros((len(examples), len(classes))) for k in kinds}
    at = 0
    while at < len(order):
        day = examples[order[at]].date
        end = at
        while end < len(order) and examples[order[end]].date == day:
            end += 1
        idx = order[at:end]
        ev = evidence([history.of(examples[i].context, day) for i in idx], classes, prior, kinds)
        for k in kinds:
            out[k][idx] = ev[k]
        for i in idx:  # after the day's evidence: its own papers must not show in it
            history.add(examples[i].context, examples[i].subjects, day)
        at = end
    return out
