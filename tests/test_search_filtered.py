"""Filtered keyword queries answered by post-filtering the pruned unfiltered ranking
(`paperdesk.search.filtered`) return exactly what the one exact tantivy query returns:
the same documents in the same order with the same scores, on a real index of 3,000 daily-feed
papers (every 34th) — through the first ranking, a deepened one, the fall back to the exact query, a
filter that passes everything and one that passes nothing, and after new commits.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from conftest import FEED_SAMPLE, shared_file
from paperdesk.search import filtered
from paperdesk.search.document import SearchDoc
from paperdesk.search.keyword import KeywordIndex
from paperdesk.search.query import parse_query

N_DOCS = 3000
QUERIES = [
    "cat:cs.CV diffusion models",
    "cat:cs.CL language model evaluation",
    "cat:cs.* year:2025 graph neural networks",
    "year:2026 quantum error correction",
    "year:2025..2026 reinforcement learning",
    "cat:math.* stochastic equations",
    "cat:cs.LG -cat:cs.CV learning",
    "learning -cat:cs.* -year:2026",
    "cat:cs.RO robot",
    "cat:eess.* signal",
    "cat:cs.C* attention",
    "source:arxiv transformer",
    "cat:cs.CV segmentation",
    "cat:hep-th black holes",
    'cat:cs.CV "image segmentation"',
    "cat:cs.CV author:wang",
]


@functools.cache
def _docs() -> list[SearchDoc]:
    """The committed sample of the feed (every 34th paper of most months, March 2025 to
    April 2026: both years present)."""
    out = []
    with shared_file(FEED_SAMPLE).open(encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            date = r.get("feed_date")
            out.append(SearchDoc(
                work_id=f"arxiv:{r['id']}", keys=[f"arxiv:{r['id']}"], title=r["title"],
                abstract=r.get("summary") or "", authors=list(r.get("authors") or []),
                year=int(date[:4]) if date else None, date=date,
                subjects=list(r.get("categories") or []), sources=["arxiv"],
            ))
            if len(out) == N_DOCS:
                break
    return out


@pytest.fixture(scope="module")
def kw(tmp_path_factory: pytest.TempPathFactory) -> KeywordIndex:
    ix = KeywordIndex(Path(tmp_path_factory.mktemp("filtered")) / "keyword", create=True)
    for i, d in enumerate(_docs()):
        ix.add(i, d)
        if i % 1000 == 999:
            ix.commit()  # several segments, as an incrementally updated index has
    ix.close()
    return ix


def _both(kw: KeywordIndex, q: str, limit: int = 20, offset: int = 0) -> tuple[list, list]:
    """(exact, post-filtered) hits; the filter is used once before, as its mask is only
    built on its second use."""
    node = parse_query(q)
    query = kw.translate(node)
    exact, _ = kw.search(query, limit, offset, count=False)
    filtered.search(kw, node, query, limit, offset, count=False)
    post, total = filtered.search(kw, node, query, limit, offset, count=False)
    assert total is None
    return [(h.docno, h.score) for h in exact], [(h.docno, h.score) for h in post]


@pytest.mark.parametrize(("max_depth", "overfetch"), [(2000, 1.5), (60, 0.2), (25, 1.5), (5000, 6.0)])
def test_post_filtered_equals_the_exact_filtered_query(
    kw: KeywordIndex, monkeypatch: pytest.MonkeyPatch, max_depth: int, overfetch: float
) -> None:
    """Every path: first depth enough, deepened, too selective for post-filtering, and
    post-filtering failing back to the exact query (shallow MAX_DEPTH, small OVERFETCH)."""
    monkeypatch.setattr(filtered, "MAX_DEPTH", max_depth)
    monkeypatch.setattr(filtered, "OVERFETCH", overfetch)
    filtered.stats.clear()
    kw.cache.clear()  # every filter's first use again
    for q in QUERIES:
        for limit, offset in ((20, 0), (10, 15), (1, 0)):
            exact, post = _both(kw, q, limit, offset)
            assert post == exact, (q, limit, offset)
        assert _both(kw, q)[0], q  # each query finds something
    assert filtered.stats["post-filtered"] > 0 and filtered.stats["exact: first use of the filter"] > 0
    if max_depth == 60:
        assert filtered.stats["deepened"] > 0 and filtered.stats["exact after post-filter"] > 0
    if max_depth == 25:
        assert filtered.stats["exact: selective filter"] > 0


def test_filters_add_no_score(kw: KeywordIndex) -> None:
    """A filtered hit scores what the same document scores for the words alone."""
    plain, _ = kw.search(kw.translate(parse_query("diffusion models")), 500, count=False)
    score = {h.docno: h.score for h in plain}
    for q in ("cat:cs.CV diffusion models", "year:2025 diffusion models", "source:arxiv diffusion models"):
        hits, _ = kw.search(kw.translate(parse_query(q)), 20, count=True)
        assert hits and all(h.score == score[h.docno] for h in hits), q


def test_a_filter_passing_everything_is_dropped_and_one_passing_nothing_finds_nothing(kw: KeywordIndex) -> None:
    node = parse_query("source:arxiv diffusion models")
    fq = filtered.split_filters(node)
    assert fq is not None
    filtered.filter_mask(kw, fq, kw.searcher())  # a first use only notes the filter
    mask = filtered.filter_mask(kw, fq, kw.searcher())
    assert mask is not None and mask.passing is None and mask.share == 1.0
    exact, post = _both(kw, "source:arxiv diffusion models")
    plain, _ = kw.search(kw.translate(parse_query("diffusion models")), 20, count=False)
    assert post == exact == [(h.docno, h.score) for h in plain]
    assert _both(kw, "year:1990 diffusion models") == ([], [])
    assert _both(kw, "source:openreview diffusion models") == ([], [])


def test_shapes_that_are_not_post_filtered() -> None:
    assert filtered.split_filters(parse_query("diffusion models")) is None
    assert filtered.split_filters(parse_query("cat:cs.CV")) is None  # only filters
    assert filtered.split_filters(parse_query("cat:cs.CV diffusion OR -models")) is None
    fq = filtered.split_filters(parse_query("cat:cs.CV year:2025 diffusion models"))
    assert fq is not None and len(fq.required) == 2 and not fq.excluded


def test_masks_follow_new_commits(tmp_path: Path) -> None:
    """A cached filter mask belongs to one index generation: documents committed later
    (here by a second handle, as another process would) are found by the next query."""
    docs = _docs()[:600]
    ix = KeywordIndex(tmp_path / "keyword", create=True)
    for i, d in enumerate(docs[:300]):
        ix.add(i, d)
    ix.close()
    reader = KeywordIndex(tmp_path / "keyword")
    node = parse_query("cat:cs.CV image")
    fq = filtered.split_filters(node)
    assert fq is not None
    for _ in range(2):  # the second use builds the mask
        before, _ = filtered.search(reader, node, reader.translate(node), 10, count=False)
    writer = KeywordIndex(tmp_path / "keyword")
    for i, d in enumerate(docs[300:], start=300):
        writer.add(i, d)
    writer.close()
    filtered.stats.clear()
    for _ in range(2):
        after, _ = filtered.search(reader, node, reader.translate(node), 10, count=False)
    assert filtered.stats["post-filtered"] == 1  # with a mask of the new generation
    mask = filtered.filter_mask(reader, fq, reader.searcher())
    assert mask is not None and mask.passing is not None and len(mask.passing) == 600
    exact, _ = reader.search(reader.translate(node), 10, count=False)
    assert [h.docno for h in after] == [h.docno for h in exact] != [h.docno for h in before]
    assert any(h.docno >= 300 for h in after)
