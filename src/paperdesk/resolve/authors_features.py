"""Signatures (one author position on one record) and the pairwise features between them.

The features follow S2AND's recipe, cut down to what paperdesk's sources carry: name
agreement (given names, initials, nicknames, middle initials), co-author overlap (on the
co-authors' blocking keys, so "Y. Bengio" and "Yoshua Bengio" count as the same
co-author), topical similarity of the two papers (cosine of hashed, sublinear TF text
vectors: stateless, so an incremental run scores exactly like a full one), venue series,
year gap, affiliation token overlap, and ORCID/e-mail agreement when sources give them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from scipy import sparse

from paperdesk.model import Author, SourceRecord
from paperdesk.normalize.names import normalize_author
from paperdesk.resolve.authors_names import (
    GivenName,
    first_names_relation,
    fold,
    middle_conflict,
    parse_given,
)
from paperdesk.resolve.authors_rarity import NO_NAME, NameStats
from paperdesk.resolve.hashed_terms import sublinear_rows

FEATURES = (
    "name_equal",
    "name_nickname",
    "name_initial",
    "name_missing",
    "middle_conflict",
    "coauthors_shared",
    "coauthors_jaccard",
    "text_cosine",
    "venue_equal",
    "venue_missing",
    "year_gap",
    "year_missing",
    "affiliation_jaccard",
    "affiliation_missing",
    "affiliation_equal",
    "orcid_equal",
    "orcid_conflict",
    "email_equal",
    "first_name_length",
    "name_people",
    "block_people",
)

_AFF_STOP = frozenset(
    "of the and for in at de la le des du di der und university universitat universite "
    "universidad universita institute institut college school department dept laboratory "
    "lab labs center centre inc ltd co corp research".split()
)
_WORD = re.compile(r"[a-z0-9]+")
_VENUE = re.compile(r"[^a-z]+")

BLOCK_PEOPLE_CAP = 50
"""`block_people` above this says no more (a block of 50 given names is a common one)."""

TEXT_DIM = 2**18
"""Columns of the hashed text vectors."""


@dataclass
class Signature:
    """One author position on one record, reduced to what disambiguation compares."""

    sig_id: str
    """`RECORD_KEY#POSITION` — stable across runs, what curations refer to."""
    record_key: str
    position: int
    name: str
    block: str
    family: str
    given: GivenName
    given_raw: str | None
    """The given name as the record wrote it."""
    affiliations: frozenset[str]
    affiliation_text: str
    orcid: str | None
    email: str | None
    coauthors: frozenset[str]
    """Blocking keys of *all* authors of the record, this one included: one set shared by
    the record's signatures (a 3,000-author collaboration paper would otherwise cost
    3,000² set entries). Pair features discount the signature's own key."""
    venue: str
    year: int | None
    text: str
    people: float = NO_NAME
    """log10 of the people expected to carry this spelt-out name by chance
    (`authors_rarity.NameStats.log_people`; `NO_NAME` for an initial only)."""
    block_people: int = 0
    """Distinct spelt-out given names in this name's block (`NameStats.block_people`)."""
    key_codes: np.ndarray | None = field(default=None, compare=False)
    """A stored member read back from `author_samples`: its co-author keys as the sorted
    codes `samples_codec.key_code` gives them, and `coauthors` left empty (pair features
    on arrays match them against the day's keys as codes, `authors_vectors.sig_arrays`).
    None for a signature built from its record."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # A full run's streaming workers send their units' signatures back by the hundred
        # thousand: a tuple of fields unpickles several times faster than a __dict__.
        return (Signature, tuple(getattr(self, name) for name in _SIG_FIELDS))


_SIG_FIELDS = tuple(f.name for f in fields(Signature))


def set_people(sigs: Sequence[Signature], stats: NameStats | None = None) -> None:
    """Fill `people` and `block_people` (name rarity, `authors_rarity`) from `stats`, else
    from the names of `sigs` themselves (and the packaged prior).

    These are the only name statistics among the features. Signature counts (how often a
    name or block occurs per 100,000 signatures) were features until session 9, and were
    dropped: they grow with the store and with one person's output (22 records of Percy
    Liang outnumber most "Wei Zhang"s), so the model learned them on OpenReview's 19.5k
    signatures and met other values on every real store."""
    if stats is None:
        stats = NameStats(name_form(s) for s in sigs)
    for s in sigs:
        form = name_form(s)
        s.people = stats.log_people(form)
        s.block_people = stats.block_people(form)


def pair_people(a_people: float, b_people: float) -> float:
    """The pair's `name_people`: the larger estimate of its spelt-out names (one side
    with an initial only takes the other's; `NO_NAME` when neither is spelt out)."""
    if a_people == NO_NAME:
        return b_people
    if b_people == NO_NAME:
        return a_people
    return max(a_people, b_people)


def name_form(sig: Signature) -> str:
    """The folded full name used for frequencies: `yoshua bengio`, `y bengio`."""
    return " ".join((*sig.given.tokens, sig.family)).strip()


def venue_series(venue: str | None) -> str:
    """ "CoRL 2024", "corl2024" → `corl`: the series, without years or punctuation."""
    return _VENUE.sub("", fold(venue or ""))


def affiliation_tokens(affiliations: Sequence[str]) -> frozenset[str]:
    words: set[str] = set()
    for aff in affiliations:
        words.update(w for w in _WORD.findall(fold(aff)) if w not in _AFF_STOP and len(w) > 1)
    return frozenset(words)


def _key(author: Author) -> str:
    if author.key is None:
        normalize_author(author)
    return author.key or fold(author.name)


def signatures_from_record(
    record: SourceRecord, positions: Collection[int] | None = None
) -> list[Signature]:
    """Every author position of a record (or those in `positions`) as a `Signature`
    (authors without any name are skipped: there is nothing to attribute)."""
    keys = [_key(a) for a in record.authors]
    text = " ".join(
        t
        for t in (
            record.title_text or record.title,
            record.abstract_text or record.abstract,
            " ".join(record.keywords),
        )
        if t
    )
    venue = venue_series(record.venue or record.journal_ref)
    everyone = frozenset(k for k in keys if k)
    out: list[Signature] = []
    for pos, author in enumerate(record.authors):
        if not author.name.strip() or (positions is not None and pos not in positions):
            continue
        if author.family is None or author.key is None:
            normalize_author(author)
        affs = [a for a in author.affiliations if a]
        out.append(
            Signature(
                sig_id=f"{record.key}#{pos}",
                record_key=record.key,
                position=pos,
                name=author.display or author.name,
                block=keys[pos],
                family=fold(author.family or ""),
                given=parse_given(author.given),
                given_raw=author.given,
                affiliations=affiliation_tokens(affs),
                affiliation_text=fold(" ".join(affs)).strip(),
                orcid=(author.orcid or "").strip().lower() or None,
                email=(author.email or "").strip().lower() or None,
                coauthors=everyone,
                venue=venue,
                year=record.year,
                text=text,
            )
        )
    return out


def text_vectors(sigs: Sequence[Signature]) -> sparse.csr_matrix:
    """L2-normalised hashed term vectors (sublinear TF) of each signature's paper text,
    one row per signature (each record's text is vectorised once)."""
    row_of: dict[str, int] = {}
    texts: list[str] = []
    rows = []
    for s in sigs:
        r = row_of.get(s.record_key)
        if r is None:
            r = row_of[s.record_key] = len(texts)
            texts.append(s.text)
        rows.append(r)
    x = texts_vectors(texts)
    return x[np.asarray(rows, dtype=np.int64)] if rows else x


def texts_vectors(texts: Sequence[str]) -> sparse.csr_matrix:
    """`text_vectors` of paper texts, one row each. A row depends on its text alone
    (counts, sublinear weights and its own norm), not on the other texts."""
    indptr, cols, data = sublinear_rows(texts, TEXT_DIM)  # sklearn's hashing, without sklearn
    return sparse.csr_matrix((data, cols, indptr), shape=(len(texts), TEXT_DIM))


def hard_cannot(a: Signature, b: Signature) -> bool:
    """Pairs that can never be one person: two positions on the same record, given names
    that contradict each other, or two different ORCIDs."""
    if a.record_key == b.record_key:
        return True
    if a.orcid and b.orcid and a.orcid != b.orcid:
        return True
    return first_names_relation(a.given, b.given) == "incompatible" or middle_conflict(
        a.given, b.given
    )


def pair_features(
    sigs: Sequence[Signature],
    vectors: sparse.csr_matrix,
    pairs: Sequence[tuple[int, int]],
) -> np.ndarray:
    """Feature rows (in `FEATURES` order) for index pairs into `sigs`/`vectors`."""
    out = np.zeros((len(pairs), len(FEATURES)), dtype=np.float32)
    if not pairs:
        return out
    left = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
    right = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs))
    cos = np.asarray(vectors[left].multiply(vectors[right]).sum(axis=1)).ravel()
    for row, (i, j) in enumerate(pairs):
        a, b = sigs[i], sigs[j]
        f = out[row]
        rel = first_names_relation(a.given, b.given)
        f[0] = rel == "equal"
        f[1] = rel == "nickname"
        f[2] = rel == "initial"
        f[3] = rel == "missing"
        f[4] = middle_conflict(a.given, b.given)
        # Both sets hold the pair's own key(s); count only the other authors.
        own = len({a.block, b.block} & a.coauthors & b.coauthors)
        shared = len(a.coauthors & b.coauthors) - own
        union = len(a.coauthors | b.coauthors) - len({a.block, b.block})
        f[5] = min(shared, 5)
        f[6] = shared / union if union else 0.0
        f[7] = cos[row]
        if a.venue and b.venue:
            f[8] = a.venue == b.venue
        else:
            f[9] = 1
        if a.year is not None and b.year is not None:
            f[10] = min(abs(a.year - b.year), 10)
        else:
            f[11] = 1
        if a.affiliations and b.affiliations:
            f[12] = len(a.affiliations & b.affiliations) / len(a.affiliations | b.affiliations)
            f[14] = a.affiliation_text == b.affiliation_text
        else:
            f[13] = 1
        f[15] = bool(a.orcid and a.orcid == b.orcid)
        f[16] = bool(a.orcid and b.orcid and a.orcid != b.orcid)
        f[17] = bool(a.email and a.email == b.email)
        lengths = [len(g.first) for g in (a.given, b.given) if g.full]
        f[18] = min(lengths) if lengths else 0
        f[19] = pair_people(a.people, b.people)
        f[20] = min(max(a.block_people, b.block_people), BLOCK_PEOPLE_CAP)
    return out
