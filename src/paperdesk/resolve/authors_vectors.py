"""Pair features and hard cannot-links as array operations over all pairs at once.

`pair_features` in `authors_features` defines the features one pair at a time; here the
same values come from per-signature arrays built once (`SigArrays`): codes for records,
ORCIDs, e-mails, venues and given names, sparse 0/1 matrices for co-author keys and
affiliation tokens, and the text vectors. A pair's feature row is then a handful of
gathers and sparse row products, so scoring costs microseconds per pair instead of a
Python loop body, and `tests/test_resolve_authors.py` checks that both give the same rows.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from paperdesk.resolve.authors_features import (
    BLOCK_PEOPLE_CAP,
    FEATURES,
    Signature,
)
from paperdesk.resolve.authors_names import GivenName, first_names_relation, middle_conflict
from paperdesk.resolve.authors_rarity import NO_NAME
from paperdesk.store import samples_codec as codec

_RELATIONS = ("equal", "nickname", "initial", "missing", "incompatible")
_relation = first_names_relation.__wrapped__
"""Uncached: callers here compare each distinct pair once, and hashing a `GivenName` for
the cache costs more than the comparison."""


def _codes(values: Iterable[Hashable | None]) -> np.ndarray:
    """Small integer codes, -1 for None/empty (equal values, equal codes)."""
    index: dict[Hashable, int] = {}
    return np.fromiter(
        (index.setdefault(v, len(index)) if v else -1 for v in values), dtype=np.int64
    )


def _incidence(sets: Sequence[Iterable[str]]) -> sparse.csr_matrix:
    """A 0/1 matrix: row i has a 1 in the column of each element of `sets[i]`."""
    index: dict[str, int] = {}
    indptr = [0]
    cols: list[int] = []
    for s in sets:
        cols.extend(index.setdefault(x, len(index)) for x in s)
        indptr.append(len(cols))
    data = np.ones(len(cols), dtype=np.float32)
    return sparse.csr_matrix(
        (data, np.asarray(cols, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
        shape=(len(sets), max(1, len(index))),
    )


def _rowdot(m: sparse.csr_matrix, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.asarray(m[left].multiply(m[right]).sum(axis=1), dtype=np.float64).ravel()


@dataclass
class SigArrays:
    """Per-signature arrays of one list of signatures (see the module doc)."""

    record: np.ndarray
    orcid: np.ndarray
    email: np.ndarray
    venue: np.ndarray
    year: np.ndarray
    year_known: np.ndarray
    given: np.ndarray
    """Code of the signature's `GivenName` in `givens`."""
    givens: list[GivenName]
    first_len: np.ndarray
    """Length of the spelled-out first name, 0 for an initial."""
    coauthors: sparse.csr_matrix
    coauthor_codes: np.ndarray
    """`row * width + column` of every entry of `coauthors`, sorted: membership tests by
    binary search (sorted once here, not once per scored chunk)."""
    n_coauthors: np.ndarray
    own: np.ndarray
    """Column of the signature's own blocking key in `coauthors`."""
    affiliations: sparse.csr_matrix
    n_affiliations: np.ndarray
    affiliation_text: np.ndarray
    people: np.ndarray
    block_people: np.ndarray
    vectors: sparse.csr_matrix


def sig_arrays(
    sigs: Sequence[Signature], vectors: sparse.csr_matrix, fixed: Collection[str] = ()
) -> SigArrays:
    """The arrays of `sigs`. `fixed`: ids of signatures that are only ever scored against
    one not in it (two fixed profiles' members are never compared). Their co-author
    keys get columns only where a free signature has the key too: a scored pair's
    shared keys are all in its free side's set, and each own-key test (is a block in
    both sets?) asks the free side too (`n_coauthors` still counts every key). An
    incremental day's ~60k stored members hold ~1.4M co-author keys, and coding each
    one was most of building these arrays."""
    given_index: dict[GivenName, int] = {}
    given = np.fromiter(
        (given_index.setdefault(s.given, len(given_index)) for s in sigs),
        dtype=np.int64,
        count=len(sigs),
    )
    coded = any(s.key_codes is not None for s in sigs)
    coauthors, own = (_coded_coauthors if coded else _coauthors)(sigs, fixed)
    affiliations = _incidence([s.affiliations for s in sigs])
    return SigArrays(
        record=_codes(s.record_key for s in sigs),
        orcid=_codes(s.orcid for s in sigs),
        email=_codes(s.email for s in sigs),
        venue=_codes(s.venue for s in sigs),
        year=np.fromiter((s.year or 0 for s in sigs), np.int64, len(sigs)),
        year_known=np.fromiter((s.year is not None for s in sigs), bool, len(sigs)),
        given=given,
        givens=list(given_index),
        first_len=np.fromiter(
            (len(s.given.first) if s.given.full else 0 for s in sigs), np.int64, len(sigs)
        ),
        coauthors=coauthors,
        coauthor_codes=_codes_of(coauthors),
        n_coauthors=np.fromiter(
            (len(s.coauthors if s.key_codes is None else s.key_codes) for s in sigs),
            np.float64,
            len(sigs),
        ),
        own=own,
        affiliations=affiliations,
        n_affiliations=np.diff(affiliations.indptr).astype(np.float64),
        affiliation_text=_codes(s.affiliation_text for s in sigs),
        people=np.fromiter((s.people for s in sigs), np.float64, len(sigs)),
        block_people=np.fromiter((s.block_people for s in sigs), np.float64, len(sigs)),
        vectors=vectors,
    )


def _coauthors(
    sigs: Sequence[Signature], fixed: Collection[str]
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """(the co-author key matrix, each signature's own key column) of signatures that
    hold their keys as text (see `sig_arrays`)."""
    key_index: dict[str, int] = {}
    indptr = [0]
    cols: list[int] = []
    free: set[str] = set()
    for s in sigs:
        if s.sig_id not in fixed:
            free.update(s.coauthors)
    for s in sigs:
        keys = s.coauthors & free if s.sig_id in fixed else s.coauthors
        cols.extend(key_index.setdefault(k, len(key_index)) for k in keys)
        indptr.append(len(cols))
    own = np.fromiter(
        (key_index.setdefault(s.block, len(key_index)) for s in sigs), np.int64, len(sigs)
    )
    return _key_matrix(cols, indptr, len(sigs), len(key_index)), own


def _coded_coauthors(
    sigs: Sequence[Signature], fixed: Collection[str]
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """`_coauthors` where stored members hold their keys as codes (`Signature.key_codes`):
    the others' keys and every own key are coded the same way, and the fixed members'
    codes are matched against the free signatures' as arrays. The same entries as
    `_coauthors` gives in other columns (a column is a key either way), so the same
    feature rows."""
    cache: dict[str, int] = {}
    by_set: dict[int, np.ndarray] = {}  # a record's signatures share one key set
    rows: list[np.ndarray] = []
    for s in sigs:
        c = s.key_codes
        if c is None:
            c = by_set.get(id(s.coauthors))
            if c is None:
                c = by_set[id(s.coauthors)] = np.array(
                    codec.key_codes(s.coauthors, cache), dtype=np.int64
                )
        rows.append(c)
    lengths = np.fromiter((len(c) for c in rows), np.int64, len(rows))
    every = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    row_of = np.repeat(np.arange(len(sigs)), lengths)
    is_free = np.fromiter((s.sig_id not in fixed for s in sigs), bool, len(sigs))
    free = np.unique(every[is_free[row_of]])
    keep = is_free[row_of] | _in_sorted(every, free)
    blocks = {b: codec.key_code(b) for b in {s.block for s in sigs}}
    own_codes = np.fromiter((blocks[s.block] for s in sigs), np.int64, len(sigs))
    columns = np.unique(np.concatenate([free, own_codes]))
    cols = np.searchsorted(columns, every[keep])
    indptr = np.zeros(len(sigs) + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of[keep], minlength=len(sigs)), out=indptr[1:])
    own = np.searchsorted(columns, own_codes)
    return _key_matrix(cols, indptr, len(sigs), len(columns)), own


def _in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which `values` are in `sorted_set` (sorted codes): a bitmap of their low 20 bits
    first, so that only the few values it lets through are searched for (a day's ~1M
    member codes against ~30k free ones: ~3x faster than searching them all)."""
    out = np.zeros(len(values), dtype=bool)
    if not len(sorted_set):
        return out
    bits = np.zeros(1 << 20, dtype=bool)
    bits[sorted_set & 0xFFFFF] = True
    maybe = np.flatnonzero(bits[values & 0xFFFFF])
    at = np.minimum(np.searchsorted(sorted_set, values[maybe]), len(sorted_set) - 1)
    out[maybe] = sorted_set[at] == values[maybe]
    return out


def _key_matrix(
    cols: Sequence[int] | np.ndarray, indptr: Sequence[int] | np.ndarray, rows: int, width: int
) -> sparse.csr_matrix:
    return sparse.csr_matrix(
        (
            np.ones(len(cols), dtype=np.float32),
            np.asarray(cols, dtype=np.int64),
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(rows, max(1, width)),
    )


def relation_tables(givens: Sequence[GivenName]) -> tuple[np.ndarray, np.ndarray]:
    """(relation code, middle-initial conflict) for every pair of the given names, codes
    indexing `_RELATIONS`."""
    n = len(givens)
    rel = np.empty((n, n), dtype=np.int8)
    mid = np.empty((n, n), dtype=bool)
    for i, a in enumerate(givens):
        for j in range(i, n):
            b = givens[j]
            rel[i, j] = rel[j, i] = _RELATIONS.index(_relation(a, b))
            mid[i, j] = mid[j, i] = middle_conflict(a, b)
    return rel, mid


def _codes_of(m: sparse.csr_matrix) -> np.ndarray:
    """The sorted `row * width + column` codes of a 0/1 matrix's entries."""
    row_of = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))
    return np.sort(row_of * np.int64(m.shape[1]) + m.indices.astype(np.int64))


def _member(codes: np.ndarray, width: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """m[rows[k], cols[k]] != 0 for the matrix m of `codes` (see `_codes_of`), by binary
    search."""
    want = rows.astype(np.int64) * np.int64(width) + cols.astype(np.int64)
    pos = np.minimum(np.searchsorted(codes, want), len(codes) - 1)
    return codes[pos] == want if len(codes) else np.zeros(len(rows), dtype=bool)


def _relations(arr: SigArrays, ga: np.ndarray, gb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relation codes and middle-initial conflicts for the given-name code pairs, each
    distinct pair of names compared once."""
    n = np.int64(max(1, len(arr.givens)))
    pair_code = ga.astype(np.int64) * n + gb
    uniq, inv = np.unique(pair_code, return_inverse=True)
    rel = np.empty(len(uniq), dtype=np.int8)
    mid = np.empty(len(uniq), dtype=bool)
    for k, c in enumerate(uniq.tolist()):
        a, b = arr.givens[c // int(n)], arr.givens[c % int(n)]
        rel[k] = _RELATIONS.index(_relation(a, b))
        mid[k] = middle_conflict(a, b)
    return rel[inv], mid[inv]


def pair_rows(arr: SigArrays, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Feature rows (in `FEATURES` order) for the pairs `(left[k], right[k])`."""
    out = np.zeros((len(left), len(FEATURES)), dtype=np.float32)
    if not len(left):
        return out
    rel, mid = _relations(arr, arr.given[left], arr.given[right])
    for k in range(4):
        out[:, k] = rel == k
    out[:, 4] = mid
    inter = _rowdot(arr.coauthors, left, right)
    # Both sets hold the pair's own key(s); count only the other authors.
    oa, ob = arr.own[left], arr.own[right]
    same_block = oa == ob
    codes, width = arr.coauthor_codes, arr.coauthors.shape[1]
    own = (_member(codes, width, left, oa) & _member(codes, width, right, oa)).astype(float)
    own += ~same_block & _member(codes, width, left, ob) & _member(codes, width, right, ob)
    shared = inter - own
    union = arr.n_coauthors[left] + arr.n_coauthors[right] - inter - np.where(same_block, 1, 2)
    out[:, 5] = np.minimum(shared, 5)
    out[:, 6] = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
    out[:, 7] = _rowdot(arr.vectors, left, right)
    va, vb = arr.venue[left], arr.venue[right]
    both = (va >= 0) & (vb >= 0)
    out[:, 8] = both & (va == vb)
    out[:, 9] = ~both
    yk = arr.year_known[left] & arr.year_known[right]
    out[:, 10] = np.where(yk, np.minimum(np.abs(arr.year[left] - arr.year[right]), 10), 0)
    out[:, 11] = ~yk
    na, nb = arr.n_affiliations[left], arr.n_affiliations[right]
    has = (na > 0) & (nb > 0)
    ai = _rowdot(arr.affiliations, left, right)
    au = na + nb - ai
    out[:, 12] = np.divide(ai, au, out=np.zeros_like(ai), where=has & (au > 0))
    out[:, 13] = ~has
    out[:, 14] = has & (arr.affiliation_text[left] == arr.affiliation_text[right])
    ra, rb = arr.orcid[left], arr.orcid[right]
    out[:, 15] = (ra >= 0) & (ra == rb)
    out[:, 16] = (ra >= 0) & (rb >= 0) & (ra != rb)
    ea, eb = arr.email[left], arr.email[right]
    out[:, 17] = (ea >= 0) & (ea == eb)
    fa, fb = arr.first_len[left], arr.first_len[right]
    out[:, 18] = np.where((fa > 0) & (fb > 0), np.minimum(fa, fb), np.maximum(fa, fb))
    pa, pb = arr.people[left], arr.people[right]
    out[:, 19] = np.where(
        pa == NO_NAME, pb, np.where(pb == NO_NAME, pa, np.maximum(pa, pb))
    )
    out[:, 20] = np.minimum(
        np.maximum(arr.block_people[left], arr.block_people[right]), BLOCK_PEOPLE_CAP
    )
    return out


def block_cannot(arr: SigArrays, members: np.ndarray, free: np.ndarray | None = None) -> np.ndarray:
    """The n×n hard cannot-link matrix of one block (`hard_cannot` for every pair):
    same record, two ORCIDs, contradictory given names or middle initials. With `free`
    (a boolean per member), given names are compared only in pairs with a free member:
    the caller has settled the pairs of two others (two fixed profiles' members), and a
    day's blocks hold many more of those than new signatures."""
    rec = arr.record[members]
    cannot = rec[:, None] == rec[None, :]
    orc = arr.orcid[members]
    cannot |= (orc[:, None] >= 0) & (orc[None, :] >= 0) & (orc[:, None] != orc[None, :])
    g = arr.given[members]
    local, inv = np.unique(g, return_inverse=True)
    if len(local) > 1:  # a name never contradicts itself
        names = [arr.givens[x] for x in local]
        some = [] if free is None else np.unique(inv[free]).tolist()
        if free is None or len(some) == len(local):
            rel, mid = relation_tables(names)
            bad = (rel == _RELATIONS.index("incompatible")) | mid
        else:
            bad = np.zeros((len(local), len(local)), dtype=bool)
            done = set()
            for i in some:
                done.add(i)
                for j, b in enumerate(names):
                    if j not in done or j == i:
                        bad[i, j] = bad[j, i] = (
                            _relation(names[i], b) == "incompatible"
                            or middle_conflict(names[i], b)
                        )
        cannot |= bad[inv[:, None], inv[None, :]]
    np.fill_diagonal(cannot, False)
    return cannot


def pair_cannot(arr: SigArrays, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """`block_cannot` for the pairs `(left[k], right[k])` alone: same record, two ORCIDs,
    contradictory given names or middle initials."""
    out = arr.record[left] == arr.record[right]
    ra, rb = arr.orcid[left], arr.orcid[right]
    out |= (ra >= 0) & (rb >= 0) & (ra != rb)
    rel, mid = _relations(arr, arr.given[left], arr.given[right])
    return out | (rel == _RELATIONS.index("incompatible")) | mid
