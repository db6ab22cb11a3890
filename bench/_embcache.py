"""Embedding cache for the benchmarks: a variant's vectors for a corpus are computed once
(full MiniLM on SciFact takes minutes on two cores) and reloaded by later runs."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

from paperdesk.search.embed import Embedder

CACHE = Path(os.environ.get("PAPERDESK_BENCH_CACHE", "/tmp/paperdesk-bench-cache"))


def embed_cached(emb: Embedder, texts: list[str], tag: str, kind: str = "docs") -> tuple[np.ndarray, float]:
    """(vectors, texts per second measured when they were computed)."""
    h = hashlib.sha1("\n".join(texts).encode()).hexdigest()[:12]
    path = CACHE / f"{tag}-{kind}-{emb.name}-{h}.npy"
    rate_path = path.with_suffix(".rate")
    if path.exists() and rate_path.exists():
        return np.load(path), float(rate_path.read_text())
    CACHE.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    out = []
    step = 256
    for i in range(0, len(texts), step):
        chunk = texts[i : i + step]
        out.append(emb.encode_docs(chunk) if kind == "docs" else emb.encode_queries(chunk))
        print(f"  {emb.name} {kind}: {min(i + step, len(texts))}/{len(texts)}", file=sys.stderr, flush=True)
    v = np.vstack(out)
    rate = len(texts) / (time.perf_counter() - t)
    np.save(path, v)
    rate_path.write_text(f"{rate:.3f}")
    return v, rate
