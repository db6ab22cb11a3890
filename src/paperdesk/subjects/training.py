"""Train the subject model from the shared arXiv daily feed with a time-based split, and
measure it on the held-out latest month(s). Used by `paperdesk subjects train` and
`bench/subjects.py`, so the figure the command prints is the benchmark's figure."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from paperdesk.subjects.classifier import SubjectModel, TrainConfig, train
from paperdesk.subjects.feed import Example, read_feed, time_split


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
    examples = list(read_feed(path))
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
        metrics=evaluate(model, te),
    )
    return model, report, te


@dataclass
class Scores:
    """Per-paper model output on a labelled set, for metrics and figures."""

    gold: list[str]
    primary_proba: NDArray[np.float64]
    classes: list[str]

    def ranked(self) -> NDArray[np.int64]:
        return np.argsort(-self.primary_proba, axis=1)


def score_examples(model: SubjectModel, examples: Sequence[Example]) -> Scores:
    x = model.features([(e.title, e.abstract) for e in examples])
    return Scores([e.primary for e in examples], model.primary_proba(x), model.classes)


def evaluate(
    model: SubjectModel, examples: Sequence[Example], min_support: int = 50
) -> dict[str, Any]:
    """Top-1 accuracy and top-3 recall of the primary subject (over all test papers: a
    primary the model does not know counts as a miss), macro-F1 over the subjects with at
    least `min_support` test papers, and expected calibration error of the top-1
    probability (15 equal-width bins)."""
    if not examples:
        return {}
    s = score_examples(model, examples)
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
