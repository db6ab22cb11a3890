"""Filtered keyword search that keeps tantivy's top-k pruning.

`cat:cs.CV diffusion models` is a ranked part (the words) and filters that score nothing
(`keyword.FILTER_NODES`: subject, year, source). Handed to tantivy as one query, each
filter is a required clause, and a required clause switches off block-max WAND (skipping
documents that cannot reach the top k: it only runs on a pure disjunction), so every
document that passes the filter and has one of the words gets scored — ~12 ms CPU per
query at 1M works against ~5 for the words alone.

Instead the words are ranked alone, with pruning, somewhat deeper than asked (by the share
of the index the filter passes), and the hits that pass the filter are kept: a boolean
array by docno, built once per filter and index generation (`filter_mask`), answers that.
Building it reads every passing document's number (~0.3 s for 370k of 1M works), so it is
built on a filter's second use; the first runs the exact query.
Filters add no score, so the filtered ranking is the unfiltered ranking with the failing
documents taken out, and the first k passing hits of the unfiltered top K are exactly the
filtered top k. When fewer than k pass, the ranking is redone at MAX_DEPTH, then the exact
query runs; a filter too selective to be worth it goes to the exact query at
once, and a filter that passes every document is dropped.

Only for callers that do not need the number of matches: counting visits every match,
which is what pruning avoids, so `count=True` runs the exact query (one pass gives both).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
from tantivy import Occur, Query

from paperdesk.search.keyword import FILTER_NODES, KeywordHit, KeywordIndex
from paperdesk.search.query import Bool, Node

MAX_DEPTH = 2_000
"""Deepest unfiltered ranking tried before the exact query."""
OVERFETCH = 8.0
"""First depth = wanted hits / the filter's share x this. Hits are not spread evenly (a
query's words pick papers of some subjects more than others), and ranking deeper costs
little beside ranking twice: at 1M works top-20 takes ~4 ms, top-2,000 ~6.5 ms. Measured
at 1M on the benchmark's filtered queries: x1.5 / x3 / x6 / x10 / x20 gave 8.6 / 8.0 /
7.4 / 6.7 / 7.4 ms CPU at the median (loaded machine)."""
MAX_MASKS = 32
"""Filter masks kept per index generation (one byte per docno each: 1 MB at 1M works)."""

stats: Counter[str] = Counter()
"""How filtered queries were answered, by path (read by the benchmark and the tests)."""


@dataclass(frozen=True)
class FilteredQuery:
    """A ranked part that must pass required filters and no excluded ones."""

    ranked: Node
    required: tuple[Node, ...]
    excluded: tuple[Node, ...]


@dataclass(frozen=True)
class FilterMask:
    passing: np.ndarray | None
    """True at the docnos that pass; None when every document passes."""
    share: float
    """Fraction of the index's documents that pass."""
    count: int
    """How many documents pass."""
    exact: bool
    """Built from the passing documents, so False wherever no document is (a mask
    built from the failing ones, the smaller side, is also True at unused docnos)."""


def split_filters(node: Node) -> FilteredQuery | None:
    """The ranked part and the filters of `filters… words` / `words -filter`, or None
    for any other shape (which then runs as one exact query)."""
    if not isinstance(node, Bool) or not all(isinstance(n, FILTER_NODES) for n in node.must_not):
        return None
    required = tuple(n for n in node.must if isinstance(n, FILTER_NODES))
    rest = [n for n in node.must if not isinstance(n, FILTER_NODES)]
    ranked: Node
    if node.should and not node.must:
        ranked = Bool(should=list(node.should))  # at least one of them, as without filters
    elif len(rest) == 1 and not node.should:
        ranked = rest[0]
    else:
        return None
    if not required and not node.must_not:
        return None
    return FilteredQuery(ranked, required, tuple(node.must_not))


def filter_only(node: Node) -> FilteredQuery | None:
    """A query made of filters only (`cat:cs.CV year:2025`, `-cat:cs.CL`) as a
    FilteredQuery with nothing ranked, or None."""
    if isinstance(node, FILTER_NODES):
        return FilteredQuery(Bool(), (node,), ())
    if (
        isinstance(node, Bool)
        and not node.should
        and (node.must or node.must_not)
        and all(isinstance(n, FILTER_NODES) for n in [*node.must, *node.must_not])
    ):
        return FilteredQuery(Bool(), tuple(node.must), tuple(node.must_not))
    return None


def filter_mask(
    kw: KeywordIndex, fq: FilteredQuery, searcher: Any, note: bool = True
) -> FilterMask | None:
    """Which docnos pass the filters in the generation of `searcher`, cached with it while
    it is the index's current searcher; None on the filter's first use in it, which is
    noted (unless `note` is False: a hybrid query's vector side leaves that to its
    keyword side) so that the next use builds the mask: ~0.3 s for a filter passing 370k
    of 1M works."""
    cache = kw.cache_for(searcher)
    key = ("filter", fq.required, fq.excluded)
    if key not in cache:
        if note:
            masks = [k for k in cache if isinstance(k, tuple) and k[:1] == ("filter",)]
            if len(masks) >= MAX_MASKS:
                del cache[masks[0]]  # the oldest (dicts keep insertion order)
            cache[key] = None
        return None
    got: FilterMask | None = cache[key]
    if got is None:
        got = cache[key] = _build_mask(kw, fq, searcher)
    return got


def _build_mask(kw: KeywordIndex, fq: FilteredQuery, s: Any) -> FilterMask:
    clauses = [(Occur.Must, kw.translate(n)) for n in fq.required]
    clauses += [(Occur.MustNot, kw.translate(n)) for n in fq.excluded]
    if not fq.required:
        clauses.append((Occur.Must, Query.all_query()))
    q = Query.boolean_query(clauses)
    total = int(s.num_docs)
    n = int(s.search(q, 1, count=True).count or 0)
    if n == total:
        return FilterMask(None, 1.0, n, False)
    size = int(s.search(Query.all_query(), 1, count=False, order_by_field="docno").hits[0][0]) + 1
    # Collect whichever side is smaller: the passing documents or the failing ones.
    passing = n <= total - n
    side = q if passing else Query.boolean_query([(Occur.Must, Query.all_query()), (Occur.MustNot, q)])
    hits = s.search(side, max(min(n, total - n), 1), count=False, order_by_field="docno").hits
    mask = np.full(size, not passing, dtype=bool)
    mask[np.fromiter((d for d, _ in hits), dtype=np.int64, count=len(hits))] = passing
    return FilterMask(mask, n / max(total, 1), n, passing)


def search(
    kw: KeywordIndex,
    node: Node,
    query: Any,
    limit: int,
    offset: int = 0,
    sort: str = "relevance",
    count: bool = True,
    searcher: Any = None,
) -> tuple[list[KeywordHit], int | None]:
    """`kw.search(query, …)` for `query = kw.translate(node)`, post-filtered where that
    gives the same hits faster (see the module's docstring)."""
    s = searcher or kw.searcher()
    fq = split_filters(node) if sort == "relevance" and not count else None
    if fq is None:
        return kw.search(query, limit, offset, sort, count, s)
    mask = filter_mask(kw, fq, s)
    if mask is None:
        stats["exact: first use of the filter"] += 1
        return kw.search(query, limit, offset, sort, False, s)
    ranked = kw.translate(fq.ranked)
    if mask.passing is None:
        stats["filter passes everything"] += 1
        return kw.search(ranked, limit, offset, sort, False, s)
    need = offset + limit
    depth = int(need / mask.share * OVERFETCH) if mask.share > 0 else MAX_DEPTH + 1
    if depth > MAX_DEPTH:
        stats["exact: selective filter"] += 1  # few pass: the intersection is cheap
        return kw.search(query, limit, offset, sort, False, s)
    depth = max(depth, need)
    for d in (depth, MAX_DEPTH) if depth < MAX_DEPTH else (depth,):
        if d > depth:
            stats["deepened"] += 1
        res = s.search(ranked, d, count=False).hits
        addrs = [a for _, a in res]
        docnos = np.asarray(s.fast_field_values("docno", addrs) if addrs else [], dtype=np.int64)
        ok = np.flatnonzero(mask.passing[docnos])
        if len(ok) >= need or len(res) < d:
            stats["post-filtered"] += 1
            return [KeywordHit(int(docnos[i]), float(res[i][0]), addrs[i]) for i in ok[offset:need]], None
    stats["exact after post-filter"] += 1
    return kw.search(query, limit, offset, sort, False, s)
