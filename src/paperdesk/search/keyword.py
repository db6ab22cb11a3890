"""The keyword index: BM25 in tantivy, fed our parsed query tree.

Why tantivy: at 1M documents it answered in ~1.6 ms p50 here where SQLite FTS5 needed 13 ms
(and 341 ms for OR queries) — see docs/benchmarks.md. Our parser (`query.py`) builds the
tree and this module turns it into tantivy `Query` objects term by term, analysing words
with the same analyser the index uses, so tantivy's own parser (and its error messages)
is never involved.

Scoring: each free word is a BM25 disjunction over title (boost `TITLE_BOOST`), abstract
and author names. Subjects, sources, years and dates are exact filters (raw/fast fields)
that also feed the facet counts; they add nothing to a score (a `cat:` term used to add its
own BM25, which favoured papers with fewer categories), so a filtered query ranks what
passes exactly as the unfiltered one does — which `filtered.py` relies on.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy
from tantivy import (
    Document,
    Filter,
    Index,
    Occur,
    Query,
    SchemaBuilder,
    TextAnalyzerBuilder,
    Tokenizer,
)

from paperdesk.errors import QueryError
from paperdesk.search.document import SearchDoc, index_text
from paperdesk.search.query import Bool, Node, Phrase, Source, Subject, Term, YearRange

FILTER_NODES = (Subject, YearRange, Source)
"""Query parts that only filter: they score 0 and can be checked per document."""

TITLE_BOOST = 0.3
"""Extra weight of a title match on top of the `text` field (title + abstract as one BM25
field). Measured on SciFact (bench/search_quality.py): separate title/abstract fields with
the title boosted 2.5x gave nDCG@10 0.758, one combined field 0.857, combined + title 0.3x
0.861 (bm25s: 0.858) — summing per-field BM25 double-counts a word found in both."""
AUTHOR_BOOST = 1.0
TEXT_ANALYZER = "pd_en"
NAME_ANALYZER = "pd_name"
WRITER_HEAP = 256_000_000
"""Bytes a segment may use in memory before tantivy writes it out (one thread)."""
MAX_PREFIX_TERMS = 200  # tantivy's regex query is bounded by the automaton; keep it sane


def _text_analyzer() -> Any:
    return (
        TextAnalyzerBuilder(Tokenizer.simple())
        .filter(Filter.remove_long(40))
        .filter(Filter.lowercase())
        .filter(Filter.ascii_fold())
        .filter(Filter.stopword("english"))
        .filter(Filter.stemmer("english"))
        .build()
    )


def _name_analyzer() -> Any:
    return (
        TextAnalyzerBuilder(Tokenizer.simple())
        .filter(Filter.remove_long(40))
        .filter(Filter.lowercase())
        .filter(Filter.ascii_fold())
        .build()
    )


def _schema() -> Any:
    sb = SchemaBuilder()
    sb.add_integer_field("docno", stored=True, indexed=True, fast=True)
    sb.add_text_field("work_id", stored=True, tokenizer_name="raw")
    sb.add_text_field("keys", stored=True, tokenizer_name="raw")
    sb.add_text_field("title", stored=True, tokenizer_name=TEXT_ANALYZER)
    sb.add_text_field("abstract", stored=True, tokenizer_name=TEXT_ANALYZER)
    sb.add_text_field("text", tokenizer_name=TEXT_ANALYZER)  # title + abstract, one BM25 field
    sb.add_text_field("authors", stored=True, tokenizer_name=NAME_ANALYZER)
    sb.add_text_field("subject", stored=True, fast=True, tokenizer_name="raw")
    sb.add_text_field("subject_orig", stored=True, tokenizer_name="raw")
    sb.add_text_field("archive", fast=True, tokenizer_name="raw")
    sb.add_text_field("source", stored=True, fast=True, tokenizer_name="raw")
    sb.add_integer_field("year", stored=True, indexed=True, fast=True)
    sb.add_integer_field("date", stored=True, indexed=True, fast=True)
    return sb.build()


_ARXIV_CODE = re.compile(r"^[a-z\-]+(\.[a-z\-]+)?$", re.I)


def subject_terms(subjects: Iterable[str]) -> tuple[list[str], list[str]]:
    """(lower-cased codes, archives): `cs.CV` → code `cs.cv`, archive `cs`."""
    codes, archives = [], []
    for s in subjects:
        c = s.strip().lower()
        if not c:
            continue
        codes.append(c)
        if "." in c and _ARXIV_CODE.match(c):
            archives.append(c.split(".", 1)[0])
        elif _ARXIV_CODE.match(c):
            archives.append(c)
    return codes, sorted(set(archives))


@dataclass
class KeywordHit:
    docno: int
    score: float
    address: Any
    """Valid in the searcher that found the hit (`KeywordIndex.stored` with that searcher)."""


class KeywordIndex:
    """A tantivy index in a directory; one writer at a time (tantivy locks it)."""

    def __init__(self, path: Path, create: bool = False):
        self.path = path
        self.schema = _schema()
        if create and path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True, exist_ok=True)
        self.index = Index(self.schema, path=str(path), reuse=not create)
        self.analyzer = _text_analyzer()
        self.names = _name_analyzer()
        self.index.register_tokenizer(TEXT_ANALYZER, self.analyzer)
        self.index.register_tokenizer(NAME_ANALYZER, self.names)
        self._writer: Any = None
        self._searcher: Any = None
        self._stamp: tuple[int, int, int] | None = None
        self._meta = str(path / "meta.json")
        self.cache: dict[Any, Any] = {}
        """What was computed for the current searcher (filter masks); emptied with it."""

    # -- writing ---------------------------------------------------------------------
    def writer(self) -> Any:
        """One writer for a whole indexing run, kept across commits (`close` ends it).

        One indexing thread: the Python thread assembling documents is the other core's
        work, and a second tantivy thread only adds segments to merge. The heap is what a
        segment may grow to before tantivy flushes it on its own."""
        if self._writer is None:
            self._writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
        return self._writer

    def add(self, docno: int, doc: SearchDoc) -> None:
        codes, archives = subject_terms(doc.subjects)
        title = index_text(doc.title)
        abstract = index_text(doc.abstract)
        self.writer().add_document(
            Document(
                docno=docno,
                work_id=doc.work_id,
                keys=doc.keys,
                title=title,
                abstract=abstract,
                text=f"{title} \n {abstract}",
                authors="; ".join(doc.authors),
                subject=codes,
                subject_orig=doc.subjects,
                archive=archives,
                source=doc.sources,
                year=doc.year or 0,
                date=doc.date_int,
            )
        )

    def delete(self, docno: int) -> None:
        self.writer().delete_documents_by_term("docno", docno)

    def commit(self) -> None:
        """Publish and persist what was added; the writer stays open for the next batch
        (a new writer per batch cost a fresh heap and a wait for every merge)."""
        if self._writer is not None:
            self._writer.commit()
        self.index.reload()

    def close(self) -> None:
        """Commit, let background merges finish and release tantivy's writer lock."""
        if self._writer is not None:
            self._writer.commit()
            self._writer.wait_merging_threads()
            self._writer = None
        self.index.reload()

    def discard(self) -> None:
        """Drop what was added since the last commit and release the writer lock."""
        if self._writer is not None:
            self._writer.rollback()
            self._writer = None

    # -- query translation -------------------------------------------------------------
    def _tokens(self, text: str, fieldname: str | None) -> list[str]:
        an = self.names if fieldname == "authors" else self.analyzer
        return [t for t in an.analyze(index_text(text)) if t]

    def _fields(self, fieldname: str | None) -> list[tuple[str, float]]:
        if fieldname is None:
            return [("text", 1.0), ("title", TITLE_BOOST), ("authors", AUTHOR_BOOST)]
        return [(fieldname, 1.0)]

    def _positioned(self, text: str, fieldname: str | None) -> list[tuple[int, str]]:
        """(position, token): stop words leave gaps in the index, so phrase words keep
        their real offsets (`"point and text"` matches only with `and` between them)."""
        if fieldname == "authors":
            return list(enumerate(self.names.analyze(index_text(text))))
        out = []
        for i, raw in enumerate(self.names.analyze(index_text(text))):
            stem = self.analyzer.analyze(raw)
            if stem:
                out.append((i, stem[0]))
        return out

    def _field_query(self, f: str, boost: float, tokens: list[tuple[int, str]]) -> Any:
        q = (
            Query.term_query(self.schema, f, tokens[0][1], index_option="freq")
            if len(tokens) == 1
            else Query.phrase_query(self.schema, f, list[str | tuple[int, str]](tokens))
        )
        return Query.boost_query(q, boost) if boost != 1.0 else q

    def _word_parts(self, text: str, fieldname: str | None) -> list[Any]:
        """One query per field the words are searched in (none for stop words only)."""
        parts = []
        for f, boost in self._fields(fieldname):
            toks = self._positioned(text, f)
            if toks:
                parts.append(self._field_query(f, boost, toks))
        return parts

    def _words(self, text: str, fieldname: str | None) -> Any:
        parts = self._word_parts(text, fieldname)
        if not parts:
            return Query.empty_query()
        return parts[0] if len(parts) == 1 else Query.boolean_query([(Occur.Should, p) for p in parts])

    def _prefix(self, t: Term) -> Any:
        parts = []
        for f, boost in self._fields(t.field):
            core = self._tokens(t.text, f)
            raw = [x for x in self.names.analyze(index_text(t.text)) if x]
            if len(raw) != 1:
                raise QueryError(f"'{t.text}*': a prefix must be a single word")
            pats = {re.escape(raw[0]) + ".*"}
            if core and core[0] != raw[0]:
                pats.add(re.escape(core[0]) + ".*")
            for p in sorted(pats):
                q = Query.regex_query(self.schema, f, p)
                parts.append(Query.boost_query(q, boost) if boost != 1.0 else q)
        return Query.boolean_query([(Occur.Should, p) for p in parts])

    def translate(self, node: Node) -> Any:
        """Our query tree → a tantivy Query (raises QueryError for what cannot run)."""
        if isinstance(node, Term):
            return self._prefix(node) if node.prefix else self._words(node.text, node.field)
        if isinstance(node, Phrase):
            return self._words(node.text, node.field)
        if isinstance(node, FILTER_NODES):
            return Query.const_score_query(self._filter(node), 0.0)
        if isinstance(node, Bool):
            clauses = [(Occur.Must, self.translate(n)) for n in node.must]
            for n in node.should:
                # Optional words go in flat, one clause per (field, word), not one nested
                # boolean per word: the sum of scores is the same, but tantivy can then
                # skip documents that cannot reach the top k (block-max WAND) — 1.8x less
                # CPU at 1M works (9.1 → 5.1 ms), the same top 20 on 100 queries.
                if isinstance(n, Phrase) or (isinstance(n, Term) and not n.prefix):
                    parts = self._word_parts(n.text, n.field) or [Query.empty_query()]
                    clauses += [(Occur.Should, q) for q in parts]
                else:
                    clauses.append((Occur.Should, self.translate(n)))
            clauses += [(Occur.MustNot, self.translate(n)) for n in node.must_not]
            if not node.must and not node.should:
                clauses.append((Occur.Must, Query.all_query()))
            return Query.boolean_query(clauses)
        raise QueryError(f"unsupported query part {node!r}")  # pragma: no cover

    def _filter(self, node: YearRange | Source | Subject) -> Any:
        if isinstance(node, YearRange):
            return Query.range_query(self.schema, "year", tantivy.FieldType.Integer, node.lo, node.hi)
        if isinstance(node, Source):
            return Query.term_query(self.schema, "source", node.name)
        if node.prefix:
            core = node.code.rstrip(".")
            if "." not in core:  # cat:cs.* or cat:cs*  → the archive
                if node.code.endswith("."):
                    return Query.term_query(self.schema, "archive", core)
                return Query.regex_query(self.schema, "subject", re.escape(core) + ".*")
            return Query.regex_query(self.schema, "subject", re.escape(node.code) + ".*")
        return Query.term_query(self.schema, "subject", node.code)

    def highlight_query(self, node: Node) -> Any | None:
        """The query's positive words and phrases on the stored `abstract` field — what a
        snippet highlights. (Ranking searches the combined `text` field, which is not
        stored, so its terms would never match the snippet's text.)"""
        parts: list[Any] = []

        def walk(n: Node, negated: bool) -> None:
            if isinstance(n, Term | Phrase):
                if negated or getattr(n, "prefix", False) or n.field not in (None, "abstract"):
                    return
                toks = self._positioned(n.text, "abstract")
                if toks:
                    parts.append(self._field_query("abstract", 1.0, toks))
            elif isinstance(n, Bool):
                for c in [*n.must, *n.should]:
                    walk(c, negated)
                for c in n.must_not:
                    walk(c, True)

        walk(node, False)
        if not parts:
            return None
        return Query.boolean_query([(Occur.Should, p) for p in parts])

    # -- reading ---------------------------------------------------------------------
    def searcher(self) -> Any:
        """The searcher of the latest commit, kept while no commit follows.

        Kept so that what is cached for it (`cache`: filter masks by docno) stays true
        for every document it returns; a commit by any process rewrites `meta.json`
        (atomically: a new inode), which is checked on each call — a stat, ~µs."""
        try:
            st = os.stat(self._meta)
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if self._searcher is not None and stamp is None:
            return self._searcher  # the files are being swapped (`reindex`): keep these
        if self._searcher is None or stamp != self._stamp:
            self.index.reload()
            self._searcher = self.index.searcher()
            self._stamp = stamp
            self.cache.clear()
        return self._searcher

    def cache_for(self, searcher: Any) -> dict[Any, Any]:
        """What is computed for `searcher` is cached while it is the current searcher."""
        return self.cache if searcher is self._searcher else {}

    def num_docs(self) -> int:
        return int(self.searcher().num_docs)

    def search(
        self,
        query: Any,
        limit: int,
        offset: int = 0,
        sort: str = "relevance",
        count: bool = True,
        searcher: Any = None,
    ) -> tuple[list[KeywordHit], int | None]:
        """Top hits and, with `count`, how many documents match (None without).

        Counting visits every match: tantivy then cannot skip the documents that cannot
        reach the top `limit` (block-max WAND), so only count when the caller shows it."""
        s = searcher or self.searcher()
        if sort == "date":
            res = s.search(query, limit, count=count, order_by_field="date", offset=offset)
        else:
            res = s.search(query, limit, count=count, offset=offset)
        addrs = [a for _, a in res.hits]
        docnos = s.fast_field_values("docno", addrs) if addrs else []
        hits = [
            KeywordHit(int(d), float(sc) if sort != "date" else 0.0, a)
            for (sc, a), d in zip(res.hits, docnos, strict=True)
        ]
        return hits, (int(res.count or 0) if count else None)

    def docnos(self, query: Any, limit: int) -> list[int]:
        """Doc numbers matching a (filter) query, up to `limit` — for filtered vector search."""
        if limit <= 0:
            return []
        s = self.searcher()
        res = s.search(query, limit, count=False)
        addrs = [a for _, a in res.hits]
        return [int(d) for d in s.fast_field_values("docno", addrs)] if addrs else []

    def count(self, query: Any) -> int:
        return int(self.searcher().search(query, 1, count=True).count or 0)

    def stored(self, addrs: Sequence[Any], searcher: Any = None) -> list[dict[str, Any]]:
        """Stored fields by address (give the searcher the addresses came from)."""
        s = searcher or self.searcher()
        return [s.doc(a).to_dict() for a in addrs]

    def by_docno(
        self, docnos: Sequence[int], searcher: Any = None
    ) -> dict[int, tuple[Any, dict[str, Any]]]:
        """Stored fields of documents found by number (semantic hits need their titles)."""
        if not docnos:
            return {}
        s = searcher or self.searcher()
        q = Query.term_set_query(self.schema, "docno", list(docnos))
        res = s.search(q, len(docnos), count=False)
        out = {}
        for _, a in res.hits:
            d = s.doc(a).to_dict()
            out[int(d["docno"][0])] = (a, d)
        return out

    def snippets(self, query: Any, max_chars: int = 240, searcher: Any = None) -> Any:
        """A function address → (fragment of the abstract around the matches, highlight
        ranges in it); the generator is built once per query, not once per hit."""
        s = searcher or self.searcher()
        gen = tantivy.SnippetGenerator.create(s, query, self.schema, "abstract")
        gen.set_max_num_chars(max_chars)

        def one(address: Any) -> tuple[str, list[tuple[int, int]]]:
            snip = gen.snippet_from_doc(s.doc(address))
            return snip.fragment(), [(r.start, r.end) for r in snip.highlighted()]

        return one

    def facets(self, query: Any, size: int = 20) -> dict[str, list[tuple[Any, int]]]:
        """Counts by subject, year and source for everything the query matches."""
        agg = {
            "subject": {"terms": {"field": "subject", "size": size}},
            "year": {"terms": {"field": "year", "size": 200}},
            "source": {"terms": {"field": "source", "size": size}},
        }
        res = self.searcher().aggregate(query, agg)
        out: dict[str, list[tuple[Any, int]]] = {}
        for k in ("subject", "year", "source"):
            buckets = res.get(k, {}).get("buckets", [])
            out[k] = [(b["key"], int(b["doc_count"])) for b in buckets if b["key"] not in (0, "")]
        out["year"].sort(key=lambda kv: -int(kv[0]))
        return out
