"""Rank fusion for hybrid search.

Two methods, both measured on SciFact by bench/search_quality.py (docs/benchmarks.md):

- reciprocal rank fusion (Cormack et al., 2009): needs no score calibration, but gives a
  weak ranking as much say as a strong one at each rank, so with the fast static embedder
  (semantic nDCG@10 0.56 vs BM25 0.86) hybrid RRF fell *below* BM25 alone (0.72–0.81);
- convex combination of per-query min–max normalised scores (Bruch et al., 2023) over the
  union of both candidate lists, with the cosine computed exactly for every candidate:
  a weak semantic side only nudges the BM25 order, so hybrid beats both parts. Default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60
ALPHA = 0.35
"""Weight of the semantic score in the convex combination (SciFact grid: 0.3–0.4 best)."""


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


def _minmax(values: Mapping[int, float]) -> tuple[float, float]:
    if not values:
        return 0.0, 1.0
    lo, hi = min(values.values()), max(values.values())
    return lo, (hi - lo) or 1.0


def convex(
    keyword: Sequence[tuple[int, float]],
    cosine: Mapping[int, float],
    alpha: float = ALPHA,
) -> list[tuple[int, float]]:
    """(1-alpha)·BM25 + alpha·cosine, each min–max normalised over the candidates.

    `keyword` is the BM25 list (a candidate absent from it scores as its minimum);
    `cosine` holds the similarity of *every* candidate (keyword and semantic ones)."""
    kw = dict(keyword)
    klo, kspan = _minmax(kw)
    clo, cspan = _minmax(cosine)
    cand = list(dict.fromkeys([*kw, *cosine]))
    scored = [
        (
            d,
            (1 - alpha) * (kw.get(d, klo) - klo) / kspan
            + alpha * (cosine.get(d, clo) - clo) / cspan,
        )
        for d in cand
    ]
    return sorted(scored, key=lambda kv: -kv[1])
