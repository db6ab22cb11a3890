"""Subject classifier quality on real labels: a rolling time split over the shared arXiv
daily feed (for each month: train on the months before the month before it, calibrate on
that month, test on it; text alone and with context evidence — the authors' earlier
subjects), the last month held out; then the shipped model and OpenReview venues.

    nice -n 10 .venv/bin/python bench/subjects.py                      # rolling, 6 months
    nice -n 10 .venv/bin/python bench/subjects.py --rolling 0 --shipped  # the shipped model
    nice -n 10 .venv/bin/python bench/subjects.py --train    # trains first (timed)

Prints top-1 accuracy and top-3 recall of the primary subject, macro-F1 over subjects with
≥ 50 test papers, the expected calibration error with its reliability table, precision /
recall of the full predicted subject lists (secondaries included), prediction speed, and
per-venue agreement on OpenReview papers. Saves `docs/subjects-confusion.png` (confusion
matrix of the most frequent test subjects + reliability diagram).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

import numpy as np

from paperdesk.subjects.classifier import (
    SubjectModel,
    TrainConfig,
    default_model_path,
    load_model,
)
from paperdesk.subjects.feed import read_feed, time_split
from paperdesk.subjects.training import (
    context_for,
    evaluate,
    rolling,
    score_examples,
    train_from_feed,
)

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PAPERDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
FEED = SHARED / "arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"
OPENREVIEW = SHARED / "openreview/papers.jsonl"

# What a paper at each venue is plausibly filed under on arXiv (primary).
VENUE_SUBJECTS = {
    "corl": {"cs.RO"},
    "3dv": {"cs.CV", "cs.GR"},
    "colm": {"cs.CL"},
    "aistats": {"stat.ML", "cs.LG", "math.ST", "stat.ME"},
    "alt": {"cs.LG", "stat.ML", "cs.DS", "math.ST"},
    "acmmm": {"cs.CV", "cs.MM", "cs.SD", "eess.AS", "eess.IV"},
    "www": {"cs.IR", "cs.SI", "cs.CY", "cs.CL", "cs.CR", "cs.LG", "cs.AI"},
}


HELD_OUT_MONTH = "2026-04"
"""The feed's last month: scored by the rolling split only with `--held-out`, at the end."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", action="store_true", help="train (and save) before measuring")
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--png", type=Path, default=ROOT / "docs/subjects-confusion.png")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument(
        "--rolling", type=int, default=6, help="rolling split over this many months (0: off)"
    )
    ap.add_argument("--held-out", action="store_true", help=f"also roll onto {HELD_OUT_MONTH}")
    ap.add_argument("--half-life", type=float, default=None, help="recency half-life, months")
    ap.add_argument("--shipped", action="store_true", help="measure the shipped model too")
    args = ap.parse_args()
    if args.rolling or args.held_out:
        rolling_bench(args)
    if args.shipped or args.train:
        shipped(args)


def rolling_bench(args: argparse.Namespace) -> None:
    """Train on the months before, calibrate on the month before, test on each month."""
    t0 = time.perf_counter()
    examples = list(read_feed(FEED))
    months = sorted({e.month for e in examples})
    dev = [m for m in months if m < HELD_OUT_MONTH][-args.rolling :] if args.rolling else []
    cfg = TrainConfig(member=False)
    if args.half_life is not None:
        cfg.half_life_months = args.half_life
    print(
        f"rolling split over {dev}{' + held-out ' + HELD_OUT_MONTH if args.held_out else ''}"
        f" ({len(examples):,} papers; recency half-life {cfg.half_life_months or 'off'})"
    )

    def show(r: dict[str, object]) -> None:
        t, c = r["text"], r.get("context") or {}
        assert isinstance(t, dict) and isinstance(c, dict)
        print(
            f"  {r['month']}: {t['papers']:>5} papers, train {r['train']:,}; text top-1 "
            f"{t['top1']:.4f} top-3 {t['top3']:.4f} ECE {t['ece']:.4f} | with context top-1 "
            f"{c.get('top1', 0):.4f} top-3 {c.get('top3', 0):.4f} ECE {c.get('ece', 0):.4f} "
            f"(weights {r['context_weights']}, {r.get('with_history', 0):.0%} with history; "
            f"{r['cpu_s']} CPU-s)",
            flush=True,
        )

    rows = rolling(examples, dev, cfg, progress=show) if dev else []
    for kind in ("text", "context") if rows else ():
        top1 = np.array([r[kind]["top1"] for r in rows])
        top3 = np.array([r[kind]["top3"] for r in rows])
        ece = np.array([r[kind]["ece"] for r in rows])
        print(
            f"  {kind:<8} mean over {len(rows)} months: top-1 {top1.mean():.4f} (min "
            f"{top1.min():.4f}) top-3 {top3.mean():.4f} (min {top3.min():.4f}) ECE "
            f"{ece.mean():.4f} (max {ece.max():.4f})"
        )
    if args.held_out:
        print(f"HELD-OUT month {HELD_OUT_MONTH}:")
        rolling(examples, [HELD_OUT_MONTH], cfg, progress=show)
    print(f"  ({time.perf_counter() - t0:.0f} s wall, {time.process_time():.0f} CPU-s)")


def shipped(args: argparse.Namespace) -> None:

    out: dict[str, object] = {}
    tr, ca, test = time_split(list(read_feed(FEED)))
    if args.train:
        model, report, test = train_from_feed(FEED)
        path = model.save(args.model or default_model_path())
        out["train"] = {k: v for k, v in report.__dict__.items() if k != "metrics"}
        print(f"trained in {report.seconds:.0f}s on {report.train_papers:,} papers -> {path}")
    else:
        path = args.model or default_model_path()
        model = load_model(path)
    context = context_for(model, tr + ca, test)
    print(f"context weights {model.context_weights or 'none (text alone)'}")
    out["model_bytes"] = path.stat().st_size
    out["model"] = {k: model.meta.get(k) for k in ("model_id", "train_months", "calib_months")}
    print(f"model {path} ({path.stat().st_size / 1e6:.2f} MB), {len(model.classes)} subjects")

    m = evaluate(model, test, context=context)
    out["test"] = m
    print(
        f"\nheld-out month(s) {sorted({e.month for e in test})}: {m['papers']:,} papers\n"
        f"  primary top-1 accuracy   {m['top1']:.4f}   (target >= 0.75)\n"
        f"  primary top-3 recall     {m['top3']:.4f}   (target >= 0.93)\n"
        f"  macro-F1 ({m['macro_f1_subjects']} subjects with >= 50 test papers)  {m['macro_f1']:.4f}\n"
        f"  ECE (top-1 probability, 15 bins)  {m['ece']:.4f}\n"
        f"  test papers whose primary the model cannot predict: {m['unknown_primary']}"
    )
    for c, f in m["f1"].items():
        print(f"    F1 {c:<20} {f:.3f}")

    scores = score_examples(model, test, context)
    out["reliability"] = reliability(scores)
    print("\n  reliability (confidence bin: papers, mean confidence, accuracy)")
    for row in out["reliability"]:
        print(f"    {row['bin']}: {row['n']:>5}  {row['confidence']:.3f}  {row['accuracy']:.3f}")

    out["subject_lists"] = list_quality(model, test)
    s = out["subject_lists"]
    print(
        f"\n  full predicted subject lists vs the papers' lists (secondaries included):\n"
        f"    micro precision {s['precision']:.3f}  recall {s['recall']:.3f}  "
        f"(mean {s['mean_predicted']:.2f} predicted, {s['mean_gold']:.2f} given per paper)"
    )

    t0 = time.perf_counter()
    model.predict([(e.title, e.abstract) for e in test])
    dt = time.perf_counter() - t0
    out["predict_papers_per_s"] = round(len(test) / dt)
    print(f"\n  predict: {len(test) / dt:,.0f} papers/s (one process, batches of {len(test):,})")

    out["openreview"] = venues(model)
    print("\nOpenReview venues (sanity check: plausible primary subject for the venue)")
    for v, r in out["openreview"].items():
        print(
            f"  {v:<8} {r['papers']:>4} papers  primary plausible {r['top1']:.3f}  "
            f"top-3 plausible {r['top3']:.3f}  most predicted: {r['most']}"
        )

    plot(scores, out["reliability"], args.png)
    print(f"\nconfusion matrix + reliability diagram: {args.png.relative_to(ROOT)}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


def reliability(scores, bins: int = 10) -> list[dict[str, object]]:
    ranked = scores.ranked()
    conf = scores.primary_proba[np.arange(len(scores.gold)), ranked[:, 0]]
    hit = np.array(scores.classes)[ranked[:, 0]] == np.array(scores.gold)
    edges = np.linspace(0, 1, bins + 1)
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (conf >= lo) & (conf < hi if hi < 1 else conf <= hi)
        if m.any():
            rows.append(
                {
                    "bin": f"{lo:.1f}-{hi:.1f}",
                    "n": int(m.sum()),
                    "confidence": round(float(conf[m].mean()), 4),
                    "accuracy": round(float(hit[m].mean()), 4),
                }
            )
    return rows


def list_quality(model: SubjectModel, test) -> dict[str, float]:
    preds = model.predict([(e.title, e.abstract) for e in test])
    tp = n_pred = n_gold = 0
    for p, e in zip(preds, test, strict=True):
        got = {s.subject for s in p.subjects}
        gold = set(e.subjects)
        tp += len(got & gold)
        n_pred += len(got)
        n_gold += len(gold)
    return {
        "precision": round(tp / n_pred, 4),
        "recall": round(tp / n_gold, 4),
        "mean_predicted": round(n_pred / len(test), 2),
        "mean_gold": round(n_gold / len(test), 2),
    }


def venues(model: SubjectModel) -> dict[str, dict[str, object]]:
    papers = [json.loads(line) for line in OPENREVIEW.open()]
    out = {}
    for prefix, ok in VENUE_SUBJECTS.items():
        sel = [p for p in papers if p["venue"].rstrip("0123456789") == prefix]
        x = model.features([(p.get("title"), p.get("abstract")) for p in sel])
        proba = model.primary_proba(x)
        ranked = np.argsort(-proba, axis=1)[:, :3]
        tops = [[model.classes[j] for j in row] for row in ranked]
        out[prefix] = {
            "papers": len(sel),
            "top1": round(float(np.mean([t[0] in ok for t in tops])), 4),
            "top3": round(float(np.mean([bool(set(t) & ok) for t in tops])), 4),
            "most": ", ".join(f"{c} {n}" for c, n in Counter(t[0] for t in tops).most_common(3)),
        }
    return out


def plot(scores, rel: list[dict[str, object]], png: Path, k: int = 15) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gold = scores.gold
    pred = [scores.classes[i] for i in scores.ranked()[:, 0]]
    top = [c for c, _ in Counter(gold).most_common(k)]
    labels = top + ["other"]
    ix = {c: i for i, c in enumerate(top)}
    cm = np.zeros((len(labels), len(labels)))
    for g, p in zip(gold, pred, strict=True):
        cm[ix.get(g, k), ix.get(p, k)] += 1
    rows = cm.sum(axis=1, keepdims=True)
    norm = np.divide(cm, rows, out=np.zeros_like(cm), where=rows > 0)
    fig, (a, b) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={"width_ratios": [1.4, 1]})
    a.imshow(norm, cmap="Blues", vmin=0, vmax=1)
    a.set_xticks(range(len(labels)), labels, rotation=90, fontsize=8)
    a.set_yticks(
        range(len(labels)),
        [f"{c} ({int(n)})" for c, n in zip(labels, rows[:, 0], strict=True)],
        fontsize=8,
    )
    for i in range(len(labels)):
        for j in range(len(labels)):
            if norm[i, j] >= 0.05:
                a.text(
                    j,
                    i,
                    f"{norm[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if norm[i, j] > 0.5 else "black",
                )
    a.set_xlabel("predicted primary")
    a.set_ylabel("arXiv primary (test papers)")
    a.set_title("Primary subject, held-out month (row-normalised)")
    conf = [float(r["confidence"]) for r in rel]
    acc = [float(r["accuracy"]) for r in rel]
    b.plot([0, 1], [0, 1], "k--", lw=1, label="perfectly calibrated")
    b.plot(conf, acc, "o-", label="model")
    for c, y, r in zip(conf, acc, rel, strict=True):
        b.annotate(str(r["n"]), (c, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
    b.set_xlabel("predicted probability of the top subject")
    b.set_ylabel("fraction correct")
    b.set_title("Reliability (n papers per bin)")
    b.legend(loc="upper left")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
