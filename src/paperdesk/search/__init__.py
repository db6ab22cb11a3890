"""Search over works: keyword (BM25 in tantivy), semantic (embeddings + usearch HNSW) and
hybrid (the default), with facets, "related to this text" and "similar to this work".

Library API:

    from paperdesk.search import SearchIndex, update_index
    update_index(store)                       # after ingest / resolve: incremental
    ix = SearchIndex(store)
    ix.search('cat:cs.CL year:2024.. "retrieval augmented"', mode="hybrid", limit=20)
    ix.related("pasted abstract …"); ix.similar("W123", since="2024")

The names are imported when first used (PEP 562), not with the package: a submodule such
as `search.embed` (the vector model's name, for `paperdesk recommend`) must not pull in
tantivy, usearch and tqdm.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paperdesk.search.engine import Hit, SearchIndex, SearchResult
    from paperdesk.search.indexer import IndexReport, reindex, update_index
    from paperdesk.search.query import parse_query

_WHERE = {
    "Hit": "engine", "SearchIndex": "engine", "SearchResult": "engine",
    "IndexReport": "indexer", "reindex": "indexer", "update_index": "indexer",
    "parse_query": "query",
}  # fmt: skip

__all__ = [
    "Hit", "IndexReport", "SearchIndex", "SearchResult", "parse_query", "reindex", "update_index",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"paperdesk.search.{where}"), name)
    globals()[name] = value
    return value
