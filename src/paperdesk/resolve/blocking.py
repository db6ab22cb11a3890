"""Candidate blocking: MinHash signatures and LSH band keys, vectorised over many records.

Comparing every record with every other is quadratic; LSH keys make two records candidates
only when their shingle sets are likely similar (Jaccard above roughly (1/b)^(1/r) for b
bands of r rows). Titles (word sets) and abstracts (word-bigram sets) get separate keys, so a
record with only a title, or only an abstract, can still meet its twin.

Why not `datasketch`: its MinHash updates one record at a time in Python, ~100x slower than
hashing a whole batch at once with numpy as below; the scheme (universal hashing of 32-bit
shingle hashes, min per permutation, bands hashed to one key) is the same. Band keys are
stable 63-bit integers (fixed seeds, crc32 shingles), so they can be stored and looked up
in SQL by the incremental resolve.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from paperdesk.resolve.works import Doc

MAX_BUCKET = 64
"""Buckets larger than this are ignored: they hold near-empty or boilerplate shingle sets
(e.g. the title 'Introduction') whose co-occurrence says nothing; a true twin still meets
through its other bands."""


@dataclass(frozen=True)
class LshScheme:
    """b bands of r rows; `field` tags the keys so title and abstract keys never collide."""

    field: int
    bands: int
    rows: int
    seed: int

    @property
    def perms(self) -> int:
        return self.bands * self.rows


TITLE = LshScheme(field=1, bands=12, rows=3, seed=11)
ABSTRACT = LshScheme(field=2, bands=16, rows=2, seed=23)
EXACT_COLUMNS = 2
"""`title_keys` ends with this many exact keys: the whole title and the main title."""


def _params(scheme: LshScheme) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(scheme.seed)
    a = rng.integers(1, 2**63, size=scheme.perms, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 2**63, size=scheme.perms, dtype=np.uint64)
    return a, b


def band_keys(sets: Sequence[np.ndarray], scheme: LshScheme, chunk: int = 4096) -> np.ndarray:
    """An (n, bands) int64 array of LSH keys; rows of empty sets are 0 (never a key)."""
    n = len(sets)
    out = np.zeros((n, scheme.bands), dtype=np.int64)
    a, b = _params(scheme)
    mix = np.uint64(0x9E3779B97F4A7C15)
    for start in range(0, n, chunk):
        part = sets[start : start + chunk]
        lens = np.fromiter((len(s) for s in part), dtype=np.int64, count=len(part))
        nonempty = np.nonzero(lens)[0]
        if len(nonempty) == 0:
            continue
        flat = np.concatenate([part[int(i)] for i in nonempty]).astype(np.uint64)
        starts = np.concatenate(([0], np.cumsum(lens[nonempty])[:-1]))
        sig = np.empty((scheme.perms, len(nonempty)), dtype=np.uint64)
        for p in range(scheme.perms):
            hv = (flat * a[p] + b[p]) >> np.uint64(32)
            sig[p] = np.minimum.reduceat(hv, starts)
        for band in range(scheme.bands):
            k = np.full(len(nonempty), np.uint64(scheme.field * 1_000_003 + band), np.uint64)
            for r in range(scheme.rows):
                k = (k * mix) ^ sig[band * scheme.rows + r]
                k ^= k >> np.uint64(31)
            key = (k >> np.uint64(1)).astype(np.int64)
            key[key == 0] = 1
            out[start + nonempty, band] = key
    return out


def _groups(col: np.ndarray, rows: np.ndarray) -> Iterator[np.ndarray]:
    order = np.argsort(col, kind="stable")
    sk = col[order]
    if len(sk) < 2:
        return
    cut = np.nonzero(np.diff(sk))[0] + 1
    bounds = np.concatenate(([0], cut, [len(sk)]))
    sizes = np.diff(bounds)
    for g in np.nonzero((sizes >= 2) & (sizes <= MAX_BUCKET))[0]:
        s, e = bounds[g], bounds[g + 1]
        if sk[s] == 0:
            continue
        yield rows[order[s:e]]


def buckets(keys: np.ndarray, pooled: bool = False) -> Iterator[np.ndarray]:
    """Row indexes sharing a key, bucket by bucket (size 2..MAX_BUCKET).

    LSH bands only meet in their own column; `pooled` keys (exact title / main-title keys)
    meet in any column, since one record's main title is another's whole title."""
    n, nb = keys.shape
    ids = np.arange(n)
    if pooled:
        yield from _groups(keys.T.reshape(-1), np.tile(ids, nb))
        return
    for band in range(nb):
        yield from _groups(keys[:, band], ids)


def candidate_pairs(key_sets: Sequence[np.ndarray]) -> set[tuple[int, int]]:
    """Unique (i, j), i < j, pairs of rows sharing at least one key in any of the arrays.

    Arrays from `title_keys` carry EXACT_COLUMNS pooled columns at their end."""
    pairs: set[tuple[int, int]] = set()
    for keys in key_sets:
        parts = [(keys, False)]
        if keys.shape[1] == TITLE.bands + EXACT_COLUMNS:
            parts = [(keys[:, : TITLE.bands], False), (keys[:, TITLE.bands :], True)]
        for arr, pooled in parts:
            for rows in buckets(arr, pooled):
                rs = sorted({int(x) for x in rows})
                for x in range(len(rs)):
                    for y in range(x + 1, len(rs)):
                        pairs.add((rs[x], rs[y]))
    return pairs


def _exact(text: str) -> int:
    """A stable 63-bit key of a whole string (two independent 32-bit checksums)."""
    if not text:
        return 0
    b = text.encode()
    key = ((zlib.crc32(b) << 31) ^ zlib.adler32(b) ^ (3 << 61)) & (2**63 - 1)
    return key or 1


def title_keys(docs: Sequence[Doc]) -> np.ndarray:
    """Title LSH bands plus two exact keys: the whole title and its main title, so that a
    title cut to its main part ('Flash3D') meets the full one ('Flash3D: Feed-Forward …')
    although their word sets are far apart."""
    bands = band_keys([d.title_tokens for d in docs], TITLE)
    exact = np.array([[_exact(d.title), _exact(d.title_head)] for d in docs], dtype=np.int64)
    return np.hstack([bands, exact.reshape(len(docs), EXACT_COLUMNS)])


def abstract_keys(docs: Sequence[Doc]) -> np.ndarray:
    """Abstract LSH bands plus one exact key of the opening sentences (`Doc.lead`): a copy
    whose opening is the paper's, the rest reworded, shares too few word pairs to meet
    it through the bands reliably."""
    bands = band_keys([d.abstract_shingles for d in docs], ABSTRACT)
    lead = np.array([d.lead for d in docs], dtype=np.int64).reshape(len(docs), 1)
    return np.hstack([bands, lead])


class LshIndex:
    """Stored band keys held in memory during a large resolve run, so each batch looks its
    keys up with a few vectorised binary searches instead of a SQL join per batch.

    Keys live in sorted segments (merged when a newer one grows to half an older one's
    size, so adding stays cheap and lookups touch few segments); `work_of` maps each
    indexed record to the work it was indexed under (the caller follows merge redirects).
    """

    def __init__(self) -> None:
        self.segments: list[tuple[np.ndarray, np.ndarray]] = []
        self.work_of: dict[int, int] = {}

    def add(self, keys: np.ndarray, rowids: np.ndarray, works: np.ndarray) -> None:
        if not len(keys):
            return
        self.work_of.update(zip(rowids.tolist(), works.tolist(), strict=True))
        order = np.argsort(keys, kind="stable")
        self.segments.append((keys[order].astype(np.int64), rowids[order].astype(np.int64)))
        while len(self.segments) > 1 and 2 * len(self.segments[-1][0]) >= len(self.segments[-2][0]):
            (k2, r2), (k1, r1) = self.segments.pop(), self.segments.pop()
            k, r = np.concatenate([k1, k2]), np.concatenate([r1, r2])
            order = np.argsort(k, kind="stable")
            self.segments.append((k[order], r[order]))

    def top_candidates(
        self, qkeys: np.ndarray, qdocs: np.ndarray, top: int
    ) -> dict[int, list[int]]:
        """doc → the indexed rowids sharing the most keys with it (at most `top`, most
        shared first). Keys held by more than MAX_BUCKET records say nothing and are
        skipped, as inside a batch."""
        keep = qkeys != 0
        qkeys, qdocs = qkeys[keep], qdocs[keep]
        if not len(qkeys) or not self.segments:
            return {}
        # (np.unique's hash path is slow on large arrays: sort instead.)
        qorder = np.argsort(qkeys, kind="stable")
        sk = qkeys[qorder]
        first = np.concatenate(([True], sk[1:] != sk[:-1]))
        uk = sk[first]
        inv = np.empty(len(qkeys), np.int64)
        inv[qorder] = np.cumsum(first) - 1
        los, his = [], []
        count = np.zeros(len(uk), np.int64)
        for keys, _ in self.segments:
            lo, hi = np.searchsorted(keys, uk, "left"), np.searchsorted(keys, uk, "right")
            los.append(lo)
            his.append(hi)
            count += hi - lo
        ok = count <= MAX_BUCKET
        # Query side grouped by unique key: docs of key u are qd[qstart[u]:qstart[u]+qn[u]].
        qd = qdocs[qorder]
        qn = np.bincount(inv, minlength=len(uk))
        qstart = np.concatenate(([0], np.cumsum(qn)[:-1]))
        hit_docs, hit_rows = [], []
        for (_, rows), lo, hi in zip(self.segments, los, his, strict=True):
            n = np.where(ok, hi - lo, 0)
            u = np.nonzero(n)[0]
            if not len(u):
                continue
            n = n[u]
            # Every stored row of each matched key ...
            first = np.repeat(lo[u] - np.concatenate(([0], np.cumsum(n)[:-1])), n)
            m_rows = rows[first + np.arange(int(n.sum()))]
            m_key = np.repeat(u, n)
            # ... paired with every query doc holding that key.
            rep = qn[m_key]
            total = int(rep.sum())
            offs = np.arange(total) - np.repeat(np.cumsum(rep) - rep, rep)
            hit_rows.append(np.repeat(m_rows, rep))
            hit_docs.append(qd[np.repeat(qstart[m_key], rep) + offs])
        if not hit_rows:
            return {}
        docs, rws = np.concatenate(hit_docs), np.concatenate(hit_rows)
        code = np.sort((docs << 40) | rws)
        cut = np.nonzero(np.concatenate(([True], code[1:] != code[:-1], [True])))[0]
        code, counts = code[cut[:-1]], np.diff(cut)
        d, r = code >> 40, code & ((1 << 40) - 1)
        order = np.lexsort((-counts, d))
        d, r = d[order], r[order]
        starts = np.nonzero(np.concatenate(([True], d[1:] != d[:-1])))[0]
        rank = np.arange(len(d)) - np.repeat(starts, np.diff(np.append(starts, len(d))))
        sel = rank < top
        out: dict[int, list[int]] = {}
        for doc, rowid in zip(d[sel].tolist(), r[sel].tolist(), strict=True):
            out.setdefault(doc, []).append(rowid)
        return out
