"""Recommendation quality and speed: paperdesk's per-user model (`paperdesk.desk.model`)
beside arxiv-sanity-lite's recipe, on the same users, in one run.

Users come from the shared arXiv feed (issue 20): an author name with 5-60 papers before
the cut date and at least 2 after it is a user; their papers before the cut, with their
own name removed from each entry, are the library; their papers after it are the
targets; every paper after the cut is a candidate. A third of the users (by a hash of
the name) are held out: weights are tuned (`--tune`) on the others only, and both groups
are reported.

The anchor is arxiv-sanity-lite's recipe: tf-idf over title, abstract and author names
(uni+bigrams, 20k features, its compute.py settings), `LinearSVC(C=0.01,
class_weight="balanced")` trained with the library positive and every other paper of the
feed negative, candidates ranked by the decision function.

Prints recall@100 (mean over users) and the median rank of the targets for both, and the
time to train one user's model and rank a month of candidates.

    python bench/recommend.py [--shared ../shared/data] [--users 150] [--tune]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from paperdesk.desk import model as M  # noqa: E402

FEED = "arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"
ARXIV_CODE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")
K = 100


def load(shared: Path) -> list[M.Doc]:
    docs = []
    with gzip.open(shared / FEED, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            cats = [c for c in (d.get("categories") or d.get("cate") or []) if ARXIV_CODE.match(c)]
            docs.append(M.Doc(ref=d["id"], title=" ".join((d.get("title") or "").split()),
                              abstract=" ".join((d.get("summary") or "").split()),
                              authors=list(d.get("authors") or []), subjects=cats, date=d["feed_date"]))
    return docs


def h(name: str) -> int:
    return int(hashlib.sha1(name.encode()).hexdigest()[:8], 16)


def make_users(docs: list[M.Doc], cut: str, n: int) -> list[dict]:
    before: dict[str, list[int]] = {}
    after: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        for a in set(d.authors):
            (before if (d.date or "") < cut else after).setdefault(a, []).append(i)
    names = [a for a, b in before.items() if 5 <= len(b) <= 60 and len(after.get(a, [])) >= 2]
    names.sort(key=h)
    return [{"name": a, "lib": before[a], "targets": after[a], "held_out": h(a) % 3 == 0}
            for a in names[:n]]


def without(d: M.Doc, name: str) -> M.Doc:
    key = M.fold_name(name)
    return M.Doc(d.ref, d.title, d.abstract, [a for a in d.authors if M.fold_name(a) != key],
                 d.subjects, d.date)


def ranks_of(scores: np.ndarray, targets: list[int]) -> list[int]:
    """1-based rank of each target among all candidates (ties broken against the target)."""
    return [int((scores > scores[t]).sum() + (scores == scores[t]).sum()) for t in targets]


def summarise(label: str, per_user: list[tuple[float, list[int]]]) -> dict[str, float]:
    recall = statistics.fmean(r for r, _ in per_user) if per_user else 0.0
    all_ranks = [x for _, rs in per_user for x in rs]
    med = statistics.median(all_ranks) if all_ranks else 0.0
    return {"label": label, "users": len(per_user), "recall@100": round(recall, 4), "median_rank": med}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--cut", default="2026-03-01")
    ap.add_argument("--users", type=int, default=150)
    ap.add_argument("--anchor-users", type=int, default=None, help="anchor on the first N users only")
    ap.add_argument("--no-embed", action="store_true")
    ap.add_argument("--tune", action="store_true", help="grid-search the weights on the tuning users")
    args = ap.parse_args()

    t0 = time.perf_counter()
    docs = load(args.shared)
    users = make_users(docs, args.cut, args.users)
    cand = [i for i, d in enumerate(docs) if (d.date or "") >= args.cut]
    pos_of = {j: p for p, j in enumerate(cand)}
    month = [i for i in cand if (docs[i].date or "") < args.cut[:5] + f"{int(args.cut[5:7]) + 1:02d}"]
    print(f"{len(docs)} papers, {len(cand)} candidates after {args.cut} ({len(month)} in its month), "
          f"{len(users)} users ({sum(u['held_out'] for u in users)} held out); load {time.perf_counter() - t0:.1f} s",
          flush=True)

    # -- paperdesk: the shared spaces --------------------------------------------------
    t = time.perf_counter()
    vec = M.vectorizer()
    X = vec.fit_transform([d.text for d in docs]).tocsr()
    t_text = time.perf_counter() - t  # (fitted each run: the month's transform below needs it)
    E = None
    if not args.no_embed:
        from _embcache import embed_cached
        from paperdesk.search.embed import doc_text, make_embedder

        emb = make_embedder("minilm-l6-static-full")
        E, _ = embed_cached(emb, [doc_text(d.title, d.abstract) for d in docs], "recommend-feed")
        E = E.astype(np.float32)
    print(f"tf-idf of every paper {t_text:.1f} s; embeddings {'off' if E is None else E.shape}", flush=True)
    pool = M.Pool.build([docs[i] for i in cand], X[cand], None if E is None else E[cand])
    t = time.perf_counter()
    Xm = vec.transform([docs[i].text for i in month])
    t_month_text = time.perf_counter() - t
    month_pool = M.Pool.build([docs[i] for i in month], Xm.tocsr(), None if E is None else E[month])

    def mine(u: dict, weights: dict[str, float] | None = None, on: M.Pool = pool) -> M.Scored:
        lib = [without(docs[i], u["name"]) for i in u["lib"]]
        prof = M.Profile.build(lib, X[u["lib"]], None if E is None else E[u["lib"]])
        return M.score(prof, on, weights)

    def evaluate(weights: dict[str, float] | None, group: list[dict]) -> list[tuple[float, list[int]]]:
        out = []
        for u in group:
            s = mine(u, weights).scores
            rs = ranks_of(s, [pos_of[t] for t in u["targets"]])
            out.append((sum(r <= K for r in rs) / len(rs), rs))
        return out

    tuning = [u for u in users if not u["held_out"]]
    held = [u for u in users if u["held_out"]]
    weights: dict[str, float] | None = None
    if args.tune:  # on the tuning users only; the held-out users never see this
        grid = [{"authors": a, "embedding": e, "subjects": s_}
                for a in (1.0, 2.0, 4.0) for e in (0.5, 1.0) for s_ in (0.0, 0.5)]
        best: tuple[float, dict[str, float]] | None = None
        for g in grid:
            r = summarise("tune", evaluate(g, tuning))
            print(f"  tune {g}: recall@100 {r['recall@100']:.4f} median {r['median_rank']}", flush=True)
            if best is None or r["recall@100"] > best[0]:
                best = (r["recall@100"], g)
        assert best is not None
        weights = best[1]
        print(f"chosen on the tuning users: {weights} (recall@100 {best[0]:.4f})", flush=True)

    t = time.perf_counter()
    res_mine = {"tuning": evaluate(weights, tuning), "held_out": evaluate(weights, held)}
    t_mine = time.perf_counter() - t
    for g in ("tuning", "held_out"):
        r = summarise(g, res_mine[g])
        print(f"paperdesk {g}: recall@100 {r['recall@100']:.4f}, median rank {r['median_rank']}", flush=True)
    # speed: one user's model trained and a month of candidates ranked, per user
    times = []
    for u in users[:50]:
        t = time.perf_counter()
        s = mine(u, weights, on=month_pool)
        M.top(s, K)
        times.append(time.perf_counter() - t)

    # -- the anchor: arxiv-sanity-lite --------------------------------------------------
    from sklearn import svm
    from sklearn.feature_extraction.text import TfidfVectorizer

    t = time.perf_counter()
    asl = TfidfVectorizer(input="content", encoding="utf-8", decode_error="replace", strip_accents="unicode",
                          lowercase=True, analyzer="word", stop_words="english",
                          token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
                          max_features=20000, norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=True,
                          max_df=0.5, min_df=5)

    def asl_text(d: M.Doc) -> str:
        return " ".join([d.title, d.abstract, " ".join(d.authors)])

    XA = asl.fit_transform([asl_text(d) for d in docs]).astype(np.float32).tocsr()
    t_asl_text = time.perf_counter() - t
    if args.anchor_users is None:
        anchor_users = users
    else:  # the same share of held-out users as in all
        n_held = round(args.anchor_users * len(held) / max(1, len(users)))
        anchor_users = tuning[: args.anchor_users - n_held] + held[:n_held]
    res_asl: dict[str, list[tuple[float, list[int]]]] = {"tuning": [], "held_out": []}
    asl_times = []
    cand_arr = np.array(cand)
    for n, u in enumerate(anchor_users):
        t = time.perf_counter()
        lib_rows = asl.transform([asl_text(without(docs[i], u["name"])) for i in u["lib"]]).astype(np.float32)
        keep = np.ones(len(docs), dtype=bool)
        keep[u["lib"]] = False
        Xu = sp.vstack([XA[keep], lib_rows]).tocsr()
        y = np.r_[np.zeros(int(keep.sum())), np.ones(len(u["lib"]))]
        clf = svm.LinearSVC(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=0.01)
        clf.fit(Xu, y)
        s = clf.decision_function(XA[cand_arr])
        asl_times.append(time.perf_counter() - t)
        rs = ranks_of(s, [pos_of[t_] for t_ in u["targets"]])
        res_asl["held_out" if u["held_out"] else "tuning"].append((sum(r <= K for r in rs) / len(rs), rs))
        if n % 10 == 9:
            done = res_asl["tuning"] + res_asl["held_out"]
            print(f"  anchor: {n + 1}/{len(anchor_users)} users, {statistics.fmean(asl_times):.2f} s each, "
                  f"recall@100 so far {statistics.fmean(r for r, _ in done):.4f}", flush=True)

    print()
    print(f"{'group':<10} {'users':>5} | {'paperdesk R@100':>15} {'median rank':>11} | "
          f"{'anchor R@100':>12} {'median rank':>11} | ratio")
    names = {id(u) for u in anchor_users}
    for group in ("tuning", "held_out", "all"):
        mine_g = res_mine["tuning"] + res_mine["held_out"] if group == "all" else res_mine[group]
        src = tuning + held if group == "all" else (tuning if group == "tuning" else held)
        mine_g = [r for r, u in zip(mine_g, src, strict=True) if id(u) in names]  # same users as the anchor
        asl_g = res_asl["tuning"] + res_asl["held_out"] if group == "all" else res_asl[group]
        a, b = summarise(group, mine_g), summarise(group, asl_g)
        ratio = a["recall@100"] / b["recall@100"] if b["recall@100"] else float("inf")
        print(f"{group:<10} {a['users']:>5} | {a['recall@100']:>15.4f} {a['median_rank']:>11} | "
              f"{b['recall@100']:>12.4f} {b['median_rank']:>11} | {ratio:.2f}x")
    print()
    print(f"paperdesk: train + rank a month ({len(month)} candidates), per user: median "
          f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
          f"(the month's tf-idf, shared by all users: {t_month_text * 1000:.0f} ms)")
    print(f"paperdesk: all {len(users)} users over {len(cand)} candidates: {t_mine:.1f} s")
    print(f"anchor: tf-idf {t_asl_text:.1f} s; train + rank per user: median {statistics.median(asl_times):.2f} s")
    counts = Counter(len(u["lib"]) for u in users)
    print(f"library sizes: median {statistics.median(len(u['lib']) for u in users)}, "
          f"targets median {statistics.median(len(u['targets']) for u in users)}; {len(counts)} sizes")


if __name__ == "__main__":
    main()
