"""The recommender's text features without scikit-learn: hashed term counts per paper, and
a tf-idf space fitted on the candidates' counts.

Why: ranking a month for one user used to fit and apply a `TfidfVectorizer` on the
month's ~8,000 papers on every call (seconds of tokenising, plus ~1 s importing
scikit-learn). A paper's term counts do not depend on the other papers, so they are
computed once per record and kept in the store (`desk_features`, `desk/cache.py`); the
space — which terms count and their idf — does depend on the candidates, and fitting it
on stored counts is a few vectorised numpy steps (`TextSpace.fit`).

Terms are what the model's tf-idf used: accents stripped, lower case, tokens of
`TOKEN`, scikit-learn's English stop words dropped, unigrams and the bigrams of the
remaining tokens. Each term is hashed to 32 bits (crc32 of a word; a bigram mixes its
words' hashes), so no vocabulary is stored; at a month's ~500k distinct terms about 30
pairs share a hash (with 2**22 columns, 4 % of the kept terms of 600 papers were such
chimeras of two rare terms).
`TextSpace.fit` then does what `TfidfVectorizer(min_df, max_df, max_features,
sublinear_tf=True)` does: keep terms in `min_df`..`max_df` of the documents, the
`max_features` most frequent of them, weigh `(1 + ln tf) * (ln((1 + n) / (1 + df)) + 1)`,
and l2-normalise each row.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from paperdesk.resolve.hashed_terms import STOP_WORDS

if TYPE_CHECKING:
    from scipy import sparse

FORMAT = 1
"""The stored counts' format: rows of another format are computed again."""
TOKEN = re.compile(r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b")
_MIX = 0x9E3779B1
_memo: dict[str, int] = {}
_MEMO_MAX = 1 << 20


def strip_accents(text: str) -> str:
    """scikit-learn's `strip_accents_unicode`: NFKD, combining marks dropped."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """The tokens counted, in order (stop words dropped, so bigrams span them as
    scikit-learn's do)."""
    return [w for w in TOKEN.findall(strip_accents(text).lower()) if w not in STOP_WORDS]


@dataclass
class Terms:
    """Term counts of many texts, CSR-style: row i is `cols[indptr[i]:indptr[i+1]]`
    (sorted hashed columns) with `counts` beside them."""

    indptr: np.ndarray
    cols: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.cols[a:b], self.counts[a:b]

    def take(self, idx: Sequence[int] | np.ndarray) -> Terms:
        """The rows `idx`, in that order."""
        idx = np.asarray(idx, dtype=np.int64)
        starts = self.indptr[:-1][idx]
        lengths = self.indptr[1:][idx] - starts
        indptr = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        gather = np.repeat(starts - indptr[:-1], lengths) + np.arange(int(indptr[-1]), dtype=np.int64)
        return Terms(indptr, self.cols[gather], self.counts[gather])

    @classmethod
    def stack(cls, rows: Sequence[tuple[np.ndarray, np.ndarray]]) -> Terms:
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(c) for c, _ in rows], out=indptr[1:])
        if not rows:
            return cls(indptr, np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.uint16))
        return cls(indptr, np.concatenate([c for c, _ in rows]).astype(np.uint32, copy=False),
                   np.concatenate([n for _, n in rows]).astype(np.uint16, copy=False))


def _hashes(ws: list[str]) -> list[int]:
    memo = _memo
    if len(memo) > _MEMO_MAX:
        memo.clear()
    out = []
    for w in ws:
        h = memo.get(w)
        if h is None:
            h = memo[w] = zlib.crc32(w.encode())
        out.append(h)
    return out


def term_counts(texts: Sequence[str]) -> Terms:
    """Each text's hashed uni+bigram counts (see the module docstring)."""
    per = [_hashes(words(t)) for t in texts]
    lengths = np.fromiter(map(len, per), dtype=np.int64, count=len(per))
    flat = np.fromiter((h for hs in per for h in hs), dtype=np.uint64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(per), dtype=np.uint64), lengths)
    same = rows[:-1] == rows[1:]
    bigrams = (((flat[:-1] * np.uint64(_MIX)) & np.uint64(0xFFFFFFFF)) ^ flat[1:])[same]
    keys = (np.concatenate([rows, rows[:-1][same]]) << np.uint64(32)) | np.concatenate([flat, bigrams])
    keys.sort()
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, len(keys)))
    uniq = keys[starts]
    indptr = np.zeros(len(per) + 1, dtype=np.int64)
    np.cumsum(np.bincount((uniq >> np.uint64(32)).astype(np.int64), minlength=len(per)), out=indptr[1:])
    return Terms(indptr, (uniq & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                 np.minimum(counts, 65535).astype(np.uint16))


def pack(cols: np.ndarray, counts: np.ndarray) -> bytes:
    """One row as stored: little-endian uint32 columns, then uint16 counts."""
    return cols.astype("<u4").tobytes() + counts.astype("<u2").tobytes()


def unpack(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    n = len(blob) // 6
    return (np.frombuffer(blob, dtype="<u4", count=n),
            np.frombuffer(blob, dtype="<u2", count=n, offset=4 * n))


@dataclass
class TextSpace:
    """The kept hashed columns (sorted) and their idf."""

    columns: np.ndarray
    idf: np.ndarray

    @classmethod
    def fit(cls, terms: Terms, *, max_features: int = 20_000, min_df: int = 2,
            max_df: float = 0.5) -> TextSpace:
        n = len(terms)
        if not len(terms.cols):
            return cls(np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.float32))
        # one sort of (term, count) keys gives each term's documents (a row holds a term
        # once) and, summed, its count over all of them
        keys = np.sort((terms.cols.astype(np.uint64) << np.uint64(16)) | terms.counts.astype(np.uint64))
        cols = (keys >> np.uint64(16)).astype(np.uint32)
        first = np.ones(len(cols), dtype=bool)
        np.not_equal(cols[1:], cols[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        df = np.diff(np.append(starts, len(cols)))
        keep = np.flatnonzero((df >= min_df) & (df <= max_df * n))
        if len(keep) > max_features:
            tf = np.add.reduceat((keys & np.uint64(0xFFFF)).astype(np.int64), starts)[keep]
            keep = np.sort(keep[np.lexsort((keep, -tf))[:max_features]])
        idf = (np.log((1.0 + n) / (1.0 + df[keep])) + 1.0).astype(np.float32)
        return cls(cols[starts[keep]], idf)

    def __len__(self) -> int:
        return len(self.columns)

    def transform(self, terms: Terms) -> sparse.csr_matrix:
        """l2-normalised sublinear tf-idf rows, one per row of `terms` (float32)."""
        from scipy import sparse

        n = len(terms)
        width = max(1, len(self.columns))
        if not len(self.columns) or not len(terms.cols):
            return sparse.csr_matrix((n, width), dtype=np.float32)
        pos = np.minimum(np.searchsorted(self.columns, terms.cols), len(self.columns) - 1)
        hit = self.columns[pos] == terms.cols
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(terms.indptr))[hit]
        pos = pos[hit]
        data = (1.0 + np.log(terms.counts[hit].astype(np.float64))) * self.idf[pos]
        norms = np.sqrt(np.bincount(rows, weights=data * data, minlength=n))
        norms[norms == 0] = 1.0
        data /= norms[rows]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return sparse.csr_matrix((data.astype(np.float32), pos.astype(np.int32), indptr), shape=(n, width))


def space_for(terms: Terms) -> TextSpace:
    """The space the recommender fits on `terms` (its candidates): scikit-learn's defaults
    of the model, relaxed for small pools (a day of a small store), where a term in two
    papers or in half of them is no evidence of anything."""
    if len(terms) >= 200:
        return TextSpace.fit(terms)
    return TextSpace.fit(terms, min_df=1, max_df=1.0)
