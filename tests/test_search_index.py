"""Search on real records: keyword ranking and filters on daily-feed papers, semantic and
hybrid ranking, facets, LaTeX, incremental and resumable indexing, the CLI.

Corpus: 200 records of the real arXiv daily feed (every 20th of the first 4,000 lines, plus
two whose abstracts carry `$\\mathbf{…}$` / `$\\mathrm{…}$`), embedded with the default
static embedder (fast; distilled from MiniLM once per machine and cached).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import open_feed
from paperdesk.cli import main
from paperdesk.errors import NotFoundError, QueryError
from paperdesk.ingest import ingest_paths
from paperdesk.search import SearchIndex, reindex, update_index
from paperdesk.search import engine as search_engine
from paperdesk.search.engine import split_query
from paperdesk.search.query import parse_query
from paperdesk.store import open_store

LATEX_IDS = ("2503.19149", "2506.11750")  # "$\mathbf{Campfire}$", "$\mathrm{ChainX}$"


def _feed_lines() -> list[str]:
    out = []
    with open_feed("rt") as f:
        for n, line in enumerate(f, start=1):
            d = json.loads(line)
            if n > 4000 or d["feed_date"] >= "2026":  # the tests take every paper for 2025's
                break
            if n % 20 == 0 or d["id"] in LATEX_IDS:
                out.append(line)
    return out


@pytest.fixture(scope="module")
def feed() -> list[dict]:
    return [json.loads(x) for x in _feed_lines()]


def _ingest(store, tmp: Path, lines: list[str], name: str) -> None:
    p = tmp / name
    p.write_text("".join(lines), encoding="utf-8")
    ingest_paths(store, [p])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    tmp = Path(tmp_path_factory.mktemp("search"))
    lines = _feed_lines()
    store = open_store(tmp / "pd.db")
    _ingest(store, tmp, lines, "feed.jsonl")
    report = update_index(store, show_progress=False)
    yield store, SearchIndex(store), report
    store.close()


def test_index_builds_one_work_per_record_with_vectors(built, feed) -> None:
    store, ix, report = built
    assert report.works_indexed == len(feed) == 196
    assert report.vectors_computed == len(feed)
    assert store.search.count_vectors(ix.embedder_name) == len(feed)
    assert len(ix.vectors) == len(feed)


def test_exact_title_phrase_ranks_its_paper_first(built, feed) -> None:
    _, ix, _ = built
    for d in feed[:20:4]:
        res = ix.search(f'title:"{d["title"]}"', mode="keyword", limit=3)
        assert res.hits[0].keys == [f"arxiv:{d['id']}"], d["title"]
        res = ix.search(d["title"].replace('"', " "), mode="keyword", limit=3)
        assert res.hits[0].keys == [f"arxiv:{d['id']}"]


def test_author_and_field_filters(built, feed) -> None:
    _, ix, _ = built
    d = feed[7]
    family = d["authors"][0].split()[-1]
    res = ix.search(f"author:{family}", mode="keyword", limit=50)
    assert f"arxiv:{d['id']}" in {k for h in res.hits for k in h.keys}
    assert all(family.lower() in " ".join(h.authors).lower() for h in res.hits)
    res = ix.search("cat:cs.RO", mode="keyword", limit=100)
    assert res.total > 0 and all("cs.RO" in h.subjects for h in res.hits)
    res_arch = ix.search("cat:eess.*", mode="keyword", limit=100)
    assert res_arch.total > 0 and all(any(s.startswith("eess.") for s in h.subjects) for h in res_arch.hits)
    not_cv = ix.search("cat:cs.* -cat:cs.CV", mode="keyword", limit=200)
    assert 0 < not_cv.total < len(feed)
    assert all("cs.CV" not in h.subjects and any(s.startswith("cs.") for s in h.subjects) for h in not_cv.hits)
    assert ix.search("source:arxiv year:2025", mode="keyword").total == len(feed)
    assert ix.search("year:2026..", mode="keyword").total == 0


def test_stop_words_alone_match_nothing_and_beside_a_word_change_nothing(built) -> None:
    """Optional words are flattened into one disjunction per field and word (for
    tantivy's top-k pruning); a word that analyses to nothing must neither match every
    document nor change the ranking of the words beside it."""
    _, ix, _ = built
    assert ix.search("the of", mode="keyword").total == 0
    plain = ix.search("diffusion segmentation", mode="keyword", limit=10)
    padded = ix.search("the diffusion of segmentation", mode="keyword", limit=10)
    assert plain.total > 0
    assert [h.work_id for h in padded.hits] == [h.work_id for h in plain.hits]
    assert [round(h.score, 4) for h in padded.hits] == [round(h.score, 4) for h in plain.hits]


def test_boolean_operators_on_real_abstracts(built) -> None:
    _, ix, _ = built
    a = ix.search("diffusion", mode="keyword", limit=200).total
    b = ix.search("robot", mode="keyword", limit=200).total
    both = ix.search("diffusion AND robot", mode="keyword", limit=200).total
    either = ix.search("diffusion OR robot", mode="keyword", limit=200).total
    without = ix.search("diffusion NOT robot", mode="keyword", limit=200).total
    assert a > 0 and b > 0
    assert either == a + b - both
    assert without == a - both
    pref = ix.search("segment*", mode="keyword", limit=200)
    assert pref.total >= ix.search("segmentation", mode="keyword").total > 0


def test_latex_is_searchable_as_words(built) -> None:
    _, ix, _ = built
    res = ix.search("abstract:Campfire", mode="keyword")
    assert res.total >= 1 and "Campfire" in res.hits[0].title + (res.hits[0].snippet or "")
    assert ix.search("abstract:ChainX", mode="keyword").total >= 1


def test_snippet_highlights_the_match(built) -> None:
    _, ix, _ = built
    h = ix.search("abstract:transformer", mode="keyword", limit=1).hits[0]
    assert h.snippet and h.highlights
    a, b = h.highlights[0]
    assert h.snippet[a:b].lower().startswith("transformer")


def test_facets_count_what_matches(built, feed) -> None:
    _, ix, _ = built
    res = ix.search("cat:cs.CV", mode="keyword", facets=True)
    assert res.facets is not None
    assert dict(res.facets["source"]) == {"arxiv": res.total}
    assert dict(res.facets["subject"])["cs.cv"] == res.total
    assert sum(c for _, c in res.facets["year"]) == res.total


def test_semantic_and_hybrid(built, feed) -> None:
    _, ix, _ = built
    q = "robots learning to grasp objects from demonstrations"
    sem = ix.search(q, mode="semantic", limit=10)
    assert sem.mode == "semantic" and len(sem.hits) == 10
    assert [h.score for h in sem.hits] == sorted((h.score for h in sem.hits), reverse=True)
    assert any("cs.RO" in h.subjects for h in sem.hits[:5])
    hyb = ix.search(q, limit=10)
    assert hyb.mode == "hybrid"
    ranks = [(h.keyword_rank, h.semantic_rank) for h in hyb.hits]
    assert all(k is not None or s is not None for k, s in ranks)
    # Only filters: nothing for the embedder, so hybrid answers as keyword search.
    assert ix.search("cat:cs.RO").mode == "keyword"
    # A filter holds in semantic mode too.
    assert all("cs.RO" in h.subjects for h in ix.search(f"cat:cs.RO {q}", mode="semantic").hits)


def test_related_and_similar(built, feed) -> None:
    _, ix, _ = built
    d = feed[3]
    key = f"arxiv:{d['id']}"
    rel = ix.related(d["summary"], limit=5)
    assert rel.hits[0].keys == [key]
    sim = ix.similar(key, limit=5)
    assert len(sim.hits) == 5 and key not in {k for h in sim.hits for k in h.keys}
    recent = ix.similar(key, limit=5, sort="date")
    dates = [h.date or "" for h in recent.hits]
    assert dates == sorted(dates, reverse=True)
    assert ix.similar(key, limit=5, since="2026").hits == []
    with pytest.raises(NotFoundError):
        ix.similar("arxiv:0000.00000")


def test_split_query_separates_text_from_filters() -> None:
    text, filt = split_query(parse_query('cat:cs.CL "large language" models -survey'))
    assert text == "large language models"
    assert filt is not None


def test_bad_arguments_are_query_errors(built) -> None:
    _, ix, _ = built
    with pytest.raises(QueryError):
        ix.search("x", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(QueryError):
        ix.search("(x")


def test_incremental_update_and_resume(tmp_path: Path, feed) -> None:
    lines = _feed_lines()
    store = open_store(tmp_path / "inc.db")
    _ingest(store, tmp_path, lines[:120], "a.jsonl")
    r1 = update_index(store, show_progress=False)
    assert r1.works_indexed == 120
    assert update_index(store, show_progress=False).works_indexed == 0  # nothing changed
    changed = json.loads(lines[0])
    changed["title"] = "Zyxwvut quokka spectroscopy"
    _ingest(store, tmp_path, [json.dumps(changed) + "\n", *lines[120:150]], "b.jsonl")
    r2 = update_index(store, show_progress=False)
    assert r2.works_indexed == 31 and r2.vectors_computed == 31
    ix = SearchIndex(store)
    assert ix.search("quokka", mode="keyword").hits[0].keys == [f"arxiv:{changed['id']}"]
    assert ix.search(f'title:"{json.loads(lines[0])["title"]}"', mode="keyword").total == 0
    # A crash that lost vectors and the ANN file: the next run computes only what is missing.
    docnos = store.search.all_docnos()[:7]
    store.conn.executemany("DELETE FROM search_vectors WHERE docno = ?", [(d,) for d in docnos])
    (ix.path / "vectors.usearch").unlink()
    r3 = update_index(store, show_progress=False)
    assert r3.vectors_computed == 7 and r3.works_indexed == 0
    ix = SearchIndex(store)
    assert len(ix.vectors) == 150
    # reindex rebuilds the files and reuses every stored vector.
    r4 = reindex(store, show_progress=False)
    assert r4.works_indexed == 150 and r4.vectors_computed == 0 and r4.vectors_reused == 0
    assert len(SearchIndex(store).vectors) == 150
    store.close()


def test_interrupted_run_releases_the_writer_and_the_next_run_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One tantivy writer serves every batch of a run; a run that dies between batches
    must still release its lock, and the next run indexes what the failed one did not."""
    from paperdesk.search import indexer

    store = open_store(tmp_path / "crash.db")
    _ingest(store, tmp_path, _feed_lines()[:120], "a.jsonl")
    monkeypatch.setattr(indexer, "KEYWORD_BATCH", 50)
    real, calls = indexer.doc_from_records, {"n": 0}

    def dies_in_third_batch(work_id, records):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] > 100:
            raise KeyboardInterrupt
        return real(work_id, records)

    monkeypatch.setattr(indexer, "doc_from_records", dies_in_third_batch)
    with pytest.raises(KeyboardInterrupt):
        update_index(store, embed=False, show_progress=False)
    assert SearchIndex(store).keyword.num_docs() == 100  # two committed batches
    monkeypatch.setattr(indexer, "doc_from_records", real)
    r = update_index(store, embed=False, show_progress=False)  # would fail on a held lock
    assert r.works_indexed == 20
    ix = SearchIndex(store)
    assert ix.keyword.num_docs() == 120
    assert ix.search("source:arxiv", mode="keyword", limit=200).total == 120
    store.close()


def test_ann_recall_against_exact(built) -> None:
    store, ix, _ = built
    keys, mats = zip(*store.search.iter_vectors(ix.embedder_name), strict=True)
    k = np.concatenate(keys)
    m = np.vstack(mats)
    hits = 0
    for i in range(0, len(k), 10):
        exact = set(k[np.argsort(-(m @ m[i]))[:10]].tolist())
        got, _ = ix.vectors.search(m[i], 10)
        hits += len(exact & set(got.tolist()))
    assert hits / (10 * len(range(0, len(k), 10))) >= 0.95


def test_cli(built, tmp_path: Path, feed) -> None:
    store, _, _ = built
    run = CliRunner().invoke
    db = ["--db", store.path]
    r = run(main, [*db, "search", "robot grasping", "--json", "--limit", "3"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["mode"] == "hybrid" and len(out["hits"]) == 3
    assert {"work_id", "keys", "title", "authors", "year", "subjects", "score", "snippet"} <= set(out["hits"][0])
    counted = out
    r = run(main, [*db, "search", "robot grasping", "--json", "--limit", "3", "--no-count"])
    out = json.loads(r.output)
    assert out["total"] is None and counted["total"] >= 3  # same hits, matches not counted
    assert [h["work_id"] for h in out["hits"]] == [h["work_id"] for h in counted["hits"]]
    r = run(main, [*db, "search", "cat:cs.RO robot", "--mode", "keyword", "--no-count"])
    assert r.exit_code == 0 and "(not counted)" in r.output.splitlines()[0]
    r = run(main, [*db, "search", "title:(unclosed"])
    assert r.exit_code == 1 and "unclosed '('" in r.output
    qf = tmp_path / "q.txt"
    qf.write_text('{"id": "a", "query": "diffusion"}\nyear:abc\nrobot\n')
    r = run(main, [*db, "search", "--queries", str(qf), "--json", "--limit", "2", "--mode", "keyword"])
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.output.splitlines()]
    assert [x["id"] for x in lines] == ["a", "2", "3"]
    assert "error" in lines[1] and len(lines[2]["hits"]) == 2
    key = f"arxiv:{feed[0]['id']}"
    r = run(main, [*db, "similar", key, "--limit", "2", "--json"])
    assert r.exit_code == 0 and len(json.loads(r.output)["hits"]) == 2
    r = run(main, [*db, "similar", key, "--since", "20x"])
    assert r.exit_code == 1
    r = run(main, [*db, "related", "--text", feed[5]["summary"], "--limit", "1", "--json"])
    assert json.loads(r.output)["hits"][0]["keys"] == [f"arxiv:{feed[5]['id']}"]


def test_cli_queries_never_rebuild_the_ann_file(tmp_path: Path, feed) -> None:
    """While the indexer is still embedding, the HNSW file holds fewer vectors than the
    store: a CLI query reads the file as saved (as the web does) instead of rebuilding
    and rewriting it under the indexer (40 s for one search on the 102k feed)."""
    from paperdesk.search.vectors import VectorIndex

    store = open_store(tmp_path / "mid.db")
    _ingest(store, tmp_path, _feed_lines()[:80], "a.jsonl")
    update_index(store, show_progress=False)
    ann = SearchIndex(store).path / "vectors.usearch"
    v = VectorIndex(ann, 384)
    v.remove(store.search.all_docnos()[:30])  # as saved by an indexer part-way through
    v.save()
    stamp = ann.stat().st_mtime_ns, ann.stat().st_size
    db = ["--db", store.path]
    r = CliRunner().invoke(main, [*db, "search", "robot grasping", "--json", "--limit", "3"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["hits"]
    key = f"arxiv:{feed[40]['id']}"
    r = CliRunner().invoke(main, [*db, "similar", key, "--limit", "2", "--json"])
    assert r.exit_code == 0, r.output
    assert SearchIndex(store).search("robot grasping", mode="semantic", limit=3).hits
    assert (ann.stat().st_mtime_ns, ann.stat().st_size) == stamp  # nor does the library
    assert len(VectorIndex(ann, 384)) == 50
    # The indexer is what makes the file whole again, from the stored vectors.
    report = update_index(store, show_progress=False)
    assert report.vectors_computed == 0
    assert len(VectorIndex(ann, 384)) == 80
    store.close()


def test_results_are_works_after_resolve(tmp_path: Path) -> None:
    """After resolve, documents are works (`W<n>` with their record keys); the records'
    own documents from before are removed, and their vectors are reused by text hash."""
    from paperdesk.resolve.works_run import resolve_works

    lines = _feed_lines()[:30]
    store = open_store(tmp_path / "w.db")
    _ingest(store, tmp_path, lines, "a.jsonl")
    update_index(store, show_progress=False)
    resolve_works(store)
    rep = update_index(store, show_progress=False)
    assert rep.works_removed == 30 and rep.works_indexed == 30
    assert rep.vectors_computed == 0 and rep.vectors_reused == 30
    d = json.loads(lines[2])
    ix = SearchIndex(store)
    res = ix.search(f'title:"{d["title"]}"', mode="keyword")
    assert res.total == 1
    hit = res.hits[0]
    assert hit.work_id.startswith("W") and hit.keys == [f"arxiv:{d['id']}"]
    assert store.search.count_docs() == 30 and len(ix.vectors) == 30
    assert ix.similar(hit.work_id, limit=3).hits
    store.close()


def test_sort_by_date_and_paging(built) -> None:
    _, ix, _ = built
    for mode in ("keyword", "hybrid"):
        res = ix.search("image segmentation", mode=mode, sort="date", limit=15)  # type: ignore[arg-type]
        dates = [h.date or "" for h in res.hits]
        assert dates == sorted(dates, reverse=True), mode
    first = ix.search("image segmentation", mode="keyword", limit=10)
    page2 = ix.search("image segmentation", mode="keyword", limit=5, offset=5)
    assert [h.work_id for h in page2.hits] == [h.work_id for h in first.hits[5:10]]


def test_without_count_the_same_hits_and_no_total(built) -> None:
    """`count=False` (post-filtered, pruned) returns what the counted search returns, for
    keyword and hybrid, filtered or not, and says it did not count."""
    _, ix, _ = built
    for q in ("cat:cs.CV image", "year:2025 robot learning", "source:arxiv diffusion",
              "language -cat:cs.CL", "segmentation"):
        for mode in ("keyword", "hybrid"):
            a = ix.search(q, mode=mode, limit=10)
            b = ix.search(q, mode=mode, limit=10, count=False)
            assert a.total is not None and a.total > 0 and b.total is None, (q, mode)
            assert [h.to_dict() for h in b.hits] == [h.to_dict() for h in a.hits], (q, mode)


@pytest.mark.parametrize("exact_limit", [5000, 10])
def test_vector_filters_checked_in_a_mask_pass_the_same_works(
    built, monkeypatch: pytest.MonkeyPatch, exact_limit: int
) -> None:
    """Semantic and hybrid results with a filter are the same whether the filter is asked
    of tantivy (first use) or looked up in its mask (built on the second use), both when
    the filtered set is scored exactly and when the HNSW list is over-fetched (a
    limit of 10 forces that on this small index)."""
    _, ix, _ = built
    monkeypatch.setattr(search_engine, "EXACT_LIMIT", exact_limit)
    masked = 0
    for q in ("cat:cs.CV image", "year:2025 robot learning", "cat:cs.* -cat:cs.CV learning",
              "source:arxiv diffusion", "cat:cs.* year:2025 segmentation", "cat:cs.CL language",
              "cat:cs.RO robot control"):
        for mode in ("semantic", "hybrid"):
            ix.keyword.cache.clear()
            runs = [ix.search(q, mode=mode, limit=10, count=False) for _ in range(3)]
            assert runs[0].hits, (q, mode)
            for r in runs[1:]:
                assert [(h.work_id, h.score) for h in r.hits] == [(h.work_id, h.score) for h in runs[0].hits], (q, mode)
            masked += any(getattr(m, "exact", False) for m in ix.keyword.cache.values())
    assert masked >= 6
