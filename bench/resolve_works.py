"""Quality of the works matcher on real labels; prints every figure.

    .venv/bin/python bench/resolve_works.py [--data ../shared/data] [--out bench/out]

1. DBLP–ACM (development half of the benchmark): a fifth of the true works is held out
   (`HELD_OUT_SALT`; scored only with `--held-out`), the rest is split into 5 folds by true
   work, 3 times over (`--repeats`): per fold the threshold is chosen on the other four
   and scored on it, and the shipped threshold is scored too; per-fold pairwise
   precision / recall and their spread are printed.
2. arXiv daily feed × OpenReview accepted papers: how many OpenReview papers join a feed
   work; recall of the same-paper pairs found by evidence independent of the matcher
   (`silver_pairs`); a random sample of 100 matched pairs is written side by side for
   hand-checking (`--sample` prints them with their authors and years).
3. Hard negatives: the pairs of distinct feed papers with the most similar abstracts
   (nearest neighbours by abstract-bigram containment among LSH candidates) — how many the
   matcher would merge (false-merge rate).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import gzip
import random
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import orjson

from paperdesk.model import Author, SourceRecord
from paperdesk.normalize import finish
from paperdesk.resolve.cluster import Clusterer
from paperdesk.resolve.pairs import MATCH_THRESHOLD, candidate_scores, features, score
from paperdesk.resolve.works import Doc, make_docs

ROOT = Path(__file__).resolve().parent.parent


def _authors(names: Sequence[str]) -> list[Author]:
    return [Author(name=n.strip()) for n in names if n and n.strip()]


def load_dblp_acm(data: Path) -> tuple[list[SourceRecord], set[tuple[str, str]]]:
    """DBLP and ACM rows as records (their own ids as identity keys) and the true pairs."""
    recs: list[SourceRecord] = []
    for fname, source in (("DBLP2.csv", "dblp"), ("ACM.csv", "acm")):
        with open(data / "dblp-acm" / fname, encoding="utf-8", errors="replace", newline="") as f:
            for row in csv.DictReader(f):
                year = row["year"].strip()
                recs.append(
                    finish(
                        SourceRecord(
                            source=source,
                            source_id=row["id"],
                            title=row["title"],
                            authors=_authors(row["authors"].split(",")),
                            venue=row["venue"],
                            year=int(year) if year.isdigit() else None,
                            ids={source: row["id"]},
                        )
                    )
                )
    with open(data / "dblp-acm" / "DBLP-ACM_perfectMapping.csv", newline="") as f:
        truth = {(f"dblp:{r['idDBLP']}", f"acm:{r['idACM']}") for r in csv.DictReader(f)}
    return recs, truth


def load_feed(data: Path, limit: int | None = None) -> list[SourceRecord]:
    """The arXiv daily feed as arXiv records (one per id: a re-listed paper counts once)."""
    out: dict[str, SourceRecord] = {}
    with gzip.open(data / "arxiv" / "daily-feed-2025-03-to-2026-04.jsonl.gz", "rb") as f:
        for line in f:
            d = orjson.loads(line)
            aid = str(d.get("id") or "").strip()
            if not aid or aid in out:
                continue
            fd = d.get("feed_date") or ""
            out[aid] = finish(
                SourceRecord(
                    source="arxiv",
                    source_id=aid,
                    arxiv_id=aid,
                    url=d.get("abs"),
                    title=d.get("title"),
                    abstract=d.get("summary"),
                    authors=_authors(d.get("authors") or []),
                    categories=list(d.get("categories") or d.get("cate") or []),
                    feed_date=fd or None,
                    year=int(fd[:4]) if fd[:4].isdigit() else None,
                )
            )
            if limit and len(out) >= limit:
                break
    return list(out.values())


def load_openreview(data: Path) -> list[SourceRecord]:
    """OpenReview accepted papers (papercopilot lists) as `openreview:` records."""
    out = []
    with open(data / "openreview" / "papers.jsonl", "rb") as f:
        for line in f:
            d = orjson.loads(line)
            venue = str(d.get("venue") or "")
            names = d.get("authors") or []
            if isinstance(names, str):
                names = names.split(";")
            out.append(
                finish(
                    SourceRecord(
                        source="openreview",
                        source_id=str(d["openreview_id"]),
                        url="https://openreview.net/forum?id=" + str(d["openreview_id"]),
                        title=d.get("title"),
                        abstract=d.get("abstract"),
                        authors=_authors(names),
                        venue=venue,
                        year=int(venue[-4:]) if venue[-4:].isdigit() else None,
                    )
                )
            )
    return out


def cluster_scored(
    docs: Sequence[Doc], scored: Sequence[tuple[float, int, int]], thr: float, keep: set[int]
) -> list[list[int]]:
    cl = Clusterer(docs)
    cl.link_identities()
    for s, i, j in scored:
        if s < thr:
            break
        if i in keep and j in keep:
            cl.union(i, j)
    return [g for g in cl.groups() if g[0] in keep]


def pairwise(
    groups: Sequence[Sequence[int]], docs: Sequence[Doc], truth: set[tuple[str, str]]
) -> tuple[int, int, int]:
    """(true positive, predicted, true) pair counts over all record pairs."""
    tp = pred = 0
    for g in groups:
        keys = [docs[i].key for i in g]
        for x in range(len(keys)):
            for y in range(x + 1, len(keys)):
                pred += 1
                a, b = sorted((keys[x], keys[y]), key=lambda k: not k.startswith("dblp:"))
                tp += (a, b) in truth
    return tp, pred, len(truth)


def prf(tp: int, pred: int, true: int) -> tuple[float, float, float]:
    p = tp / pred if pred else 1.0
    r = tp / true if true else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


HELD_OUT_SALT = "paperdesk-works-held-out-1"
"""Which true works form the held-out part: a fifth of them, by a hash of their DBLP key
(fixed once; the matcher's rules and threshold were developed without scoring them)."""


def anchor_of(docs: Sequence[Doc], truth: set[tuple[str, str]]) -> list[str]:
    """Each record's true work, named by its DBLP key (an unmatched record: its own key)."""
    twin = {b: a for a, b in truth}
    return [twin.get(d.key, d.key) for d in docs]


def held_out(anchor: str) -> bool:
    return zlib.crc32(f"{HELD_OUT_SALT}:{anchor}".encode()) % 5 == 0


def _score_part(
    docs: Sequence[Doc],
    scored: Sequence[tuple[float, int, int]],
    thr: float,
    part: set[int],
    truth: set[tuple[str, str]],
    pos: dict[str, int],
) -> tuple[int, int, int]:
    return sweep(docs, scored, [thr], part, truth, pos)[thr]


def sweep(
    docs: Sequence[Doc],
    scored: Sequence[tuple[float, int, int]],
    thresholds: Sequence[float],
    part: set[int],
    truth: set[tuple[str, str]],
    pos: dict[str, int],
) -> dict[float, tuple[int, int, int]]:
    """`pairwise` counts of the clustering of `part` at each threshold, in one best-first
    pass (the clustering at a lower threshold continues the one at a higher: same merges,
    same order, as `cluster_scored` makes them)."""
    t = {p for p in truth if pos[p[0]] in part}
    partner: dict[int, set[int]] = {}
    for a, b in t:
        partner.setdefault(pos[a], set()).add(pos[b])
        partner.setdefault(pos[b], set()).add(pos[a])
    cl = Clusterer(docs)
    tp = pred = 0

    def join(i: int, j: int) -> None:
        nonlocal tp, pred
        ra, rb = cl.find(i), cl.find(j)
        if ra == rb:
            return
        ma, mb = list(cl.members[ra]), list(cl.members[rb])
        if not cl.union(i, j):
            return
        pred += len(ma) * len(mb)
        small, big = (ma, set(mb)) if len(ma) < len(mb) else (mb, set(ma))
        tp += sum(len(partner.get(x, set()) & big) for x in small)

    first: dict[tuple[str, str], int] = {}
    for i in sorted(part):  # stage 1, as Clusterer.link_identities (within the part)
        for ident in docs[i].ids:
            j = first.setdefault(ident, i)
            if j != i:
                join(j, i)
    out: dict[float, tuple[int, int, int]] = {}
    ths = sorted(thresholds, reverse=True)
    k = 0
    for s, i, j in scored:
        while k < len(ths) and s < ths[k]:
            out[ths[k]] = (tp, pred, len(t))
            k += 1
        if k == len(ths):
            break
        if i in part and j in part:
            join(i, j)
    for th in ths[k:]:
        out[th] = (tp, pred, len(t))
    return out


def bench_dblp_acm(
    data: Path, show_errors: bool, repeats: int, folds: int, score_held_out: bool
) -> None:
    recs, truth = load_dblp_acm(data)
    docs = make_docs(recs)
    t0 = time.perf_counter()
    c0 = time.process_time()
    scored = sorted(candidate_scores(docs), reverse=True)
    pos = {d.key: i for i, d in enumerate(docs)}
    cand = {(min(i, j), max(i, j)) for _, i, j in scored}
    blocked = sum((min(pos[a], pos[b]), max(pos[a], pos[b])) in cand for a, b in truth)
    anchors = anchor_of(docs, truth)
    held = {i for i, a in enumerate(anchors) if held_out(a)}
    dev = set(range(len(docs))) - held
    print(
        f"DBLP-ACM: {len(recs)} records, {len(truth)} true pairs, {len(scored)} candidate "
        f"pairs, blocking recall {blocked / len(truth):.4f} ({time.perf_counter() - t0:.2f} s, "
        f"{time.process_time() - c0:.2f} CPU-s)\n"
        f"  held out (never tuned on): {len(held)} records, "
        f"{sum(pos[a] in held for a, _ in truth)} true pairs; development: {len(dev)} records"
    )
    grid = [round(0.30 + 0.01 * k, 2) for k in range(66)]
    rows = []
    for rep in range(repeats):
        fold_of = {i: random.Random(f"{rep}:{anchors[i]}").randrange(folds) for i in dev}
        for k in range(folds):
            train = {i for i in dev if fold_of[i] != k}
            test = {i for i in dev if fold_of[i] == k}
            # Max F1 (to 3 decimals) on the other folds; on a plateau the highest threshold
            # (a false merge costs users more than a missed one).
            by_t = sweep(docs, scored, grid, train, truth, pos)
            best = max(grid, key=lambda t, b=by_t: (round(prf(*b[t])[2], 3), t))
            p, r, f = prf(*_score_part(docs, scored, best, test, truth, pos))
            ps, rs, fs = prf(*_score_part(docs, scored, MATCH_THRESHOLD, test, truth, pos))
            rows.append((best, p, r, ps, rs))
            print(
                f"  repeat {rep} fold {k}: chosen threshold {best:.2f} -> P {p:.4f} R {r:.4f}"
                f" | shipped {MATCH_THRESHOLD:.2f} -> P {ps:.4f} R {rs:.4f} F1 {fs:.4f}"
            )
    arr = np.array(rows)
    names = ("chosen-threshold P", "chosen-threshold R", "shipped P", "shipped R")
    for n, col in zip(names, arr[:, 1:].T, strict=True):
        print(
            f"  {n:<19} over {len(rows)} folds: mean {col.mean():.4f} sd {col.std():.4f} "
            f"min {col.min():.4f} max {col.max():.4f}"
        )
    print(
        f"  thresholds chosen: median {float(np.median(arr[:, 0])):.2f}, "
        f"range {arr[:, 0].min():.2f}-{arr[:, 0].max():.2f}; shipped {MATCH_THRESHOLD:.2f}"
    )
    curve = []
    for t in grid[::5]:
        p, r, f = prf(*_score_part(docs, scored, t, dev, truth, pos))
        curve.append(f"{t:.2f}:{f:.4f}")
    print("  F1 by threshold (development records): " + " ".join(curve))
    p, r, f = prf(*_score_part(docs, scored, MATCH_THRESHOLD, dev, truth, pos))
    print(f"  shipped threshold on all development records: P {p:.4f} R {r:.4f} F1 {f:.4f}")
    if score_held_out:
        p, r, f = prf(*_score_part(docs, scored, MATCH_THRESHOLD, held, truth, pos))
        print(f"  HELD-OUT part, shipped threshold: P {p:.4f} R {r:.4f} F1 {f:.4f}")
    if show_errors:  # development records; the held-out part only with --held-out
        print_errors(recs, docs, scored, truth, pos, dev, "")
        if score_held_out:
            print_errors(recs, docs, scored, truth, pos, held, "HELD-OUT ")


def print_errors(
    recs: Sequence[SourceRecord],
    docs: Sequence[Doc],
    scored: Sequence[tuple[float, int, int]],
    truth: set[tuple[str, str]],
    pos: dict[str, int],
    part: set[int],
    label: str,
) -> None:
    """The false negatives (true pairs apart) and false merges of `part` at the shipped
    threshold, with their evidence."""
    groups = cluster_scored(docs, scored, MATCH_THRESHOLD, part)
    gid = {i: n for n, g in enumerate(groups) for i in g}
    for a, b in sorted(truth):
        i, j = pos[a], pos[b]
        if i in part and gid[i] != gid[j]:
            print(
                f"  {label}FN",
                round(score(docs[i], docs[j]), 3),
                features(docs[i], docs[j]),
                recs[i].title,
                "|",
                recs[j].title,
                recs[i].year,
                recs[j].year,
                recs[i].venue,
                "|",
                recs[j].venue,
                [x.name for x in recs[i].authors],
                [x.name for x in recs[j].authors],
            )
    for g in groups:
        if len(g) > 1:
            ks = [docs[i].key for i in g]
            bad = [(x, y) for x in ks for y in ks if x < y and x.startswith("acm")]
            if len(g) > 2 or not any((a, b) in truth for a in ks for b in ks):
                print(
                    f"  {label}FP", [(recs[i].title, recs[i].year, recs[i].venue) for i in g], len(bad)
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument(
        "--errors", action="store_true",
        help="print DBLP-ACM errors (of the held-out part too with --held-out)",
    )
    ap.add_argument("--only", choices=["dblp-acm", "feed"], default=None)
    ap.add_argument("--repeats", type=int, default=3, help="repeated k-fold splits")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--held-out", action="store_true", help="also score the held-out part (at the end only)"
    )
    ap.add_argument(
        "--no-hard-negatives",
        action="store_true",
        help="feed: score only pairs with an OpenReview side (a light recall check)",
    )
    ap.add_argument(
        "--sample",
        action="store_true",
        help="feed: print the 100 random matched pairs (titles, authors, years) to label by hand",
    )
    args = ap.parse_args()
    if args.only in (None, "dblp-acm"):
        bench_dblp_acm(args.data, args.errors, args.repeats, args.folds, args.held_out)
    if args.only in (None, "feed"):
        bench_feed_openreview(args.data, args.out, not args.no_hard_negatives, args.sample)


def openreview_scores(docs: Sequence[Doc], nf: int) -> list[tuple[float, int, int]]:
    """`candidate_scores` of the candidate pairs with an OpenReview side only: two feed
    records hold two arXiv ids and never merge, so their pairs decide nothing here."""
    from paperdesk.resolve.blocking import abstract_keys, candidate_pairs, title_keys
    from paperdesk.resolve.pairs import shared_titles, undecided

    common = shared_titles(docs)
    out = []
    for i, j in candidate_pairs([title_keys(docs), abstract_keys(docs)]):
        if j >= nf or i >= nf:
            a, b = docs[i], docs[j]
            out.append((score(a, b, shared_title=a.title in common or b.title in common), i, j))
    return undecided(docs, out, common)


def _names(r: SourceRecord, most: int = 8) -> str:
    names = [a.name for a in r.authors]
    return "; ".join(names[:most]) + (f" (+{len(names) - most})" if len(names) > most else "")


def bench_feed_openreview(
    data: Path, out: Path, hard_negatives: bool = True, show_sample: bool = False
) -> None:
    t0 = time.perf_counter()
    c0 = time.process_time()
    feed = load_feed(data)
    orv = load_openreview(data)
    recs = feed + orv
    t1 = time.perf_counter()
    docs = make_docs(recs)
    t2 = time.perf_counter()
    if hard_negatives:
        scored = sorted(candidate_scores(docs), reverse=True)
    else:
        scored = sorted(openreview_scores(docs, len(feed)), reverse=True)
    t3 = time.perf_counter()
    cl = Clusterer(docs)
    cl.link_identities()
    for s, i, j in scored:
        if s < MATCH_THRESHOLD:
            break
        cl.union(i, j)
    t4 = time.perf_counter()
    print(
        f"\nfeed x OpenReview: {len(feed)} feed + {len(orv)} OpenReview records; load "
        f"{t1 - t0:.1f}s, features {t2 - t1:.1f}s, blocking+scoring {len(scored)} pairs "
        f"{t3 - t2:.1f}s, clustering {t4 - t3:.1f}s; {time.process_time() - c0:.1f} CPU-s in all"
    )
    nf = len(feed)
    matched: list[tuple[int, int]] = []
    for g in cl.groups():
        o = [i for i in g if i >= nf]
        f = [i for i in g if i < nf]
        if o and f:
            matched.extend((fi, oi) for oi in o for fi in f[:1])
    works_gain = len({cl.find(fi) for fi, _ in matched})
    print(
        f"  works gaining an OpenReview record: {works_gain} "
        f"({len(matched)} OpenReview records of {len(orv)} joined a feed work)"
    )
    truth = silver_pairs(docs, nf)
    for name, pairs in truth.items():
        hit = [(i, j) for i, j in pairs if cl.find(i) == cl.find(j)]
        print(
            f"  recall of same-paper pairs ({name}): {len(hit) / max(1, len(pairs)):.4f} "
            f"({len(hit)} of {len(pairs)})"
        )
    out.mkdir(parents=True, exist_ok=True)
    missed = sorted({p for ps in truth.values() for p in ps if cl.find(p[0]) != cl.find(p[1])})
    with open(out / "feed_openreview_missed.tsv", "w", encoding="utf-8") as fh:
        fh.write("score\tarxiv\topenreview\tarxiv_title\topenreview_title\n")
        for fi, oi in missed:
            fh.write(
                f"{score(docs[fi], docs[oi]):.3f}\t{recs[fi].key}\t{recs[oi].key}\t"
                f"{recs[fi].title_text}\t{recs[oi].title_text}\n"
            )
    print(f"  missed same-paper pairs: {out / 'feed_openreview_missed.tsv'}")
    sample = random.Random(42).sample(matched, min(100, len(matched)))
    path = out / "feed_openreview_sample.tsv"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(
            "n\tscore\tarxiv\topenreview\tarxiv_title\topenreview_title\tarxiv_year\t"
            "openreview_year\tarxiv_authors\topenreview_authors\n"
        )
        for n, (fi, oi) in enumerate(sample, 1):
            fa, oa = recs[fi], recs[oi]
            fh.write(
                f"{n}\t{score(docs[fi], docs[oi]):.3f}\t{fa.key}\t{oa.key}\t{fa.title_text}\t"
                f"{oa.title_text}\t{fa.year}\t{oa.year}\t{_names(fa)}\t{_names(oa)}\n"
            )
            if show_sample:
                print(
                    f"  [{n}] {score(docs[fi], docs[oi]):.3f} {fa.key} ({fa.year}) | {oa.key} "
                    f"({oa.venue}, {oa.year})\n      A: {fa.title_text}\n      O: {oa.title_text}"
                    f"\n      A: {_names(fa)}\n      O: {_names(oa)}"
                )
    print(f"  random sample of {len(sample)} matched pairs for hand-checking: {path}")
    if not hard_negatives:
        return
    # Hard negatives: distinct feed papers (different arXiv ids) with the most similar
    # abstracts among all LSH candidates; their content score must stay below threshold.
    ff = []
    for _s, i, j in scored:
        if i < nf and j < nf:
            f = features(docs[i], docs[j])
            if "abstract" in f:
                ff.append((f["abstract"], i, j))
    ff.sort(reverse=True)
    for n in (100, 1000):
        top = ff[:n]
        cs = [content_score(docs[i], docs[j]) for _a, i, j in top]
        rates = " ".join(
            f"{t:.2f}:{sum(c >= t for c in cs)}" for t in (0.5, 0.6, 0.7, MATCH_THRESHOLD, 0.9)
        )
        print(
            f"  hard negatives: top {len(top)} distinct feed pairs by abstract overlap "
            f"({top[-1][0]:.2f}..{top[0][0]:.2f}); pairs whose content score reaches the "
            f"threshold, by threshold: {rates} (with identifier constraints: 0 merged)"
        )
    hn = out / "feed_hard_negatives.tsv"
    with open(hn, "w", encoding="utf-8") as fh:
        fh.write("content_score\tabstract_overlap\ta\tb\ta_title\tb_title\n")
        for a, i, j in ff[:200]:
            fh.write(
                f"{content_score(docs[i], docs[j]):.3f}\t{a:.3f}\t{recs[i].key}\t"
                f"{recs[j].key}\t{recs[i].title_text}\t{recs[j].title_text}\n"
            )
    print(f"  top 200 hard negatives with their scores: {hn}")


def silver_pairs(docs: Sequence[Doc], nf: int) -> dict[str, list[tuple[int, int]]]:
    """Feed × OpenReview pairs that are one paper by evidence independent of the matcher's
    blocking and scores: (a) the same folded title and a shared family name; (b) the same
    set of three or more family names and titles sharing half their words (a retitled
    camera-ready). Not hand-labelled: what is missed is written out for checking."""
    by_title: dict[str, list[int]] = {}
    by_names: dict[frozenset[str], list[int]] = {}
    for i in range(nf):
        d = docs[i]
        if d.title:
            by_title.setdefault(d.title, []).append(i)
        if len(d.surnames) >= 3:
            by_names.setdefault(d.surnames, []).append(i)
    same_title, same_names = [], []
    for j in range(nf, len(docs)):
        o = docs[j]
        for i in by_title.get(o.title, []) if o.title else []:
            if docs[i].surnames & o.name_tokens or o.surnames & docs[i].name_tokens:
                same_title.append((i, j))
        for i in by_names.get(o.surnames, []) if len(o.surnames) >= 3 else []:
            a, b = docs[i].title_tokens, o.title_tokens
            inter = len(np.intersect1d(a, b))
            if a.size and b.size and inter / (a.size + b.size - inter) >= 0.5:
                same_names.append((i, j))
    both = sorted(set(same_title) | set(same_names))
    return {"a: same title": same_title, "b: same authors, similar title": same_names, "a or b": both}


def content_score(a: Doc, b: Doc) -> float:
    """The pair score ignoring identifier conflicts (what text alone would decide)."""
    return score(dataclasses.replace(a, ids=[]), b)


if __name__ == "__main__":
    main()
