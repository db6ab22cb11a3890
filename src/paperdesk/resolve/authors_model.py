"""The pairwise "same person?" model: gradient-boosted trees, shipped as JSON.

Trained by `bench/authors.py --train` on labelled OpenReview signature pairs (see
docs/benchmarks.md for the protocol) with scikit-learn's GradientBoostingClassifier, then
exported tree by tree to `authors_model.json` — a few tens of kB, no pickle (loading a
pickle runs code), and inference here needs only numpy.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from paperdesk.resolve.authors_cluster import Linkage
from paperdesk.resolve.authors_features import FEATURES

MODEL_FILE = "authors_model.json"


@dataclass
class Tree:
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray

    def __post_init__(self) -> None:
        # Leaves step to themselves (feature 0, threshold +inf): `predict` then walks a
        # fixed number of levels with no test for having arrived, a third of the numpy
        # calls per level of the walk it replaces (same leaves, so the same values).
        leaf = self.left < 0
        own = np.arange(len(self.left))
        self._left = np.where(leaf, own, self.left)
        self._right = np.where(leaf, own, self.right)
        self._feature = np.where(leaf, 0, self.feature)
        self._threshold = np.where(leaf, np.inf, self.threshold)
        self._depth, todo = 0, [(0, 0)]
        while todo:
            k, d = todo.pop()
            self._depth = max(self._depth, d)
            if not leaf[k]:
                todo += [(int(self.left[k]), d + 1), (int(self.right[k]), d + 1)]

    def predict(self, x: np.ndarray) -> np.ndarray:
        node = np.zeros(x.shape[0], dtype=np.int64)
        flat = x.ravel()
        base = np.arange(x.shape[0], dtype=np.int64) * x.shape[1]
        for _ in range(self._depth):
            go_left = flat[base + self._feature[node]] <= self._threshold[node]
            node = np.where(go_left, self._left[node], self._right[node])
        return self.value[node]


@dataclass
class PairModel:
    """P(same person) for feature rows, plus the clustering threshold chosen with it."""

    features: tuple[str, ...]
    init: float
    learning_rate: float
    trees: list[Tree]
    threshold: float
    """Average-linkage distance (1 − P) below which two clusters merge."""
    meta: dict[str, Any]
    strong: float = 0.0
    """A pair distance under which clusters merge up to the `loose` average (see
    `authors_cluster.Linkage`); 0 for plain average linkage."""
    loose: float = 0.0

    @property
    def linkage(self) -> Linkage:
        """The clustering rule chosen with this model."""
        return Linkage(self.threshold, self.strong, self.loose)

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        if x.shape[1] != len(self.features):
            raise ValueError(f"model expects {len(self.features)} features, got {x.shape[1]}")
        raw = np.full(x.shape[0], self.init, dtype=np.float64)
        # scikit-learn compares float32 inputs with float64 thresholds: do the same.
        xx = x.astype(np.float32).astype(np.float64)
        for tree in self.trees:
            raw += self.learning_rate * tree.predict(xx)
        return 1.0 / (1.0 + np.exp(-raw))

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "init": self.init,
            "learning_rate": self.learning_rate,
            "threshold": self.threshold,
            "strong": self.strong,
            "loose": self.loose,
            "meta": self.meta,
            "trees": [
                {
                    "left": t.left.tolist(),
                    "right": t.right.tolist(),
                    "feature": t.feature.tolist(),
                    "threshold": t.threshold.tolist(),
                    "value": t.value.tolist(),
                }
                for t in self.trees
            ],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PairModel:
        trees = [
            Tree(
                left=np.asarray(t["left"], dtype=np.int64),
                right=np.asarray(t["right"], dtype=np.int64),
                feature=np.asarray(t["feature"], dtype=np.int64),
                threshold=np.asarray(t["threshold"], dtype=np.float64),
                value=np.asarray(t["value"], dtype=np.float64),
            )
            for t in d["trees"]
        ]
        return cls(
            features=tuple(d["features"]),
            init=float(d["init"]),
            learning_rate=float(d["learning_rate"]),
            trees=trees,
            threshold=float(d["threshold"]),
            meta=dict(d.get("meta", {})),
            strong=float(d.get("strong", 0.0)),
            loose=float(d.get("loose", 0.0)),
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), separators=(",", ":")) + "\n")


def train_pair_model(
    x: np.ndarray,
    y: np.ndarray,
    *,
    threshold: float = 0.5,
    strong: float = 0.0,
    loose: float = 0.0,
    seed: int = 0,
    sample_weight: np.ndarray | None = None,
    **meta: Any,
) -> PairModel:
    """Fit gradient-boosted trees on labelled pairs and convert them to a `PairModel`."""
    from sklearn.ensemble import GradientBoostingClassifier

    gbm = GradientBoostingClassifier(
        n_estimators=150, max_depth=4, learning_rate=0.1, subsample=0.8, random_state=seed
    )
    gbm.fit(x.astype(np.float32), y, sample_weight=sample_weight)
    prior = float(np.clip(gbm.init_.predict_proba(x[:1])[0, 1], 1e-9, 1 - 1e-9))
    trees = []
    for est in gbm.estimators_[:, 0]:
        t = est.tree_
        trees.append(
            Tree(
                left=t.children_left.astype(np.int64),
                right=t.children_right.astype(np.int64),
                feature=t.feature.astype(np.int64),
                threshold=t.threshold.astype(np.float64),
                value=t.value[:, 0, 0].astype(np.float64),
            )
        )
    model = PairModel(
        features=FEATURES,
        init=float(np.log(prior / (1 - prior))),
        learning_rate=gbm.learning_rate,
        trees=trees,
        threshold=threshold,
        meta=dict(meta),
        strong=strong,
        loose=loose,
    )
    check = x[: min(len(x), 2000)].astype(np.float32)
    if not np.allclose(model.predict_proba(check), gbm.predict_proba(check)[:, 1], atol=1e-4):
        raise RuntimeError("exported trees disagree with scikit-learn's predictions")
    return model


@lru_cache(maxsize=1)
def default_model() -> PairModel:
    """The model shipped in the package."""
    text = resources.files("paperdesk.resolve").joinpath(MODEL_FILE).read_text("utf-8")
    model = PairModel.from_json(json.loads(text))
    # A new model re-clusters everything on the next resolve (see resolve_authors).
    model.meta["version"] = hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
    return model
