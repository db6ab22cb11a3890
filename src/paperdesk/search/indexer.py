"""Keeping the search indexes current: `update_index(store)` (incremental) and `reindex`.

Called by ingest/resolve after they change records or works, and by `paperdesk reindex`.
Two phases, each resumable after a crash or Ctrl-C:

1. keyword: works whose records changed since the last run (checkpoint `search.seq` on the
   records' change counter) are rebuilt as `SearchDoc`s; a work whose content hash is
   unchanged is skipped. A docno is first recorded with a `pending:` hash, then the
   tantivy commit happens, then the real hash — so a crash in between only means the work
   is re-added next time (delete + add is idempotent).
2. vectors: every indexed work without a vector for the current embedder is embedded in
   batches (progress bar), each batch stored in SQLite in one transaction and added to the
   HNSW file, which is saved every few batches. A text already embedded for another work
   (same content hash) reuses that vector.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from paperdesk.model import SourceRecord
from paperdesk.progress import progress
from paperdesk.search.document import SearchDoc, doc_from_records, index_text
from paperdesk.search.embed import content_hash, doc_text
from paperdesk.search.engine import SearchIndex, index_dir
from paperdesk.search.vectors import VectorIndex
from paperdesk.store.base import Store

CHECKPOINT = "search.seq"
WORKS_CHECKPOINT = "search.works_updated_at"
KEYWORD_BATCH = 5_000
EMBED_BATCH = 512
SAVE_EVERY = 20  # embedding batches between saves of the HNSW file
EMBED_SENTENCES: int | None = None
"""Truncate abstracts to this many sentences before embedding (None = whole abstract)."""


@dataclass
class IndexReport:
    works_seen: int = 0
    works_indexed: int = 0
    works_unchanged: int = 0
    vectors_computed: int = 0
    vectors_reused: int = 0
    works_removed: int = 0
    seconds: float = 0.0


def works_of(store: Store, records: Sequence[SourceRecord]) -> dict[str, list[SourceRecord]]:
    """Group records into works with all their members: resolved records under their
    work id (`W<n>`, every record of that work fetched), the rest as works of their own
    (work id = record key) until resolve runs."""
    if not store.search.has_works():
        return {r.key: [r] for r in records}
    members = store.search.work_members([r.key for r in records])
    resolved = {k for ks in members.values() for k in ks}
    have = {r.key: r for r in records}
    missing = [k for k in resolved if k not in have]
    if missing:
        have.update(store.get_records(missing))
    out = {w: [have[k] for k in ks if k in have] for w, ks in members.items()}
    for r in records:
        if r.key not in resolved:
            out[r.key] = [r]
    return out


def _changed_batches(store: Store, after_seq: int, size: int) -> Iterator[tuple[int, list[SourceRecord]]]:
    """Batches of changed records, each with the checkpoint that is safe once it is indexed.

    One ingest write gives thousands of records the same seq, so a batch can end inside a
    seq: its checkpoint is then the seq before (the next run re-reads that seq's records
    and skips the ones already indexed by their unchanged hash)."""
    batch: list[SourceRecord] = []
    last = after_seq
    for seq, rec in store.iter_changed(after_seq):
        if len(batch) >= size:
            yield (last - 1 if seq == last else last), batch
            batch = []
        batch.append(rec)
        last = seq
    if batch:
        yield last, batch


def _index_keyword(ix: SearchIndex, docs: list[SearchDoc], report: IndexReport) -> None:
    repo = ix.store.search
    known = repo.doc_hashes([d.work_id for d in docs])
    hashed = [(d, d.content_hash()) for d in docs]
    changed = [(d, h) for d, h in hashed if known.get(d.work_id, (0, ""))[1] != h]
    report.works_unchanged += len(docs) - len(changed)
    if not changed:
        return
    with ix.store.transaction():
        docnos = repo.upsert_docs([(d.work_id, "pending:" + h) for d, h in changed])
    kw = ix.keyword
    for d, _ in changed:
        n = docnos[d.work_id]
        if d.work_id in known:
            kw.delete(n)
        kw.add(n, d)
    kw.commit()
    name = ix.embedder_name
    have = repo.vector_hashes(name, [docnos[d.work_id] for d, _ in changed])
    with ix.store.transaction():
        repo.upsert_docs([(d.work_id, h) for d, h in changed])
        stale = [
            docnos[d.work_id]
            for d, _ in changed
            if docnos[d.work_id] in have
            and have[docnos[d.work_id]] != content_hash(embed_text(index_text(d.title), index_text(d.abstract)), name)
        ]
        repo.delete_vectors(stale)
    report.works_indexed += len(changed)


def embed_text(title: str, abstract: str) -> str:
    """The text a work's vector is computed from, given the *indexed* (LaTeX-reduced)
    title and abstract — the same inputs at indexing time and when resuming from the
    keyword index's stored fields, so the text hash of an unchanged work never changes."""
    return doc_text(title, abstract, EMBED_SENTENCES)


def _bar(show: bool, **kw: Any) -> Any:
    return progress(**kw) if show else tqdm(disable=True)


def _missing_vectors(ix: SearchIndex) -> list[int]:
    have = ix.store.search.vector_hashes(ix.embedder_name)
    return [d for d in ix.store.search.all_docnos() if d not in have]


def _sync_ann(ix: SearchIndex) -> VectorIndex:
    """The HNSW file made to hold every stored vector: rebuilt from them when it is missing
    or stale (a run that died between saving vectors and saving the file). Only the indexer
    does this; readers and queries use the file as saved."""
    vec = ix.vectors
    stored = ix.store.search.count_vectors(ix.embedder_name)
    if len(vec) != stored:
        vec.clear()
        for keys, mat in ix.store.search.iter_vectors(ix.embedder_name):
            vec.add(keys, mat)
        vec.save()
    return vec


def _embed(ix: SearchIndex, report: IndexReport, show: bool) -> None:
    vec = _sync_ann(ix)
    missing = _missing_vectors(ix)
    if not missing:
        return
    repo = ix.store.search
    name = ix.embedder_name
    with _bar(show, total=len(missing), desc="embedding", unit="work") as bar:
        for i in range(0, len(missing), EMBED_BATCH):
            chunk = missing[i : i + EMBED_BATCH]
            stored = ix.keyword.by_docno(chunk)
            keys, texts, hashes = [], [], []
            for d in chunk:
                if d not in stored:
                    continue
                f = stored[d][1]
                t = embed_text((f.get("title") or [""])[0], (f.get("abstract") or [""])[0])
                keys.append(d)
                texts.append(t)
                hashes.append(content_hash(t, name))
            reuse = repo.vectors_by_hash(hashes)
            todo = [j for j, h in enumerate(hashes) if h not in reuse]
            mat = np.zeros((len(keys), ix.embedder.dim), dtype=np.float32)
            if todo:
                mat[todo] = ix.embedder.encode_docs([texts[j] for j in todo])
            for j, h in enumerate(hashes):
                if h in reuse:
                    mat[j] = reuse[h]
            with ix.store.transaction():
                repo.put_vectors(name, zip(keys, hashes, mat, strict=True))
            vec.add(np.asarray(keys, dtype=np.uint64), mat)
            report.vectors_computed += len(todo)
            report.vectors_reused += len(keys) - len(todo)
            bar.update(len(chunk))
            if (i // EMBED_BATCH) % SAVE_EVERY == SAVE_EVERY - 1:
                vec.save()
    vec.save()


def _works_changes(ix: SearchIndex, report: IndexReport) -> None:
    """Works merged, split or curated since the last run, and documents left orphaned."""
    store = ix.store
    stamp = str(store.get_checkpoint(WORKS_CHECKPOINT) or "")
    keys, newest = store.search.works_updated_after(stamp)
    for i in range(0, len(keys), KEYWORD_BATCH):
        recs = list(store.get_records(keys[i : i + KEYWORD_BATCH]).values())
        docs = [doc_from_records(w, rs) for w, rs in works_of(store, recs).items()]
        report.works_seen += len(docs)
        _index_keyword(ix, docs, report)
    store.set_checkpoint(WORKS_CHECKPOINT, newest)


def _remove_orphans(ix: SearchIndex, report: IndexReport) -> None:
    """Drop documents of works merged away (after embedding, so their vectors could be
    reused by the surviving works with the same text)."""
    store = ix.store
    orphans = store.search.orphan_docnos()
    if orphans:
        for d in orphans:
            ix.keyword.delete(d)
        ix.keyword.commit()
        with store.transaction():
            store.search.delete_docs(orphans)
        ix.vectors.remove(orphans)
        ix.vectors.save()
        report.works_removed += len(orphans)


def update_index(
    store: Store,
    *,
    embed: bool = True,
    show_progress: bool = True,
    embedder: str | None = None,
    index: SearchIndex | None = None,
) -> IndexReport:
    """Bring the search indexes up to date with the store; cheap when nothing changed.

    Safe to call after every ingest or resolve run. `embed=False` updates only the keyword
    index (vectors then catch up on the next call with embed=True)."""
    import time

    t0 = time.perf_counter()
    ix = index or SearchIndex(store, embedder=embedder)
    report = IndexReport()
    try:
        _keyword_phase(ix, report, show_progress)
        ix.keyword.close()
        ix.write_meta(embedder=ix.embedder_name)
        if embed and ix.semantic_available():
            _embed(ix, report, show_progress)
        if store.search.has_works():
            _remove_orphans(ix, report)
        ix.keyword.close()
    except BaseException:
        ix.keyword.discard()  # uncommitted adds are redone next time (their hash is pending)
        raise
    report.seconds = time.perf_counter() - t0
    return report


def _keyword_phase(ix: SearchIndex, report: IndexReport, show_progress: bool) -> None:
    """Records changed since the checkpoint, then works changed by resolve, into tantivy."""
    store = ix.store
    after = int(store.get_checkpoint(CHECKPOINT) or 0)
    total = store.count_changed(after)
    with _bar(show_progress, total=total, desc="indexing", unit="record") as bar:
        for last, recs in _changed_batches(store, after, KEYWORD_BATCH):
            works = works_of(store, recs)
            docs = [doc_from_records(w, rs) for w, rs in works.items()]
            report.works_seen += len(docs)
            _index_keyword(ix, docs, report)
            store.set_checkpoint(CHECKPOINT, last)
            bar.update(len(recs))
    if store.search.has_works():
        _works_changes(ix, report)


def reindex(
    store: Store, *, embed: bool = True, show_progress: bool = True, embedder: str | None = None
) -> IndexReport:
    """Rebuild the index files from scratch (docnos and stored vectors are kept: unchanged
    texts are not embedded again).

    Built beside the live files (`<db>.index.new`) and swapped in when complete: a running
    web server keeps searching the old files meanwhile, and picks up the new ones when
    they are in place (it never waits for the rebuild nor sees a half-built index)."""
    import shutil

    path = index_dir(store.path)
    fresh = path.with_name(path.name + ".new")
    if fresh.exists():
        shutil.rmtree(fresh)  # a reindex killed before its swap
    with store.transaction():
        store.search.reset_hashes()
    store.set_checkpoint(CHECKPOINT, 0)
    store.set_checkpoint(WORKS_CHECKPOINT, "")
    ix = SearchIndex(store, path=fresh, embedder=embedder)
    report = update_index(store, embed=embed, show_progress=show_progress, index=ix)
    old = path.with_name(path.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if path.exists():
        path.rename(old)
    fresh.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return report
