"""Search quality on SciFact (claims → supporting/refuting abstracts) and "similar papers"
on the paperscape citation graph.

    nice -n 10 .venv/bin/python bench/search_quality.py [--variants a,b,c] [--similar]

Prints nDCG@10 and Recall@100 for keyword (our tantivy BM25, plus bm25s as reference),
semantic (each embedder variant) and hybrid (RRF of keyword and that variant), and the
embedding throughput of each variant on real arXiv feed abstracts. Embeddings are cached
under $PAPERDESK_BENCH_CACHE (default /tmp/paperdesk-bench-cache): the full transformer
needs many minutes for the 5,183 SciFact abstracts on two busy cores.
"""

from __future__ import annotations

import argparse
import gzip
import math
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _embcache import embed_cached  # noqa: E402
from paperdesk.search.document import SearchDoc  # noqa: E402
from paperdesk.search.embed import doc_text, make_embedder  # noqa: E402
from paperdesk.search.evaldata import iter_paperscape, load_scifact  # noqa: E402
from paperdesk.search.fusion import ALPHA, convex, rrf  # noqa: E402
from paperdesk.search.keyword import KeywordIndex  # noqa: E402
from paperdesk.search.query import free_text_query  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEPTH = 100
GRID = (0.2, 0.3, 0.5, 0.7)
ALPHAS = (0.2, 0.3, ALPHA, 0.4, 0.5)


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def recall100(ranked: list[str], relevant: set[str]) -> float:
    return len(set(ranked[:100]) & relevant) / len(relevant)


def evaluate(runs: dict[str, list[str]], claims: list) -> tuple[float, float]:
    n = [ndcg10(runs[c.claim_id], c.relevant) for c in claims]
    r = [recall100(runs[c.claim_id], c.relevant) for c in claims]
    return float(np.mean(n)), float(np.mean(r))


def keyword_runs(docs, claims, tmp: Path) -> tuple[dict[str, list[tuple[int, float]]], float]:
    ix = KeywordIndex(tmp / "kw", create=True)
    for i, d in enumerate(docs):
        ix.add(i, SearchDoc(work_id=d.doc_id, keys=[d.doc_id], title=d.title, abstract=d.abstract))
    ix.commit()
    t = time.perf_counter()
    runs = {}
    for c in claims:
        hits, _ = ix.search(ix.translate(free_text_query(c.text)), DEPTH)
        runs[c.claim_id] = [(h.docno, h.score) for h in hits]
    return runs, (time.perf_counter() - t) / len(claims) * 1000


def bm25s_runs(docs, claims) -> dict[str, list[tuple[int, float]]]:
    import bm25s
    import Stemmer  # type: ignore[import-not-found]

    stem = Stemmer.Stemmer("english")
    corpus = [f"{d.title} {d.title} {d.abstract}" for d in docs]  # title counted twice ~ boost
    retr = bm25s.BM25()
    retr.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    q = bm25s.tokenize([c.text for c in claims], stopwords="en", stemmer=stem, show_progress=False)
    res, scores = retr.retrieve(q, k=DEPTH, show_progress=False, n_threads=1)
    return {c.claim_id: list(zip(res[i].tolist(), scores[i].tolist(), strict=True)) for i, c in enumerate(claims)}


def semantic_runs(dv: np.ndarray, qv: np.ndarray, claims) -> dict[str, list[tuple[int, float]]]:
    sims = qv @ dv.T
    out = {}
    for i, c in enumerate(claims):
        top = np.argsort(-sims[i])[:DEPTH]
        out[c.claim_id] = [(int(j), float(sims[i, j])) for j in top]
    return out


def throughput(name: str, texts: list[str]) -> float:
    emb = make_embedder(name)
    emb.encode_docs(texts[:8])  # load + warm up
    t = time.perf_counter()
    emb.encode_docs(texts)
    return len(texts) / (time.perf_counter() - t)


def feed_abstracts(n: int) -> list[str]:
    out = []
    with gzip.open(DATA / "arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz", "rt") as f:
        import json

        for line in f:
            d = json.loads(line)
            out.append(doc_text(d.get("title"), " ".join((d.get("summary") or "").split())))
            if len(out) >= n:
                break
    return out


def similar_papers(variant: str, n_probe: int, seed: int = 7) -> None:
    """Do a paper's nearest neighbours (by title embedding, the only text paperscape has)
    cite it, get cited by it or share references with it more often than random pairs?"""
    entries = []
    for y in (1995, 1996):
        entries += list(iter_paperscape(DATA / f"paperscape/pscp-{y}.csv"))
    idx = {e.arxiv_id: i for i, e in enumerate(entries)}
    refs = [set(r for r in e.refs if r in idx) for e in entries]
    cited_by: dict[str, set[str]] = defaultdict(set)
    for e, rs in zip(entries, refs, strict=True):
        for r in rs:
            cited_by[r].add(e.arxiv_id)

    def linked(a: int, b: int) -> bool:
        ea, eb = entries[a].arxiv_id, entries[b].arxiv_id
        return (
            eb in refs[a] or ea in refs[b]
            or bool(refs[a] & refs[b])  # bibliographic coupling
            or bool(cited_by[ea] & cited_by[eb])  # co-cited
        )

    emb = make_embedder(variant)
    titles = [e.title for e in entries]
    v, rate = embed_cached(emb, titles, "pscp9596")
    rng = random.Random(seed)
    probes = rng.sample([i for i, r in enumerate(refs) if r], n_probe)
    hit_nn, hit_rand = [], []
    for i in probes:
        sims = v @ v[i]
        sims[i] = -2
        top = np.argpartition(-sims, 10)[:10]
        hit_nn.append(np.mean([linked(i, int(j)) for j in top]))
        hit_rand.append(np.mean([linked(i, rng.randrange(len(entries))) for _ in range(10)]))
    print(
        f"similar papers (paperscape 1995-96, {len(entries)} papers, {n_probe} probes, {variant} on titles):"
        f" linked@10 nearest {np.mean(hit_nn):.3f} vs random {np.mean(hit_rand):.3f}"
        f" ({np.mean(hit_nn) / max(np.mean(hit_rand), 1e-9):.1f}x)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="minilm-l6-static-full,minilm-l6-static-full+q-minilm,minilm-l6-256,minilm-l6-64-s2")
    ap.add_argument("--throughput", type=int, default=256, help="feed abstracts per throughput run (0: skip)")
    ap.add_argument("--speed-only", default="minilm-l6-256-int8", help="variants timed on feed abstracts but not evaluated")
    ap.add_argument("--similar", type=int, default=500, help="paperscape probes (0: skip)")
    ap.add_argument("--similar-variant", default="minilm-l6-static-full")
    args = ap.parse_args()

    docs, claims = load_scifact(DATA / "scifact")
    ids = [d.doc_id for d in docs]
    print(f"SciFact: {len(docs)} abstracts, {len(claims)} training claims with evidence")

    def named(run: dict[str, list[tuple[int, float]]]) -> dict[str, list[str]]:
        return {k: [ids[j] for j, _ in v] for k, v in run.items()}

    with tempfile.TemporaryDirectory() as tmp:
        kw, ms = keyword_runs(docs, claims, Path(tmp))
    n, r = evaluate(named(kw), claims)
    print(f"{'keyword (tantivy BM25, text + title x0.3)':48s} nDCG@10 {n:.4f}  R@100 {r:.4f}  ({ms:.1f} ms/query)")
    try:
        ref = bm25s_runs(docs, claims)
        n2, r2 = evaluate(named(ref), claims)
        print(f"{'keyword reference (bm25s)':48s} nDCG@10 {n2:.4f}  R@100 {r2:.4f}")
    except ImportError as e:
        print(f"bm25s reference skipped: {e}")

    feed = feed_abstracts(args.throughput) if args.throughput else []
    for name in [v for v in args.variants.split(",") if v]:
        emb = make_embedder(name)
        sent = getattr(emb, "sentences", None)
        dv, _ = embed_cached(emb, [doc_text(d.title, d.abstract, sent) for d in docs], "scifact")
        qv, _ = embed_cached(emb, [c.text for c in claims], "scifact", "queries")
        sem = semantic_runs(dv, qv, claims)
        sn, sr = evaluate(named(sem), claims)
        hyb = {}
        for i, c in enumerate(claims):  # the default: convex fusion at ALPHA (fusion.py)
            cos = {d: float(dv[d] @ qv[i]) for d in {d for d, _ in kw[c.claim_id]} | {d for d, _ in sem[c.claim_id]}}
            hyb[c.claim_id] = convex(kw[c.claim_id], cos)
        hn, hr = evaluate(named(hyb), claims)
        grid = []
        for sw in GRID:
            w = {c.claim_id: rrf([kw[c.claim_id], sem[c.claim_id]], [1.0, sw]) for c in claims}
            grid.append((sw, *evaluate(named(w), claims)))
        cgrid = []
        for a in ALPHAS:
            runs = {}
            for i, c in enumerate(claims):
                cand = {d for d, _ in kw[c.claim_id]} | {d for d, _ in sem[c.claim_id]}
                cos = {d: float(dv[d] @ qv[i]) for d in cand}
                runs[c.claim_id] = convex(kw[c.claim_id], cos, a)
            cgrid.append((a, *evaluate(named(runs), claims)))
        rate = throughput(name, feed) if feed else float("nan")
        print(
            f"{name:48s} semantic nDCG@10 {sn:.4f} R@100 {sr:.4f} | hybrid (convex a={ALPHA}) nDCG@10 {hn:.4f}"
            f" R@100 {hr:.4f} | {rate:.1f} feed abstracts/s"
        )
        print("    weighted RRF (keyword 1, semantic w): " + "  ".join(
            f"w={sw}: {gn:.4f}/{gr:.4f}" for sw, gn, gr in grid))
        print("    convex (1-a)·BM25 + a·cos, nDCG@10/R@100: " + "  ".join(
            f"a={a}{'*' if a == ALPHA else ''}: {gn:.4f}/{gr:.4f}" for a, gn, gr in cgrid))
    for name in [v for v in args.speed_only.split(",") if v and feed]:
        print(f"{name:48s} (throughput only) {throughput(name, feed):.1f} feed abstracts/s")
    if args.similar:
        similar_papers(args.similar_variant, args.similar)


if __name__ == "__main__":
    main()
