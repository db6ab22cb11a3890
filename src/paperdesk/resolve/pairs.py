"""Pair scoring: how likely two records without a shared identifier are one paper.

A score in [0, 1] is the weighted mean of the evidence both records carry (a missing field
is no evidence either way, so a record without a title or without authors can still
match on what it has):

- title: rapidfuzz `ratio` of the folded titles (edit-distance based, so typos, accents and
  punctuation variants score high while two titles sharing a topic's words do not); a
  title cut to its main part ('Flash3D' for 'Flash3D: Feed-Forward …') counts as 0.9
  when the authors agree;
- abstract: containment of word-bigram sets (|A∩B| / min(|A|,|B|)): robust to a truncated
  abstract, and bigrams rather than words keep two abstracts on one narrow topic apart;
- authors: the share of one list's folded family names found among the other's name words
  (robust to initials, name order and split family names);
- year: a penalty per year beyond the usual preprint-to-publication gap.

Two records with identical titles but no other shared evidence stay apart when the
title is short or generic (`Editorial`, `Introduction`): a lone title match must be long.
`MATCH_THRESHOLD` was chosen by cross-validation on labelled DBLP–ACM pairs
(`bench/resolve_works.py` prints the per-fold choices).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz import fuzz

from paperdesk.resolve.blocking import abstract_keys, candidate_pairs, title_keys
from paperdesk.resolve.works import Doc

MATCH_THRESHOLD = 0.50
"""Pairs scoring at least this are merged: the median of the per-fold choices of 5-fold
cross-validation on DBLP–ACM (max F1, ties to the higher threshold); see bench/resolve_works.py."""

W_TITLE, W_ABSTRACT, W_AUTHORS = 1.0, 1.0, 0.6
SHORT_TITLE = 0.9
"""Title similarity given to a main-title-only form of a title (with agreeing authors)."""
TITLE_VETO = 0.8
"""Below this title similarity a pair never matches, whatever else agrees (DBLP–ACM's
reformatted titles of one paper stay above it; sibling papers of one group with near-equal
abstracts in the feed mostly fall below)."""
ABSTRACT_BASE = 0.0
"""With two abstracts, the score is at most this plus their bigram containment: DBLP–ACM
has no abstracts to calibrate it, so it is set so that the abstracts alone must clear the
threshold (feed hard negatives by the same authors reach 0.3–0.5; reworded copies of one
paper in the OpenReview sample keep 0.6 and more)."""
YEAR_SLACK = 2
"""Years a preprint may precede its publication without penalty."""
MIN_SHINGLES = 15
"""Abstracts with fewer bigrams than this are too short to be evidence."""
LONE_TITLE_WORDS = 6
"""A title with no other evidence needs at least this many content words to decide alone."""


def shared(a: np.ndarray, b: np.ndarray) -> int:
    """|a ∩ b| of two sorted unique arrays (binary search: several times faster than
    `np.intersect1d`, which sorts both again)."""
    if len(a) > len(b):
        a, b = b, a
    if not len(a):
        return 0
    idx = np.searchsorted(b, a)
    np.minimum(idx, len(b) - 1, out=idx)
    return int(np.count_nonzero(b[idx] == a))


def conflict(a: Doc, b: Doc) -> bool:
    """True when the two records carry different values of one identifier type."""
    if not a.ids or not b.ids:
        return False
    da = dict(a.ids)
    return any(k in da and da[k] != v for k, v in b.ids)


def features(
    a: Doc, b: Doc, title_ratio: float | None = None, abstract: float | None = None
) -> dict[str, float]:
    """The raw evidence of one pair (only the fields both records have); `title_ratio`
    and `abstract` (containment): when the caller has them already."""
    f: dict[str, float] = {}
    if a.title and b.title:
        ratio = fuzz.ratio(a.title, b.title) if title_ratio is None else title_ratio
        f["title"] = ratio / 100.0
        if f["title"] < SHORT_TITLE and _head_match(a, b):
            f["short_title"] = 1.0
    na, nb = len(a.abstract_shingles), len(b.abstract_shingles)
    if na >= MIN_SHINGLES and nb >= MIN_SHINGLES:
        f["abstract"] = (
            shared(a.abstract_shingles, b.abstract_shingles) / min(na, nb)
            if abstract is None
            else abstract
        )
    if a.surnames and b.surnames:
        f["authors"] = max(
            len(a.surnames & b.name_tokens) / len(a.surnames),
            len(b.surnames & a.name_tokens) / len(b.surnames),
        )
    if a.year and b.year:
        f["year_gap"] = float(abs(a.year - b.year))
    if "short_title" in f and f.get("authors", 0.0) >= 0.5:
        # 'Flash3D' for 'Flash3D: Feed-Forward …' by the same authors: the short form
        # names the paper (without agreeing authors it is too weak to say so).
        f["title"] = SHORT_TITLE
    return f


def _head_match(a: Doc, b: Doc) -> bool:
    """One record's whole title is the other's main title (the part before its subtitle).
    Two equal main titles with different subtitles are not evidence: that is how sequels
    and follow-ups are named ('Task-Adapter: …' and 'Task-Adapter++: …')."""
    return bool(
        (a.title_head and a.title_head == b.title) or (b.title_head and b.title_head == a.title)
    )


def score(a: Doc, b: Doc, floor: float = 0.0) -> float:
    """Match score in [0, 1]; 0 for records whose identifiers conflict.

    With `floor` > 0 a pair that cannot reach it returns 0 early (the resolve loops only
    keep pairs at or above the threshold): the cheap title veto is checked before the
    abstract sets are intersected. Pairs that can reach `floor` get their exact score."""
    if conflict(a, b):
        return 0.0
    ratio = contained = None
    if floor > 0.0:
        if a.title and b.title and floor > TITLE_VETO / 4:
            ratio = fuzz.ratio(a.title, b.title)
            if ratio < 100 * TITLE_VETO and not _head_match(a, b):
                return 0.0  # the veto below caps it at ratio / 4 < TITLE_VETO / 4
        na, nb = len(a.abstract_shingles), len(b.abstract_shingles)
        if na >= MIN_SHINGLES and nb >= MIN_SHINGLES:
            contained = shared(a.abstract_shingles, b.abstract_shingles) / min(na, nb)
            if ABSTRACT_BASE + contained < floor:
                return 0.0  # capped at ABSTRACT_BASE + containment below
    f = features(a, b, ratio, contained)
    num = den = 0.0
    for name, w in (("title", W_TITLE), ("abstract", W_ABSTRACT), ("authors", W_AUTHORS)):
        if name in f:
            num += w * f[name]
            den += w
    if den == 0:
        return 0.0
    s = num / den
    if "abstract" in f:
        # Two papers on one topic by one group share title patterns and authors: the
        # abstract must agree too when both records have one (a reworded abstract of the
        # same paper keeps most of its word pairs; a sibling paper keeps under half).
        s = min(s, ABSTRACT_BASE + f["abstract"])
    if f.get("title", 1.0) < TITLE_VETO:
        # Different titles are different papers even when the abstracts agree: arXiv holds
        # pairs of distinct papers uploaded with one abstract by mistake.
        s = min(s, f["title"] / 4)
    elif (
        "title" in f
        and a.title_marks != b.title_marks
        and (a.title_marks and b.title_marks or "++" in a.title_marks | b.title_marks)
    ):
        # 'NTIRE 2025 Challenge …' / 'NTIRE 2026 Challenge …', 'EuroLLM-9B' / 'EuroLLM-22B'.
        s = min(s, 0.25)
    elif "title" in f and "authors" not in f and "abstract" not in f:
        if min(len(a.title_tokens), len(b.title_tokens)) < LONE_TITLE_WORDS:
            s = min(s, 0.5)
    gap = f.get("year_gap", 0.0)
    # Within the slack a small tie-break only: when a title recurs (a yearly column, a
    # conference and a journal version), the same-year twin must win the best-first merge.
    s -= 0.02 * min(gap, YEAR_SLACK) + 0.1 * max(0.0, gap - YEAR_SLACK)
    return max(0.0, min(1.0, s))


def candidate_scores(docs: Sequence[Doc]) -> list[tuple[float, int, int]]:
    """(score, i, j) for every LSH candidate pair of `docs` (i < j)."""
    keys = [
        title_keys(docs),
        abstract_keys(docs),
    ]
    out = []
    for i, j in candidate_pairs(keys):
        out.append((score(docs[i], docs[j]), i, j))
    return out
