"""Search over works: keyword (BM25 in tantivy), semantic (embeddings + usearch HNSW) and
hybrid (the default), with facets, "related to this text" and "similar to this work".

Library API:

    from paperdesk.search import SearchIndex, update_index
    update_index(store)                       # after ingest / resolve: incremental
    ix = SearchIndex(store)
    ix.search('cat:cs.CL year:2024.. "retrieval augmented"', mode="hybrid", limit=20)
    ix.related("pasted abstract …"); ix.similar("W123", since="2024")
"""

from paperdesk.search.engine import Hit, SearchIndex, SearchResult
from paperdesk.search.indexer import IndexReport, reindex, update_index
from paperdesk.search.query import parse_query

__all__ = [
    "Hit", "IndexReport", "SearchIndex", "SearchResult", "parse_query", "reindex", "update_index",
]
