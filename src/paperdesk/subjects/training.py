"""Train the subject model from the shared arXiv daily feed with a time-based split, and
measure it on the held-out latest month(s). Used by `paperdesk subjects train` and
`bench/subjects.py`, so the figure the command prints is the benchmark's figure."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from paperdesk.store.base import Store
from paperdesk.subjects.classifier import (
    SubjectModel,
    TrainConfig,
    _tfidf,
    hashed_counts,
    train,
)
from paperdesk.subjects.context import History, context_keys, online_evidence
from paperdesk.subjects.feed import Example, read_feed, time_split
from paperdesk.subjects.taxonomy import Taxonomy, load, split_categories


@dataclass
class TrainReport:
    train_papers: int
    calib_papers: int
    test_papers: int
    train_months: list[str]
    test_months: list[str]
    classes: int
    seconds: float
    metrics: dict[str, Any] = field(default_factory=dict)


def train_from_feed(
    path: str | Path, config: TrainConfig | None = None, *, test_months: int = 1
) -> tuple[SubjectModel, TrainReport, list[Example]]:
    """(model, report, test examples): train on all but the last `test_months` + 1 months,
    calibrate on the month before the test months, evaluate on the test months."""
    return train_from_examples(list(read_feed(path)), config, test_months=test_months)


def examples_from_store(store: Store, tax: Taxonomy | None = None) -> list[Example]:
    """The store's records that came with arXiv subjects, as labelled examples (dated by
    their feed day, else their first submission or publication date, else their year),
    in date order: a user's own store trains the model (`paperdesk subjects train --store`)."""
    tax = tax or load()
    out = []
    for _seq, rec in store.iter_changed(0):
        split = split_categories(rec.categories, tax)
        if not split.subjects or not ((rec.title or "").strip() or (rec.abstract or "").strip()):
            continue
        date = rec.feed_date or (rec.submitted or rec.published or "")[:10]
        if len(date) < 7 and rec.year:
            date = f"{rec.year:04d}-01-01"
        if len(date) < 7:
            continue
        out.append(
            Example(
                id=rec.key,
                title=rec.title or "",
                abstract=rec.abstract or "",
                subjects=tuple(split.subjects),
                date=date,
                context=tuple(context_keys([a.name for a in rec.authors], rec.venue, rec.comments)),
            )
        )
    out.sort(key=lambda e: e.date)
    return out


def train_from_examples(
    examples: list[Example], config: TrainConfig | None = None, *, test_months: int = 1
) -> tuple[SubjectModel, TrainReport, list[Example]]:
    """`train_from_feed` on examples already read."""
    tr, ca, te = time_split(examples, test_months=test_months)
    t0 = time.perf_counter()
    model = train(tr, ca, config)
    seconds = time.perf_counter() - t0
    report = TrainReport(
        train_papers=len(tr),
        calib_papers=len(ca),
        test_papers=len(te),
        train_months=sorted({e.month for e in tr}),
        test_months=sorted({e.month for e in te}),
        classes=len(model.classes),
        seconds=round(seconds, 1),
        metrics=evaluate(model, te, context=context_for(model, tr + ca, te)),
    )
    return model, report, te


def context_for(
    model: SubjectModel, before: Sequence[Example], test: Sequence[Example]
) -> dict[str, NDArray[np.float64]] | None:
    """Context evidence of the test papers as a daily run sees it: the histories of every
    paper of an earlier day (`before`, then the test papers' earlier days)."""
    if not model.context_weights or not test:
        return None
    hist = History()
    for e in before:
        hist.add(e.context, e.subjects, e.date)
    return online_evidence(hist, test, model.classes, model.prior, sorted(model.context_weights))


@dataclass
class Scores:
    """Per-paper model output on a labelled set, for metrics and figures."""

    gold: list[str]
    primary_proba: NDArray[np.float64]
    classes: list[str]

    def ranked(self) -> NDArray[np.int64]:
        return np.argsort(-self.primary_proba, axis=1)


def score_examples(
    model: SubjectModel,
    examples: Sequence[Example],
    context: Mapping[str, NDArray[np.float64]] | None = None,
    counts: sp.csr_matrix | None = None,
) -> Scores:
    """`context`: the examples' context evidence; `counts`: their hashed term counts."""
    if counts is not None:
        x = _tfidf(counts, model.idf)
    else:
        x = model.features([(e.title, e.abstract) for e in examples])
    return Scores([e.primary for e in examples], model.primary_proba(x, context), model.classes)


def rolling(
    examples: Sequence[Example],
    test_months: Sequence[str],
    config: TrainConfig | None = None,
    *,
    progress: Any = None,
) -> list[dict[str, Any]]:
    """The rolling time split: for each test month, train on every month before the month
    before it, calibrate on that month, test on the month — text only and with context
    evidence (each paper with the histories of every paper of an earlier day, as a daily
    run sees them). One dict of figures per month."""
    cfg = config or TrainConfig(member=False)
    examples = list(examples)
    counts = hashed_counts(examples, cfg)
    months = sorted({e.month for e in examples})
    out = []
    for m in test_months:
        k = months.index(m)
        if k < 2:
            raise ValueError(f"month {m}: need two earlier months")
        calib_month = months[k - 1]
        tr = [i for i, e in enumerate(examples) if e.month < calib_month]
        ca = [i for i, e in enumerate(examples) if e.month == calib_month]
        te = [i for i, e in enumerate(examples) if e.month == m]
        t0 = time.process_time()
        model = train(
            [examples[i] for i in tr],
            [examples[i] for i in ca],
            cfg,
            hashed=(counts[tr], counts[ca]),
        )
        seconds = time.process_time() - t0
        test = [examples[i] for i in te]
        row: dict[str, Any] = {
            "month": m, "train": len(tr), "calib": len(ca), "cpu_s": round(seconds, 1),
            "temperature": round(model.temperature, 4),
            "context_weights": {k: round(w, 3) for k, w in model.context_weights.items()},
        }
        text = evaluate(model, test, counts=counts[te])
        row["text"] = {k2: text[k2] for k2 in ("papers", "top1", "top3", "ece")}
        if cfg.context and model.context_weights:
            ctx = context_for(model, [e for e in examples if e.month < m], test)
            assert ctx is not None
            both = evaluate(model, test, context=ctx, counts=counts[te])
            row["context"] = {k2: both[k2] for k2 in ("papers", "top1", "top3", "ece")}
            row["with_history"] = round(
                float(np.mean(sum(np.abs(v).sum(axis=1) for v in ctx.values()) > 0)), 4
            )
        out.append(row)
        if progress:
            progress(row)
    return out


def evaluate(
    model: SubjectModel,
    examples: Sequence[Example],
    min_support: int = 50,
    *,
    context: Mapping[str, NDArray[np.float64]] | None = None,
    counts: sp.csr_matrix | None = None,
) -> dict[str, Any]:
    """Top-1 accuracy and top-3 recall of the primary subject (over all test papers: a
    primary the model does not know counts as a miss), macro-F1 over the subjects with at
    least `min_support` test papers, and expected calibration error of the top-1
    probability (15 equal-width bins)."""
    if not examples:
        return {}
    s = score_examples(model, examples, context, counts)
    ranked = s.ranked()
    classes = np.array(s.classes)
    top = classes[ranked[:, :3]]
    gold = np.array(s.gold)
    hit1 = top[:, 0] == gold
    hit3 = (top == gold[:, None]).any(axis=1)
    conf = s.primary_proba[np.arange(len(gold)), ranked[:, 0]]
    support = Counter(s.gold)
    f1s = {}
    for c, n in support.items():
        if n < min_support:
            continue
        tp = int(np.sum((top[:, 0] == c) & (gold == c)))
        pred = int(np.sum(top[:, 0] == c))
        prec = tp / pred if pred else 0.0
        rec = tp / n
        f1s[c] = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {
        "papers": len(gold),
        "top1": round(float(hit1.mean()), 4),
        "top3": round(float(hit3.mean()), 4),
        "macro_f1": round(float(np.mean(list(f1s.values()))), 4) if f1s else None,
        "macro_f1_subjects": len(f1s),
        "f1": {c: round(v, 4) for c, v in sorted(f1s.items())},
        "ece": round(ece(conf, hit1), 4),
        "unknown_primary": int(sum(1 for g in s.gold if g not in set(s.classes))),
    }


def ece(conf: NDArray[np.float64], hit: NDArray[np.bool_], bins: int = 15) -> float:
    """Expected calibration error: |accuracy - confidence| averaged over confidence bins,
    weighted by bin size."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            total += m.mean() * abs(hit[m].mean() - conf[m].mean())
    return float(total)
