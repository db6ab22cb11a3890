"""Rank fusion for hybrid search.

Reciprocal rank fusion (Cormack et al., 2009) needs no score calibration between BM25 and
cosine similarity, which differ in scale per query; `bench/search_quality.py` compares it
with weighted variants and the default follows that measurement.
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60


def rrf(
    rankings: Sequence[Sequence[tuple[int, float]]],
    weights: Sequence[float] | None = None,
    k: int = RRF_K,
) -> list[tuple[int, float]]:
    """Fuse ranked lists of (doc, score) into one, best first; ties keep first-seen order."""
    ws = list(weights) if weights is not None else [1.0] * len(rankings)
    scores: dict[int, float] = {}
    for w, ranking in zip(ws, rankings, strict=True):
        for rank, (doc, _) in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])
