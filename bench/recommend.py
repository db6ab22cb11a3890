"""Recommendation quality and speed: paperdesk's per-user model (`paperdesk.desk.model`,
its text features `paperdesk.desk.features`) beside arxiv-sanity-lite's recipe, on the
same users.

Users come from the shared arXiv feed (issue 20): an author name with 5-60 papers before
the cut date and at least 2 after it is a user; their papers before the cut, with their
own name removed from each entry, are the library; their papers after it are the
targets; every paper after the cut is a candidate. A third of the users (by a hash of
the name) are held out: weights are tuned (`--tune`) on the others only, and the
held-out users' figures are computed only when asked (`--held-out`), so that tuning
never sees them. `--fresh-from N` holds out the users from position N on instead (by
name hash: with N = 150, users no earlier `--users 150` run ever built or looked at),
tuning on the first `--tune-users` of those before it.

The anchor is arxiv-sanity-lite's recipe: tf-idf over title, abstract and author names
(uni+bigrams, 20k features, min_df 5, max_df 0.1: its compute.py defaults since it has
20k features; the first runs here used max_df 0.5, an older default), `LinearSVC(C=0.01,
class_weight="balanced")` trained with the library positive and every other paper of the
feed negative, candidates ranked by the decision function. It takes 10-20 s a user, so
each user's ranks are kept in `--anchor-cache` (one JSON file per user, keyed by the
recipe, the cut and the user's papers) and `--anchor-budget SECONDS` stops training new
ones after that long: run it again to resume (the fitted tf-idf is cached there too).
Only users whose anchor ranks are cached are compared side by side.

Prints recall@100 (mean over users) and the median rank of the targets for both, how many
users each side wins, and the time to train one user's model and rank a month of
candidates (from stored counts, as `paperdesk recommend` does).

    python bench/recommend.py [--shared ../shared/data] [--users 150] [--tune] [--held-out]
        [--fresh-from 150 --tune-users 70]
        [--anchor-budget 800] [--no-anchor | --anchor-only]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import pickle
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from paperdesk.desk import features as F  # noqa: E402
from paperdesk.desk import model as M  # noqa: E402

FEED = "arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"
ARXIV_CODE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")
K = 100
ANCHOR = "asl-tfidf-20k-12-min5-max0.1-linearsvc-c0.01-balanced-tol1e-6-v1"
"""The anchor recipe's name in its cache keys (change it if the recipe changes)."""


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


def make_users(docs: list[M.Doc], cut: str, n: int, fresh_from: int = 0,
               tune_users: int = 0) -> list[dict[str, Any]]:
    """The first `n` users by name hash. Held out: a third of them by hash, or, with
    `fresh_from`, those at positions `fresh_from` and on (users earlier runs of `--users
    150` never built), the tuning users then being the first `tune_users` (all before it)."""
    before: dict[str, list[int]] = {}
    after: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        for a in set(d.authors):
            (before if (d.date or "") < cut else after).setdefault(a, []).append(i)
    names = [a for a, b in before.items() if 5 <= len(b) <= 60 and len(after.get(a, [])) >= 2]
    names.sort(key=h)
    users = [{"name": a, "lib": before[a], "targets": after[a],
              "held_out": p >= fresh_from if fresh_from else h(a) % 3 == 0}
             for p, a in enumerate(names[:n])]
    if fresh_from and tune_users:
        users = users[:min(tune_users, fresh_from)] + users[fresh_from:]
    return users


def without(d: M.Doc, name: str) -> M.Doc:
    key = M.fold_name(name)
    return M.Doc(d.ref, d.title, d.abstract, [a for a in d.authors if M.fold_name(a) != key],
                 d.subjects, d.date)


def ranks_of(scores: np.ndarray, targets: list[int]) -> list[int]:
    """1-based rank of each target among all candidates (ties broken against the target)."""
    return [int((scores > scores[t]).sum() + (scores == scores[t]).sum()) for t in targets]


def recall(ranks: list[int]) -> float:
    return sum(r <= K for r in ranks) / len(ranks)


def summarise(per_user: list[list[int]]) -> dict[str, float]:
    recalls = [recall(rs) for rs in per_user]
    all_ranks = [x for rs in per_user for x in rs]
    return {"users": len(per_user), "recall@100": round(statistics.fmean(recalls), 4) if recalls else 0.0,
            "median_rank": statistics.median(all_ranks) if all_ranks else 0.0}


# -- the anchor: arxiv-sanity-lite, cached per user ---------------------------------------

def anchor_key(u: dict[str, Any], docs: list[M.Doc], cut: str) -> str:
    ids = ",".join(docs[i].ref for i in sorted(u["lib"])) + "|" + ",".join(docs[i].ref for i in sorted(u["targets"]))
    return hashlib.sha1(f"{ANCHOR}|{cut}|{len(docs)}|{u['name']}|{ids}".encode()).hexdigest()[:16]


def asl_text(d: M.Doc) -> str:
    return " ".join([d.title, d.abstract, " ".join(d.authors)])


def anchor_space(docs: list[M.Doc], cache: Path) -> tuple[Any, sp.csr_matrix, float]:
    """arxiv-sanity-lite's compute.py tf-idf, fitted on every paper (cached: ~1-2 min)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    tag = hashlib.sha1(f"{ANCHOR}|{len(docs)}|{docs[0].ref}|{docs[-1].ref}".encode()).hexdigest()[:12]
    path = cache / f"space-{tag}.pickle"
    if path.exists():
        with path.open("rb") as f:
            vec, xa = pickle.load(f)  # noqa: S301 - our own cache file
        return vec, xa, 0.0
    t = time.perf_counter()
    vec = TfidfVectorizer(input="content", encoding="utf-8", decode_error="replace", strip_accents="unicode",
                          lowercase=True, analyzer="word", stop_words="english",
                          token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
                          max_features=20000, norm="l2", use_idf=True, smooth_idf=True, sublinear_tf=True,
                          max_df=0.1, min_df=5)
    xa = vec.fit_transform([asl_text(d) for d in docs]).astype(np.float32).tocsr()
    took = time.perf_counter() - t
    vec.stop_words_ = None  # the pruned terms: not needed to transform, huge to pickle
    cache.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        pickle.dump((vec, xa), f)
    return vec, xa, took


_SHARED: dict[str, Any] = {}
"""What forked anchor workers read (copy-on-write): docs, the fitted space, candidates."""


def _anchor_user(item: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """Train one user's SVM, rank the candidates, write the user's cache file."""
    from sklearn import svm

    u, path = item
    docs, vec, xa, cand = (_SHARED[k] for k in ("docs", "vec", "xa", "cand"))
    pos_of = {j: p for p, j in enumerate(cand)}
    t = time.perf_counter()
    lib_rows = vec.transform([asl_text(without(docs[i], u["name"])) for i in u["lib"]]).astype(np.float32)
    keep = np.ones(len(docs), dtype=bool)
    keep[u["lib"]] = False
    xu = sp.vstack([xa[keep], lib_rows]).tocsr()
    y = np.r_[np.zeros(int(keep.sum())), np.ones(len(u["lib"]))]
    clf = svm.LinearSVC(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=0.01)
    clf.fit(xu, y)
    s = clf.decision_function(xa[np.array(cand)])
    res = {"name": u["name"], "ranks": ranks_of(s, [pos_of[t_] for t_ in u["targets"]]),
           "seconds": round(time.perf_counter() - t, 2)}
    Path(path).write_text(json.dumps(res))
    return res


def run_anchor(users: list[dict[str, Any]], docs: list[M.Doc], cand: list[int], cut: str, cache: Path,
               budget: float, workers: int = 1) -> dict[str, dict[str, Any]]:
    """name → {"ranks", "seconds"} for every user whose anchor ranking is cached, training
    the missing ones (in `workers` forked processes) until `budget` seconds have passed."""
    cache.mkdir(parents=True, exist_ok=True)
    out: dict[str, dict[str, Any]] = {}
    todo = []
    for u in users:
        p = cache / f"user-{anchor_key(u, docs, cut)}.json"
        if p.exists():
            out[u["name"]] = json.loads(p.read_text())
        else:
            todo.append((u, str(p)))
    print(f"anchor: {len(out)} users cached, {len(todo)} to train (budget {budget:.0f} s, {workers} workers)",
          flush=True)
    if not todo or budget <= 0:
        return out
    start = time.perf_counter()
    vec, xa, took = anchor_space(docs, cache)
    print(f"anchor: tf-idf of every paper {'cached' if not took else f'{took:.1f} s'}", flush=True)
    _SHARED.update(docs=docs, vec=vec, xa=xa, cand=cand)
    done = 0
    if workers <= 1:
        for item in todo:
            if time.perf_counter() - start > budget:
                break
            res = _anchor_user(item)
            out[res["name"]] = res
            done += 1
    else:
        import multiprocessing

        pool = multiprocessing.get_context("fork").Pool(workers)
        try:
            for res in pool.imap_unordered(_anchor_user, todo):
                out[res["name"]] = res
                done += 1
                if time.perf_counter() - start > budget:
                    break
        finally:
            pool.terminate()  # users in flight are not cached: the next run trains them
    print(f"anchor: {done} trained in {time.perf_counter() - start:.0f} s, {len(todo) - done} left for the next run",
          flush=True)
    return out


# -- paperdesk ------------------------------------------------------------------------

class Mine:
    """paperdesk's side: every paper's term counts once (as `desk_features` keeps them),
    the candidates' space fitted on theirs, each user's profile from their library."""

    def __init__(self, docs: list[M.Doc], cand: list[int], embed: bool):
        self.docs = docs
        t = time.perf_counter()
        self.terms = F.term_counts([d.text for d in docs])
        self.t_counts = time.perf_counter() - t
        self.E: np.ndarray | None = None
        if embed:
            from _embcache import embed_cached
            from paperdesk.search.embed import doc_text, make_embedder

            emb = make_embedder("minilm-l6-static-full")
            E, _ = embed_cached(emb, [doc_text(d.title, d.abstract) for d in docs], "recommend-feed")
            self.E = E.astype(np.float32)
        self.pool, self.space = self.pool_of(cand)

    def pool_of(self, idx: list[int]) -> tuple[M.Pool, F.TextSpace]:
        t = self.terms.take(idx)
        space = F.space_for(t)
        return M.Pool.build([self.docs[i] for i in idx], space.transform(t),
                            None if self.E is None else self.E[idx]), space

    def profile(self, u: dict[str, Any], space: F.TextSpace) -> M.Profile:
        lib = [without(self.docs[i], u["name"]) for i in u["lib"]]
        return M.Profile.build(lib, space.transform(self.terms.take(u["lib"])),
                               None if self.E is None else self.E[u["lib"]])


GRID = {"authors": (4.0, 8.0, 12.0, 16.0, 24.0), "embedding": (0.5, 1.0, 1.5, 2.0),
        "text": (0.5, 1.0, 1.5)}
"""The weights `--tune` searches, one at a time from the model's (two passes)."""


def tune(mine: Mine, users: list[dict[str, Any]], pos_of: dict[int, int]) -> dict[str, float]:
    """Weights by recall@100 on `users` (the tuning users only): coordinate search over
    `GRID` from the model's weights, keeping a change only when recall rises."""
    sigs = [(M.signals(mine.profile(u, mine.space), mine.pool), [pos_of[t] for t in u["targets"]]) for u in users]

    def value(w: dict[str, float]) -> dict[str, float]:
        return summarise([ranks_of(M.combine(sg, w).scores, ts) for sg, ts in sigs])

    best = {k: M.WEIGHTS[k] for k in GRID}
    best_r = value(best)
    print(f"  tune start {best}: recall@100 {best_r['recall@100']:.4f} median {best_r['median_rank']}", flush=True)
    for _ in range(2):
        for key, values in GRID.items():
            for v in values:
                if v == best[key]:
                    continue
                trial = {**best, key: v}
                r = value(trial)
                if r["recall@100"] > best_r["recall@100"]:
                    best, best_r = trial, r
                    print(f"  tune {key}={v}: recall@100 {r['recall@100']:.4f} median {r['median_rank']}", flush=True)
    print(f"  tune end: recall@100 {best_r['recall@100']:.4f} median {best_r['median_rank']}", flush=True)
    return best


def compare(label: str, users: list[dict[str, Any]], ours: dict[str, list[int]],
            anchor: dict[str, dict[str, Any]], show_losses: bool = False) -> None:
    both = [u for u in users if u["name"] in anchor]
    if not both:
        print(f"{label:<10} {len(users):>5} | {summarise([ours[u['name']] for u in users])['recall@100']:>15.4f}"
              " | no anchor ranks cached")
        return
    a = summarise([ours[u["name"]] for u in both])
    b = summarise([anchor[u["name"]]["ranks"] for u in both])
    ratio = a["recall@100"] / b["recall@100"] if b["recall@100"] else float("inf")
    diff = [recall(ours[u["name"]]) - recall(anchor[u["name"]]["ranks"]) for u in both]
    print(f"{label:<10} {a['users']:>5} | {a['recall@100']:>15.4f} {a['median_rank']:>11} | "
          f"{b['recall@100']:>12.4f} {b['median_rank']:>11} | {ratio:.2f}x | "
          f"wins {sum(d > 0 for d in diff)}, ties {sum(d == 0 for d in diff)}, losses {sum(d < 0 for d in diff)}")
    if show_losses:
        for u, d in sorted(zip(both, diff, strict=True), key=lambda x: x[1]):
            if d < 0:
                print(f"  lost: {u['name']!r} library {len(u['lib'])}, targets {len(u['targets'])}: "
                      f"ranks {sorted(ours[u['name']])} vs anchor {sorted(anchor[u['name']]['ranks'])}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--cut", default="2026-03-01")
    ap.add_argument("--users", type=int, default=150)
    ap.add_argument("--fresh-from", type=int, default=0,
                    help="hold out the users from this position on (by name hash), not a third")
    ap.add_argument("--tune-users", type=int, default=0, help="with --fresh-from: tune on the first N only")
    ap.add_argument("--no-embed", action="store_true")
    ap.add_argument("--tune", action="store_true", help="grid-search the weights on the tuning users")
    ap.add_argument("--held-out", action="store_true", help="also rank the held-out users (report them once)")
    ap.add_argument("--no-anchor", action="store_true", help="compare with cached anchor ranks only")
    ap.add_argument("--anchor-only", action="store_true", help="train anchor users (resume), then stop")
    ap.add_argument("--anchor-workers", type=int, default=1, help="anchor users trained at once (processes)")
    ap.add_argument("--anchor-cache", type=Path, default=Path("/tmp/paperdesk-bench-cache/recommend-anchor"))
    ap.add_argument("--anchor-budget", type=float, default=800.0,
                    help="seconds to spend training anchor users not cached yet")
    args = ap.parse_args()

    t0 = time.perf_counter()
    docs = load(args.shared)
    users = make_users(docs, args.cut, args.users, args.fresh_from, args.tune_users)
    cand = [i for i, d in enumerate(docs) if (d.date or "") >= args.cut]
    pos_of = {j: p for p, j in enumerate(cand)}
    next_month = args.cut[:5] + f"{int(args.cut[5:7]) + 1:02d}"
    month = [i for i in cand if (docs[i].date or "") < next_month]
    tuning = [u for u in users if not u["held_out"]]
    held = [u for u in users if u["held_out"]]
    print(f"{len(docs)} papers, {len(cand)} candidates after {args.cut} ({len(month)} in its month), "
          f"{len(users)} users ({len(held)} held out); load {time.perf_counter() - t0:.1f} s", flush=True)

    anchor = run_anchor(users, docs, cand, args.cut, args.anchor_cache, 0.0 if args.no_anchor else args.anchor_budget,
                        args.anchor_workers)
    if args.anchor_only:
        print(f"anchor: {len(anchor)} of {len(users)} users cached")
        return

    mine = Mine(docs, cand, not args.no_embed)
    print(f"term counts of every paper {mine.t_counts:.1f} s; embeddings {'off' if mine.E is None else mine.E.shape}",
          flush=True)
    weights: dict[str, float] | None = tune(mine, tuning, pos_of) if args.tune else None
    if weights:
        print(f"chosen on the tuning users: {weights}", flush=True)
    ranked = tuning + (held if args.held_out else [])
    t = time.perf_counter()
    ours = {u["name"]: ranks_of(M.score(mine.profile(u, mine.space), mine.pool, weights).scores,
                                [pos_of[x] for x in u["targets"]]) for u in ranked}
    t_mine = time.perf_counter() - t

    print()
    print(f"{'group':<10} {'users':>5} | {'paperdesk R@100':>15} {'median rank':>11} | "
          f"{'anchor R@100':>12} {'median rank':>11} | ratio | per user (paperdesk vs anchor)")
    compare("tuning", tuning, ours, anchor, show_losses=True)
    if args.held_out:
        compare("held_out", held, ours, anchor)
        compare("all", users, ours, anchor)
    quart = [round(float(q), 3) for q in np.quantile([recall(ours[u["name"]]) for u in ranked], [0.1, 0.25, 0.5, 0.75])]
    print(f"paperdesk per-user recall@100, 10/25/50/75th percentiles: {quart}")
    if anchor:
        aq = [round(float(q), 3) for q in np.quantile([recall(a["ranks"]) for a in anchor.values()], [0.1, 0.25, 0.5, 0.75])]
        print(f"anchor per-user recall@100 ({len(anchor)} users), same percentiles: {aq}")

    # speed: the month's candidates from stored counts (fit the space, transform), once;
    # then per user: their profile (library transformed) and the ranking of the month
    t = time.perf_counter()
    month_pool, month_space = mine.pool_of(month)
    t_month = time.perf_counter() - t
    times = []
    for u in users[:50]:
        t = time.perf_counter()
        M.top(M.score(mine.profile(u, month_space), month_pool, weights), K)
        times.append(time.perf_counter() - t)
    print()
    print(f"paperdesk: a month's {len(month)} candidates from stored counts (space + tf-idf): {t_month * 1000:.0f} ms; "
          f"then train + rank per user: median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms")
    print(f"paperdesk: {len(ranked)} users over {len(cand)} candidates: {t_mine:.1f} s")
    if anchor:
        secs = [a["seconds"] for a in anchor.values()]
        print(f"anchor: train + rank per user: median {statistics.median(secs):.2f} s ({len(secs)} users)")
    counts = Counter(len(u["lib"]) for u in users)
    print(f"library sizes: median {statistics.median(len(u['lib']) for u in users)}, "
          f"targets median {statistics.median(len(u['targets']) for u in users)}; {len(counts)} sizes")


if __name__ == "__main__":
    main()
