"""The approximate nearest-neighbour index over work vectors (usearch HNSW).

Why usearch: a single-file HNSW index that saves, loads (or memory-maps) and accepts
additions and removals in place, with half-precision storage; faiss-cpu's HNSW cannot
remove vectors. Keys are the docnos of `store.search`; the vectors themselves are kept in
SQLite, so this file is derived data and is rebuilt from there when missing or stale.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from usearch.index import Index

from paperdesk import parallel

CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96


class VectorIndex:
    def __init__(self, path: Path, dim: int, view: bool = False):
        """`view`: memory-map the file read-only (instant, shared with the page cache;
        for readers, which never add or save)."""
        self.path = path
        self.dim = dim
        self.index = self._new()
        if path.exists():
            try:
                if view:
                    self.index.view(str(path))
                else:
                    self.index.load(str(path))
            except (RuntimeError, ValueError, OSError):
                if not view:
                    raise
                self.index = self._new()  # replaced mid-read: empty until the next save
            if self.index.ndim != dim:
                self.index = self._new()

    def _new(self) -> Index:
        return Index(
            ndim=self.dim,
            metric="ip",
            dtype="f16",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def __len__(self) -> int:
        return len(self.index)

    def clear(self) -> None:
        self.index = self._new()

    def add(self, keys: np.ndarray, vectors: np.ndarray, threads: int | None = None) -> None:
        """Add or replace vectors (replacing = remove, then add), on `threads` usearch
        threads (default: the pool size, `paperdesk.parallel.workers()`)."""
        if len(keys) == 0:
            return
        keys = np.asarray(keys, dtype=np.uint64)
        if len(self.index):
            present = np.asarray(self.index.contains(keys), dtype=bool).reshape(-1)
            if present.any():
                self.index.remove(keys[present])
        n = threads or parallel.workers()
        self.index.add(keys, np.asarray(vectors, dtype=np.float32), threads=n)

    def remove(self, keys: list[int]) -> None:
        ks = [k for k in keys if k in self.index]
        if ks:
            self.index.remove(np.asarray(ks, dtype=np.uint64))

    def get(self, keys: list[int]) -> np.ndarray:
        """Stored vectors (float32) for keys; rows of NaN for keys not in the index."""
        out = np.full((len(keys), self.dim), np.nan, dtype=np.float32)
        if not keys:
            return out
        got = self.index.get(np.asarray(keys, dtype=np.uint64))  # one call: a tuple, None if absent
        rows: Any = got
        if isinstance(got, np.ndarray):
            rows = got.reshape(len(keys), -1) if got.size else [None] * len(keys)
        elif got is None:
            rows = [None] * len(keys)
        for i, v in enumerate(rows):
            if v is not None:
                out[i] = np.asarray(v, dtype=np.float32).reshape(-1)
        return out

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(docnos, cosine similarities) of the k nearest, best first."""
        if len(self.index) == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        m = self.index.search(np.asarray(query, dtype=np.float32).reshape(-1), min(k, len(self.index)))
        return np.asarray(m.keys, dtype=np.int64), 1.0 - np.asarray(m.distances, dtype=np.float32)

    def exact(self, query: np.ndarray, keys: list[int], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k over a given set of docnos (small filtered sets: exact beats ANN+filter)."""
        if not keys:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        vecs = self.get(keys)
        ok = ~np.isnan(vecs[:, 0])
        karr = np.asarray(keys, dtype=np.int64)[ok]
        sims = vecs[ok] @ np.asarray(query, dtype=np.float32).reshape(-1)
        top = np.argsort(-sims)[:k]
        return karr[top], sims[top]

    def save(self) -> None:
        """Write atomically (a crash mid-save leaves the old file)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
        self.index.save(str(tmp))
        os.replace(tmp, self.path)
