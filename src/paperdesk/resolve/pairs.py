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

import re
from collections.abc import Iterable, Sequence

import numpy as np
from rapidfuzz import fuzz

from paperdesk.resolve.blocking import abstract_keys, candidate_pairs, title_keys
from paperdesk.resolve.works import STOPWORDS, Doc
from paperdesk.resolve.works_text import REVIEW_NOTE, is_generic, venue_agreement

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
SAME_TITLE = 0.95
"""Title similarity above which, with agreeing authors, the abstract need not agree."""
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
        if f["authors"] < 1.0 and (f.get("title", 0.0) >= TITLE_VETO or _prefix_match(a, b)):
            # Only where the title leaves the authors to decide: it costs.
            f["authors"] = max(f["authors"], _fuzzy_authors(a, b))
    if a.year and b.year:
        f["year_gap"] = float(abs(a.year - b.year))
    if "short_title" in f and f.get("authors", 0.0) >= 0.5:
        # 'Flash3D' for 'Flash3D: Feed-Forward …' by the same authors: the short form
        # names the paper (without agreeing authors it is too weak to say so).
        f["title"] = SHORT_TITLE
    return f


_DIGITS = re.compile(r"\d+")


def _marks(d: Doc) -> frozenset[str]:
    """The title's marks with the numbers of its bracketed notes: '(KRDB'98)' dropped from
    one library's title still says '98'."""
    return d.title_marks | frozenset(_DIGITS.findall(d.note)) if d.note else d.title_marks


def _head_match(a: Doc, b: Doc) -> bool:
    """One record's whole title is the other's main title (the part before its subtitle),
    or the words it opens with (`_prefix_match`). Two equal main titles with different
    subtitles are not evidence: that is how sequels and follow-ups are named
    ('Task-Adapter: …' and 'Task-Adapter++: …')."""
    return bool(
        (a.title_head and a.title_head == b.title)
        or (b.title_head and b.title_head == a.title)
        or _prefix_match(a, b)
    )


PREFIX_WORDS = 4
"""A title must have at least this many words to name a paper by being the opening of the
other's title."""


def _prefix_match(a: Doc, b: Doc) -> bool:
    """One whole title of PREFIX_WORDS or more words opens the other: a library that
    drops a subtitle given without a colon ('Unix RDBMS: the next generation' for 'Unix
    RDBMS: the next generation what are the Unix relational-database vendors doing …')."""
    short, long = (a.title, b.title) if len(a.title) <= len(b.title) else (b.title, a.title)
    return (
        bool(short)
        and len(long) > len(short)
        and long.startswith(short)
        and long[len(short)] == " "
        and short.count(" ") + 1 >= PREFIX_WORDS
    )


FUZZY_NAME = 85
"""rapidfuzz ratio at which a family name counts as another's misspelling
('Rosneblatt' / 'Rosenblatt')."""


def _fuzzy_authors(a: Doc, b: Doc) -> float:
    """`features`' author share, a family name of 5+ letters also counting as found when a
    name word of the other list of the same initial is within FUZZY_NAME of it (one
    library's typo, a transliteration)."""
    best = 0.0
    for x, y in ((a, b), (b, a)):
        if len(x.surnames) > FUZZY_MAX_NAMES:
            continue
        found = 0
        for s in x.surnames:
            if s in y.name_tokens or (
                len(s) >= 5
                and any(
                    t[0] == s[0] and abs(len(t) - len(s)) <= 2 and fuzz.ratio(s, t) >= FUZZY_NAME
                    for t in y.name_tokens
                )
            ):
                found += 1
        best = max(best, found / len(x.surnames))
    return best


FUZZY_MAX_NAMES = 12
"""Author lists longer than this are compared exactly only (bounded cost: a long list's
share barely moves for one misspelt name)."""


REWORDED_RATIO = 0.5
"""Title similarity from which a reworded title by the same authors may still name the
same paper (`_reworded`); below TITLE_VETO it never does otherwise."""
REWORDED_STEMS = 0.7
"""Jaccard of the two titles' word stems for `_reworded`."""
REWORDED_TITLE = 0.85
"""The title evidence a reworded title counts as."""
_SUFFIX = re.compile(r"(?:ations?|ings?|ions?|ed|es|is|s|e|al|ly)$")


def _stems(title: str) -> set[str]:
    """Content words cut to a crude stem ('diagnosing', 'diagnosis' -> 'diagnos')."""
    out = set()
    for w in title.split():
        if w in STOPWORDS:
            continue
        st = _SUFFIX.sub("", w) if len(w) > 4 else w
        out.add(st or w)
    return out


def _maybe_reworded(a: Doc, b: Doc) -> bool:
    """The cheap necessary conditions of `_reworded` (set operations only): same year,
    every family name of one list among the other's name words."""
    return bool(
        a.year
        and a.year == b.year
        and a.surnames
        and b.surnames
        and (a.surnames <= b.name_tokens or b.surnames <= a.name_tokens)
    )


def _reworded(a: Doc, b: Doc, f: dict[str, float]) -> bool:
    """Two titles with the same word stems in another order or inflection ('A framework for
    change diagnosis of data streams' / 'A framework for diagnosing changes in evolving
    data streams') by the same authors (every name of one list in the other), in the same
    year, at venues that do not disagree, neither title generic: one paper listed in its
    library's words. Sibling papers of one group in one year share words but not all."""
    if not (REWORDED_RATIO <= f.get("title", 0.0) < TITLE_VETO):
        return False
    if not _maybe_reworded(a, b) or a.generic or b.generic or a.note != b.note:
        return False
    if venue_agreement(a.venue, a.venue_kind, b.venue, b.venue_kind) < 0:
        return False
    sa, sb = _stems(a.title), _stems(b.title)
    if min(len(sa), len(sb)) < PREFIX_WORDS:
        return False
    return len(sa & sb) / len(sa | sb) >= REWORDED_STEMS


def score(a: Doc, b: Doc, floor: float = 0.0, shared_title: bool = False) -> float:
    """Match score in [0, 1]; 0 for records whose identifiers conflict or whose titles
    name different kinds of item (an erratum and its paper, part I and part II).

    `shared_title`: other distinct items carry this title (the caller counted them), so
    it is treated as generic: authors, year, venue and pages must agree.

    With `floor` > 0 a pair that cannot reach it returns 0 early (the resolve loops only
    keep pairs at or above the threshold): the cheap title veto is checked before the
    abstract sets are intersected. Pairs that can reach `floor` get their exact score."""
    if a.kinds != b.kinds or conflict(a, b):
        return 0.0
    if (not a.title or not b.title) and a.lead and a.lead == b.lead:
        return _lead_score(a, b)
    ratio = contained = None
    if floor > 0.0:
        if a.title and b.title and floor > TITLE_VETO / 4:
            ratio = fuzz.ratio(a.title, b.title)
            if (
                ratio < 100 * TITLE_VETO
                and not _head_match(a, b)
                and (ratio < 100 * REWORDED_RATIO or not _maybe_reworded(a, b))
            ):
                return 0.0  # the veto below caps it at ratio / 4 < TITLE_VETO / 4
        na, nb = len(a.abstract_shingles), len(b.abstract_shingles)
        if na >= MIN_SHINGLES and nb >= MIN_SHINGLES:
            contained = shared(a.abstract_shingles, b.abstract_shingles) / min(na, nb)
            if ABSTRACT_BASE + contained < floor and (ratio is None or ratio < 100 * SAME_TITLE):
                return 0.0  # capped at ABSTRACT_BASE + containment below
    f = features(a, b, ratio, contained)
    if _reworded(a, b, f):
        f["title"] = REWORDED_TITLE
    num = den = 0.0
    for name, w in (("title", W_TITLE), ("abstract", W_ABSTRACT), ("authors", W_AUTHORS)):
        if name in f:
            num += w * f[name]
            den += w
    if den == 0:
        return 0.0
    s = num / den
    if "abstract" in f and not (
        f.get("title", 0.0) >= SAME_TITLE
        and f.get("authors", 0.0) >= 0.5
        and f.get("year_gap", 0.0) <= YEAR_SLACK
    ):
        # Two papers on one topic by one group share title patterns and authors: the
        # abstract must agree too when both records have one (a reworded abstract of the
        # same paper keeps most of its word pairs; a sibling paper keeps under half) —
        # unless the title is the same and so are the authors: a camera-ready version
        # often has its abstract rewritten.
        s = min(s, ABSTRACT_BASE + f["abstract"])
    if f.get("title", 1.0) < TITLE_VETO:
        # Different titles are different papers even when the abstracts agree: arXiv holds
        # pairs of distinct papers uploaded with one abstract by mistake.
        s = min(s, f["title"] / 4)
    elif "title" in f and _numbers_differ(a, b, f):
        # 'NTIRE 2025 Challenge …' / 'NTIRE 2026 Challenge …', 'EuroLLM-9B' / 'EuroLLM-22B'.
        s = min(s, 0.25)
    elif "title" in f and "authors" not in f and "abstract" not in f:
        if min(len(a.title_tokens), len(b.title_tokens)) < LONE_TITLE_WORDS:
            s = min(s, 0.5)
    if "title" in f and f["title"] >= TITLE_VETO:
        s = min(s, _title_cap(a, b, f, shared_title))
    if a.note != b.note and "title" in f:
        s -= NOTE_TIE  # ('DEVise (demo abstract): …' meets its demo twin before the paper)
    gap = f.get("year_gap", 0.0)
    # Within the slack a small tie-break only: when a title recurs (a yearly column, a
    # conference and a journal version), the same-year twin must win the best-first merge.
    s -= 0.02 * min(gap, YEAR_SLACK) + 0.1 * max(0.0, gap - YEAR_SLACK)
    return max(0.0, min(1.0, s))


def _dropped_digit(ma: frozenset[str], mb: frozenset[str], f: dict[str, float]) -> bool:
    """The titles' numbers differ by one library's typo: each number of one title inside
    the other's, both titles otherwise near-equal, by the same authors in the same year
    ('… into the 1st century' for '… into the 21st century'). 'BioASQ 2024' / '2025',
    '9B' / '22B' stay apart."""
    if f.get("title", 0.0) < DROPPED_DIGIT_TITLE or f.get("authors", 0.0) < 1.0:
        return False
    if f.get("year_gap", 1.0) != 0.0 or "++" in ma ^ mb:
        return False
    only_a, only_b = ma - mb, mb - ma
    if len(only_a) != 1 or len(only_b) != 1:
        return False
    x, y = next(iter(only_a)), next(iter(only_b))
    return x != y and (x in y or y in x)


_NUMBER_WORDS = {
    w: str(n)
    for n, ws in enumerate(
        [
            "", "one first", "two second", "three third", "four fourth", "five fifth",
            "six sixth", "seven seventh", "eight eighth", "nine ninth", "ten tenth",
            "eleven eleventh", "twelve twelfth",
        ]
    )
    for w in ws.split()
}


def _numbers_differ(a: Doc, b: Doc, f: dict[str, float]) -> bool:
    """Both titles carry numbers (or one a '++') and they differ — unless a number word
    accounts for the difference ('the 4th workshop' is 'the fourth workshop') or one
    library dropped a digit (`_dropped_digit`) — or their number words name different
    numbers ('the 4th workshop', 'the fifth workshop')."""
    ma, mb = _marks(a), _marks(b)
    na = ma | {_NUMBER_WORDS[w] for w in a.title.split() if w in _NUMBER_WORDS}
    nb = mb | {_NUMBER_WORDS[w] for w in b.title.split() if w in _NUMBER_WORDS}
    if ma != mb and (ma and mb or "++" in ma | mb):
        return na != nb and not _dropped_digit(ma, mb, f)
    return bool(na - nb and nb - na)


DROPPED_DIGIT_TITLE = 0.98
"""Title similarity for `_dropped_digit`."""
NOTE_TIE = 0.02
"""Taken off when the titles' bracketed notes differ: a tie-break, like the year's."""
GENERIC_CAP = 0.2
"""A generic or shared title whose records disagree on authors, year, venue or pages
scores at most this: far below the threshold, whatever the title similarity."""
LEAD_SCORE = 0.9
"""Score of a title-less record whose opening sentences are word for word another
record's, when the whole abstracts agree in vocabulary (`LEAD_VOCABULARY`) and the
authors do not disagree."""
LEAD_VOCABULARY = 0.25
"""Estimated Jaccard of the abstracts' content words needed beside an equal opening
(reworded copies of one abstract keep most words; two papers sharing a boilerplate
opening sentence pair diverge after it)."""


def _title_cap(a: Doc, b: Doc, f: dict[str, float], shared_title: bool) -> float:
    """The most a pair with similar titles may score given what else they say.

    A generic title (front matter, a column, or one that other distinct items carry), or
    a book review against a record under the book's title, names nothing: the authors
    must agree, the years be equal (front matter and columns recur every issue) or at
    most one apart (other shared titles), the venues and first pages not disagree. Any title: a journal and a conference venue a year or more
    apart are two publications (a conference paper and its journal version)."""
    venue = venue_agreement(a.venue, a.venue_kind, b.venue, b.venue_kind)
    gap = f.get("year_gap", 0.0)
    review = (REVIEW_NOTE in a.note) != (REVIEW_NOTE in b.note)
    if a.generic or b.generic or shared_title or review:
        if f.get("authors", 0.0) < 0.5 and f.get("abstract", 0.0) < 0.5:
            return GENERIC_CAP
        if venue < 0 or (a.pages and b.pages and a.pages != b.pages):
            return GENERIC_CAP
        if gap > (0 if a.generic or b.generic else 1):
            return GENERIC_CAP  # a column recurs every issue: another year's is another
    elif venue < 0 and gap >= 1:
        return GENERIC_CAP
    return 1.0


def _lead_score(a: Doc, b: Doc) -> float:
    """One record has no title and its abstract opens with the other's two opening
    sentences, word for word."""
    if a.surnames and b.surnames:
        overlap = max(
            len(a.surnames & b.name_tokens) / len(a.surnames),
            len(b.surnames & a.name_tokens) / len(b.surnames),
        )
        if overlap == 0.0:
            return 0.0
    if len(a.sketch) and len(b.sketch) and sketch_jaccard(a.sketch, b.sketch) < LEAD_VOCABULARY:
        return 0.0
    return LEAD_SCORE


def sketch_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard of two sets estimated from their bottom-k sketches (sorted hashes)."""
    k = min(len(a), len(b))
    if not k:
        return 0.0
    union = np.union1d(a, b)[:k]
    both = np.intersect1d(a, b, assume_unique=True)
    return float(np.count_nonzero(np.isin(union, both, assume_unique=True))) / k


def shared_titles(docs: Sequence[Doc]) -> set[str]:
    """Titles that at least two records of one source carry: one library listing two
    items under one title says the title does not name one paper ('Editor's notes', a
    conference paper and its journal version)."""
    seen: dict[tuple[str, str], int] = {}
    out = set()
    for d in docs:
        if d.title:
            k = (d.source, d.title)
            n = seen.get(k, 0) + 1
            seen[k] = n
            if n >= 2:
                out.add(d.title)
    return out


def related_kind(a: Doc, b: Doc) -> tuple[str, bool] | None:
    """(kind, a refers to b) when one record is an erratum, reply, comment, extended
    abstract or another part of the other: titles equal but for their kind words. None
    otherwise (also for generic titles, which name no one paper)."""
    if a.kinds == b.kinds or not a.title or not b.title:
        return None
    ca, cb = a.core or a.title, b.core or b.title
    if len(ca.split()) < 3 or len(cb.split()) < 3 or is_generic(ca) or is_generic(cb):
        return None
    if fuzz.ratio(ca, cb) < 100 * RELATED_TITLE:
        return None
    only_a, only_b = a.kinds - b.kinds, b.kinds - a.kinds
    if any(k.startswith("part:") for k in only_a | only_b) and not (
        only_a - _PARTS(only_a) or only_b - _PARTS(only_b)
    ):
        return ("part", True)
    if only_a - _PARTS(only_a):
        return (sorted(only_a - _PARTS(only_a))[0], True)
    return (sorted(only_b - _PARTS(only_b))[0], False)


def _PARTS(kinds: frozenset[str]) -> frozenset[str]:  # noqa: N802 (reads as a set name)
    return frozenset(k for k in kinds if k.startswith("part:"))


RELATED_TITLE = 0.9
"""Title similarity (kind words removed) for an erratum or reply to name its paper."""


def candidate_scores(docs: Sequence[Doc]) -> list[tuple[float, int, int]]:
    """(score, i, j) for every LSH candidate pair of `docs` (i < j)."""
    keys = [
        title_keys(docs),
        abstract_keys(docs),
    ]
    common = shared_titles(docs)
    out = []
    for i, j in candidate_pairs(keys):
        a, b = docs[i], docs[j]
        out.append((score(a, b, shared_title=a.title in common or b.title in common), i, j))
    return undecided(docs, out, common)


TIE = 0.01
"""Scores this close are a tie."""


def undecided(
    docs: Sequence[Doc], scored: list[tuple[float, int, int]], common: set[str]
) -> list[tuple[float, int, int]]:
    """`scored` with the matches of a generic title that nothing decides capped below the
    threshold: when a record with such a title matches two records of one other source
    equally well (three 'Book review column's by one editor in one year), any pairing
    would be a guess, and a wrong merge costs more than a missed one."""
    best: dict[tuple[int, str], list[tuple[float, int]]] = {}
    for s, i, j in scored:
        if s < MATCH_THRESHOLD:
            continue
        for x, y in ((i, j), (j, i)):
            d = docs[x]
            if d.generic or (d.title and d.title in common):
                best.setdefault((x, docs[y].source), []).append((s, y))
    drop: set[tuple[int, int]] = set()
    for (x, _src), cands in best.items():
        if len(cands) < 2:
            continue
        cands.sort(reverse=True)
        if cands[0][0] - cands[1][0] < TIE:
            top = cands[0][0]
            drop.update((min(x, y), max(x, y)) for s, y in cands if top - s < TIE)
    if not drop:
        return scored
    return [
        (min(s, GENERIC_CAP) if (min(i, j), max(i, j)) in drop else s, i, j) for s, i, j in scored
    ]


def related_pairs(docs: Sequence[Doc], pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(referring, referred, kind) among candidate pairs whose records are of different
    kinds (`related_kind`)."""
    out = []
    for i, j in pairs:
        a, b = docs[i], docs[j]
        if a.kinds or b.kinds:
            rel = related_kind(a, b)
            if rel is not None:
                out.append((i, j, rel[0]) if rel[1] else (j, i, rel[0]))
    return out
