"""Hashed term counts of paper texts, computed as scikit-learn's `HashingVectorizer` (with
the settings of the author features) computes them, without importing scikit-learn.

Importing `sklearn.feature_extraction.text` costs ~1.4 s (it pulls in `scipy.stats`),
nearly half of the start-up of an incremental `paperdesk resolve`, which only needs this
one transform. The steps are sklearn's, in order: lower-case, take the tokens of
`TOKEN`, drop English stop words, hash each token's UTF-8 bytes with signed 32-bit
MurmurHash3 (seed 0) into column `|h| mod n` (`h = -2**31` as sklearn maps it), count,
sum duplicates (sorting each row's columns). `l2_normalize` divides each row by the norm
summed left to right, as sklearn's `normalize` does, so vectors (and what is stored of
them) are bit for bit the same (checked against scikit-learn in the tests).

The module imports numpy only (scipy where a function builds a sparse matrix), so an
incremental day's start-up does not pay for `scipy.sparse`'s import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain, filterfalse
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

Rows = tuple[np.ndarray, np.ndarray, np.ndarray]
"""A sparse matrix's rows as arrays: (indptr, column indices, values), CSR-style."""

TOKEN = re.compile(r"(?u)\b[a-zA-Z][a-zA-Z0-9]{2,}\b")

STOP_WORDS = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes becoming
    been before beforehand behind being below beside besides between beyond bill both bottom
    but by call can cannot cant co con could couldnt cry de describe detail do done down due
    during each eg eight either eleven else elsewhere empty enough etc even ever every
    everyone everything everywhere except few fifteen fifty fill find fire first five for
    former formerly forty found four from front full further get give go had has hasnt have
    he hence her here hereafter hereby herein hereupon hers herself him himself his how
    however hundred i ie if in inc indeed interest into is it its itself keep last latter
    latterly least less ltd made many may me meanwhile might mill mine more moreover most
    mostly move much must my myself name namely neither never nevertheless next nine no
    nobody none noone nor not nothing now nowhere of off often on once one only onto or
    other others otherwise our ours ourselves out over own part per perhaps please put
    rather re same see seem seemed seeming seems serious several she should show side since
    sincere six sixty so some somehow someone something sometime sometimes somewhere still
    such system take ten than that the their them themselves then thence there thereafter
    thereby therefore therein thereupon these they thick thin third this those though three
    through throughout thru thus to together too top toward towards twelve twenty two un
    under until up upon us very via was we well were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while whither
    who whoever whole whom whose why will with within without would yet you your yours
    yourself yourselves
    """.split()
)
"""scikit-learn's `ENGLISH_STOP_WORDS` (from the Glasgow Information Retrieval Group)."""

_MASK = 0xFFFFFFFF
_MEMO_MAX = 1 << 20
_memo: dict[str, int] = {}
"""Token -> column, per n_features (cleared when it grows past `_MEMO_MAX` tokens)."""
_memo_dim = 0


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3_x86_32 of `data`, as a signed 32-bit integer (sklearn's
    `murmurhash3_32(key, seed, positive=False)`)."""
    h = seed & _MASK
    n = len(data)
    end = n - n % 4
    for i in range(0, end, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * 0xCC9E2D51) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        k = (k * 0x1B873593) & _MASK
        h ^= k
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    tail = n - end
    if tail:
        k = int.from_bytes(data[end:], "little")
        k = (k * 0xCC9E2D51) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        k = (k * 0x1B873593) & _MASK
        h ^= k
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def column(token: str, n_features: int) -> int:
    """The column sklearn's hashing puts `token` in."""
    h = murmur3_32(token.encode("utf-8"))
    if h == -(1 << 31):
        return (2147483647 - (n_features - 1)) % n_features
    return abs(h) % n_features


def tokens(text: str) -> list[str]:
    """The words of `text` the vectorizer counts (lower-cased, no stop words)."""
    return list(filterfalse(_IS_STOP, TOKEN.findall(text.lower())))


_IS_STOP = STOP_WORDS.__contains__


def _token_columns(texts: Sequence[str], n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, column of every token in text order): the counts before duplicates are
    summed. The tokens of all texts are looked up in one pass (`map`), after the new ones
    are hashed: a Python step per token was most of the cost (a day's ~2,000 texts hold
    ~400k tokens)."""
    global _memo_dim
    if _memo_dim != n_features or len(_memo) > _MEMO_MAX:
        _memo.clear()
        _memo_dim = n_features
    memo = _memo
    per_text = [tokens(text) for text in texts]
    flat = list(chain.from_iterable(per_text))
    for w in set(flat).difference(memo):
        memo[w] = column(w, n_features)
    cols = np.fromiter(map(memo.__getitem__, flat), dtype=np.int32, count=len(flat))
    indptr = np.zeros(len(texts) + 1, dtype=np.int32 if len(flat) < 2**31 else np.int64)
    np.cumsum(np.fromiter(map(len, per_text), dtype=np.int64, count=len(texts)), out=indptr[1:])
    return indptr, cols


def term_counts(texts: Sequence[str], n_features: int) -> sparse.csr_matrix:
    """Rows of token counts (float64) in hashed columns, duplicates summed and columns
    sorted: `HashingVectorizer(n_features, stop_words="english", alternate_sign=False,
    norm=None, token_pattern=TOKEN).transform(texts)`."""
    from scipy import sparse

    indptr, cols = _token_columns(texts, n_features)
    x = sparse.csr_matrix(
        (np.ones(len(cols), dtype=np.float64), cols, indptr), shape=(len(texts), n_features)
    )
    x.sum_duplicates()
    return x


def count_rows(texts: Sequence[str], n_features: int) -> Rows:
    """`term_counts` as arrays, without scipy: the duplicates of each row summed by one
    sort of (row, column) keys, which also orders each row's columns as scipy's
    `sum_duplicates` does (the tests hold the two equal)."""
    indptr, cols = _token_columns(texts, n_features)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), np.diff(indptr))
    keys = rows * n_features + cols
    keys.sort()
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(keys))).astype(np.float64)
    kept = keys[starts]
    out = np.zeros(len(texts) + 1, dtype=indptr.dtype)
    np.cumsum(np.bincount(kept // n_features, minlength=len(texts)), out=out[1:])
    return out, (kept % n_features).astype(np.int32), counts


def sublinear_rows(texts: Sequence[str], n_features: int) -> Rows:
    """L2-normalised sublinear term frequencies (1 + log count) of `texts`, as arrays:
    the paper-text vectors of the author features (`authors_features.texts_vectors`)."""
    indptr, cols, data = count_rows(texts, n_features)
    data = 1.0 + np.log(data)
    normalize_rows(indptr, data)
    return indptr, cols, data


def l2_normalize(x: sparse.csr_matrix, chunk: int = 4096) -> sparse.csr_matrix:
    """Each row divided by its L2 norm, in place (rows of zeros left as they are); see
    `normalize_rows`."""
    normalize_rows(x.indptr, x.data, chunk)
    return x


def normalize_rows(indptr: np.ndarray, data: np.ndarray, chunk: int = 4096) -> None:
    """The rows' values (`data`, CSR-style by `indptr`) divided by each row's L2 norm, in
    place (rows of zeros left as they are). The squares are summed left to right, as
    sklearn's `normalize` does (numpy's own sums pair terms up and can differ in the last
    bit): column by column over the rows of a chunk padded with zeros, which add nothing."""
    lengths = np.diff(indptr)
    n_rows = len(indptr) - 1
    for start in range(0, n_rows, chunk):
        stop = min(start + chunk, n_rows)
        lo, hi = indptr[start], indptr[stop]
        if hi == lo:
            continue
        n = lengths[start:stop]
        width = int(n.max())
        pos = np.arange(hi - lo) - np.repeat(indptr[start:stop] - lo, n)
        rows = np.repeat(np.arange(stop - start), n)
        squares = np.zeros((stop - start, width))
        d = data[lo:hi]
        squares[rows, pos] = d * d
        total = np.zeros(stop - start)
        for j in range(width):
            total += squares[:, j]
        norms = np.sqrt(total)
        norms[total == 0.0] = 1.0
        d /= np.repeat(norms, n)
