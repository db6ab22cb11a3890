"""Predict arXiv subjects from a title and abstract.

Model: hashed word uni+bigrams (no vocabulary to ship) with sublinear TF-IDF, and two sets
of linear one-vs-rest scorers trained with SGD (logistic loss):

- *primary*: which subject is the paper's primary one. Scores are turned into a
  distribution with a softmax whose temperature is fitted on a held-out calibration month,
  so `primary_probability` means what it says (checked by the ECE figure in
  `bench/subjects.py`).
- *member*: whether a subject is among the paper's subjects at all (cross-lists included),
  one sigmoid per subject with one Platt scaling fitted on the same calibration month.
  Secondary subjects are ranked by this.

Weights are pruned to the largest `keep` per subject and quantised to int8, then saved as a
plain `.npz` (no pickle: loading a model file never runs code) of a few MB.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import minimize, minimize_scalar

from paperdesk.settings import SUBJECTS_MODEL
from paperdesk.subjects.context import KINDS, History, online_evidence
from paperdesk.subjects.feed import Example

FORMAT = "paperdesk-subjects/1"
MAX_CHARS = 20_000
"""Longer inputs are cut: an abstract is ~1–2k characters, and hostile or mis-parsed input
(a whole paper body in the abstract field) must not cost unbounded time."""

MODEL_ENV = SUBJECTS_MODEL.env


@dataclass
class TrainConfig:
    n_features_log2: int = 18
    min_examples: int = 20
    """Subjects with fewer training papers as primary are not predicted (too little to learn)."""
    epochs: int = 5
    alpha: float = 1e-6
    keep: int = 10_000
    """Non-zero weights kept per subject and scorer."""
    title_repeat: int = 2
    """The title counts this many times: it is short and dense with topic words."""
    n_jobs: int = 2
    half_life_months: float = 0.0
    """Training papers weigh 0.5 ** (months before the latest training month / this): the
    mix of subjects drifts month to month (0: all months weigh alike)."""
    member: bool = True
    """Also fit the membership scorers (secondary subjects); the rolling benchmark of the
    primary subject skips them."""
    context: bool = True
    """Fit the weights of the context evidence (authors' earlier subjects, venue;
    `paperdesk.subjects.context`) on the calibration month."""
    context_kinds: tuple[str, ...] = KINDS
    """The kinds of context evidence weighed (`paperdesk.subjects.context.KINDS`)."""


@dataclass(frozen=True)
class Scored:
    subject: str
    probability: float
    """P(subject is one of the paper's subjects)."""
    primary_probability: float
    """P(subject is the paper's primary subject)."""


@dataclass(frozen=True)
class Prediction:
    subjects: list[Scored]
    """Predicted primary first, then secondaries by `probability`; empty without text."""

    @property
    def primary(self) -> Scored | None:
        return self.subjects[0] if self.subjects else None


@dataclass
class _Linear:
    """One-vs-rest linear scorers, stored sparse (classes x features)."""

    weights: sp.csr_matrix
    bias: NDArray[np.float32]

    def scores(self, x: sp.csr_matrix) -> NDArray[np.float64]:
        return np.asarray((x @ self.weights.T).toarray(), dtype=np.float64) + self.bias


@dataclass
class SubjectModel:
    classes: list[str]
    idf: NDArray[np.float32]
    primary: _Linear
    member: _Linear
    temperature: float
    platt: tuple[float, float]
    meta: dict[str, Any] = field(default_factory=dict)
    context_weights: dict[str, float] = field(default_factory=dict)
    """Weight of each kind of context evidence (`paperdesk.subjects.context.KINDS`) in the
    primary logits; empty: the text alone (a model trained without context)."""

    @property
    def prior(self) -> NDArray[np.float64]:
        """Share of each class among the training primaries (the context evidence's prior)."""
        p = self.meta.get("prior")
        if not p or len(p) != len(self.classes):
            return np.full(len(self.classes), 1.0 / len(self.classes))
        arr = np.asarray(p, dtype=np.float64)
        return np.asarray(arr / arr.sum())

    # -- features --
    def features(self, items: Sequence[tuple[str | None, str | None]]) -> sp.csr_matrix:
        texts = _texts(items, int(self.meta.get("title_repeat", 2)))
        return _tfidf(_hash(texts, int(self.meta["n_features_log2"])), self.idf)

    # -- probabilities --
    def primary_proba(
        self, x: sp.csr_matrix, context: Mapping[str, NDArray[np.float64]] | None = None
    ) -> NDArray[np.float64]:
        """P(primary = c); `context`: the papers' context evidence by kind (rows of zeros
        for papers without any), `paperdesk.subjects.context.evidence`."""
        z = self.primary.scores(x) / self.temperature
        for kind, w in self.context_weights.items():
            if context is not None and kind in context and w:
                z = z + w * context[kind]
        return _softmax(z)

    def member_proba(self, x: sp.csr_matrix) -> NDArray[np.float64]:
        a, b = self.platt
        return _sigmoid(a * self.member.scores(x) + b)

    def predict(
        self,
        items: Sequence[tuple[str | None, str | None]],
        *,
        max_subjects: int = 5,
        min_probability: float = 0.4,
        context: Mapping[str, NDArray[np.float64]] | None = None,
    ) -> list[Prediction]:
        """Predictions for (title, abstract) pairs; either may be None or empty.

        The primary is the most probable primary subject; secondaries are the other
        subjects whose membership probability is at least `min_probability`. The default
        0.4 maximises F1 of the predicted subject lists on the held-out month (precision
        0.70, recall 0.64; 0.2 gives 0.57 / 0.75): users should be able to trust a listed
        subject."""
        if not items:
            return []
        x = self.features(items)
        pp, pm = self.primary_proba(x, context), self.member_proba(x)
        empty = np.asarray(x.getnnz(axis=1) == 0)
        out = []
        for i in range(len(items)):
            if empty[i]:
                out.append(Prediction([]))
                continue
            top = int(np.argmax(pp[i]))
            order = [top] + [
                int(j) for j in np.argsort(-pm[i]) if j != top and pm[i, j] >= min_probability
            ]
            out.append(
                Prediction(
                    [
                        Scored(
                            self.classes[j], round(float(pm[i, j]), 4), round(float(pp[i, j]), 4)
                        )
                        for j in order[:max_subjects]
                    ]
                )
            )
        return out

    # -- storage --
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = {
            "classes": np.array(self.classes, dtype="U32"),
            "idf": self.idf.astype(np.float16),
            "meta": np.array(
                json.dumps(
                    {
                        **self.meta,
                        "format": FORMAT,
                        "temperature": self.temperature,
                        "platt": list(self.platt),
                        "context_weights": self.context_weights,
                    }
                )
            ),
        }
        for name, lin in (("primary", self.primary), ("member", self.member)):
            w = lin.weights.tocsr()
            w.sort_indices()
            scale = np.maximum(abs(w).max(axis=1).toarray().ravel(), 1e-12) / 127.0
            row_of = np.repeat(np.arange(w.shape[0]), np.diff(w.indptr))
            arrays[f"{name}_indptr"] = w.indptr.astype(np.int32)
            arrays[f"{name}_indices"] = w.indices.astype(np.int32)
            arrays[f"{name}_data"] = np.rint(w.data / scale[row_of]).astype(np.int8)
            arrays[f"{name}_scale"] = scale.astype(np.float32)
            arrays[f"{name}_bias"] = lin.bias.astype(np.float32)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> SubjectModel:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != FORMAT:
                raise ValueError(f"{path}: not a {FORMAT} model file")
            classes = [str(c) for c in z["classes"]]
            n = 2 ** int(meta["n_features_log2"])
            lin = {}
            for name in ("primary", "member"):
                w = sp.csr_matrix(
                    (
                        z[f"{name}_data"].astype(np.float32),
                        z[f"{name}_indices"],
                        z[f"{name}_indptr"],
                    ),
                    shape=(len(classes), n),
                )
                w = (sp.diags(z[f"{name}_scale"]) @ w).tocsr().astype(np.float32)
                lin[name] = _Linear(w, z[f"{name}_bias"].astype(np.float32))
            return cls(
                classes=classes,
                idf=z["idf"].astype(np.float32),
                primary=lin["primary"],
                member=lin["member"],
                temperature=float(meta["temperature"]),
                platt=(float(meta["platt"][0]), float(meta["platt"][1])),
                meta=meta,
                context_weights={
                    str(k): float(v) for k, v in (meta.get("context_weights") or {}).items()
                },
            )


# -- training --


def train(
    train_set: Sequence[Example],
    calib_set: Sequence[Example],
    config: TrainConfig | None = None,
    *,
    hashed: tuple[sp.csr_matrix, sp.csr_matrix] | None = None,
) -> SubjectModel:
    """Fit a model on `train_set` and calibrate its probabilities on `calib_set` (papers
    from a later month, so calibration sees the same drift the user will).

    `hashed`: the hashed term counts of both sets (`hashed_counts`), when the caller has
    them (the rolling benchmark hashes the feed once). With `config.context` the weight of
    the context evidence is fitted on `calib_set`, its histories built from `train_set`."""
    cfg = config or TrainConfig()
    counts = Counter(e.primary for e in train_set)
    classes = sorted(c for c, n in counts.items() if n >= cfg.min_examples)
    if len(classes) < 2:
        raise ValueError("need at least two subjects with enough training papers")
    index = {c: i for i, c in enumerate(classes)}
    meta: dict[str, Any] = {
        "n_features_log2": cfg.n_features_log2,
        "title_repeat": cfg.title_repeat,
        "config": cfg.__dict__,
        "train_papers": len(train_set),
        "calib_papers": len(calib_set),
        "train_months": sorted({e.month for e in train_set}),
        "calib_months": sorted({e.month for e in calib_set}),
    }
    meta["model_id"] = (
        "subjects-" + hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:12]
    )
    meta["prior"] = [round(counts[c] / sum(counts[k] for k in classes), 6) for c in classes]
    if hashed is None:
        counts_x = hashed_counts(train_set, cfg)
        calib_x = hashed_counts(calib_set, cfg) if calib_set else None
    else:
        counts_x, calib_x = hashed
    idf = _idf(counts_x)
    x = _tfidf(counts_x, idf)
    weight = recency_weights(train_set, cfg.half_life_months)

    # primary: one multi-class fit (scikit-learn runs it one-vs-rest, n_jobs classes at once)
    has_primary = np.array([e.primary in index for e in train_set])
    y_primary = np.array([index[e.primary] for e in train_set if e.primary in index])
    clf = _sgd(cfg, n_jobs=cfg.n_jobs).fit(
        x[has_primary], y_primary, sample_weight=None if weight is None else weight[has_primary]
    )
    primary = _Linear(_prune(clf.coef_, cfg.keep), clf.intercept_.astype(np.float32))
    if cfg.member:
        y_member = np.zeros((len(train_set), len(classes)), dtype=np.int8)
        for i, e in enumerate(train_set):
            for s in e.subjects:
                if s in index:
                    y_member[i, index[s]] = 1
        member = _fit_multilabel(x, y_member, cfg)
    else:
        member = primary
    model = SubjectModel(classes, idf, primary, member, 1.0, (1.0, 0.0), meta)
    context = None
    if cfg.context and calib_set and cfg.context_kinds:
        # The calibration papers' evidence as a daily run sees it: every earlier paper's.
        hist = History()
        for e in train_set:
            hist.add(e.context, e.subjects, e.date)
        context = online_evidence(hist, calib_set, classes, model.prior, cfg.context_kinds)
    _calibrate(model, calib_set, calib_x, context)
    return model


def hashed_counts(examples: Sequence[Example], cfg: TrainConfig) -> sp.csr_matrix:
    """Hashed term counts of the examples' titles and abstracts (before idf)."""
    texts = _texts([(e.title, e.abstract) for e in examples], cfg.title_repeat)
    return _hash(texts, cfg.n_features_log2)


def recency_weights(examples: Sequence[Example], half_life: float) -> NDArray[np.float64] | None:
    """0.5 ** (months before the latest example's month / half_life), mean 1; None when
    `half_life` is 0."""
    if not half_life or not examples:
        return None
    def index(month: str) -> int:
        return int(month[:4]) * 12 + int(month[5:7])
    months = np.array([index(e.month) for e in examples])
    w = 0.5 ** ((months.max() - months) / half_life)
    return np.asarray(w / w.mean())


def _sgd(cfg: TrainConfig, n_jobs: int | None = None) -> Any:
    """Logistic loss (probabilities), fixed epochs and seed (reproducible training)."""
    from sklearn.linear_model import SGDClassifier  # training only: keeps import time low

    return SGDClassifier(
        loss="log_loss",
        alpha=cfg.alpha,
        max_iter=cfg.epochs,
        tol=None,
        random_state=0,
        n_jobs=n_jobs,
    )


def _fit_multilabel(x: sp.csr_matrix, y: NDArray[np.int8], cfg: TrainConfig) -> _Linear:
    from sklearn.multiclass import OneVsRestClassifier

    est = OneVsRestClassifier(_sgd(cfg), n_jobs=cfg.n_jobs)
    est.fit(x, y)
    coef = np.vstack([e.coef_ for e in est.estimators_])
    bias = np.array([e.intercept_[0] for e in est.estimators_], dtype=np.float32)
    return _Linear(_prune(coef, cfg.keep), bias)


def _calibrate(
    model: SubjectModel,
    calib: Sequence[Example],
    counts: sp.csr_matrix | None = None,
    context: Mapping[str, NDArray[np.float64]] | None = None,
) -> None:
    """Fit the softmax temperature (primary) — with `context`, jointly with the weight of
    each kind of context evidence — and one Platt scaling (membership) by maximum
    likelihood on the calibration papers."""
    index = {c: i for i, c in enumerate(model.classes)}
    keep = np.array([e.primary in index for e in calib], dtype=bool)
    rows = [e for e in calib if e.primary in index]
    if not rows:
        return
    if counts is not None:
        x = _tfidf(counts[np.flatnonzero(keep)], model.idf)
    else:
        x = model.features([(e.title, e.abstract) for e in rows])
    s = model.primary.scores(x)
    y = np.array([index[e.primary] for e in rows])

    def nll_of(z: NDArray[np.float64]) -> float:
        z = z - z.max(axis=1, keepdims=True)
        logp = z[np.arange(len(y)), y] - np.log(np.exp(z).sum(axis=1))
        return float(-logp.mean())

    model.temperature = float(
        minimize_scalar(lambda t: nll_of(s / t), bounds=(0.02, 20.0), method="bounded").x
    )
    if context:
        kinds = sorted(context)
        theta = _fit_linear_logits(
            [s, *(context[k][keep] for k in kinds)], y, [1.0 / model.temperature] + [0.5] * len(kinds)
        )
        model.temperature = 1.0 / max(float(theta[0]), 0.05)
        model.context_weights = {k: round(float(w), 6) for k, w in zip(kinds, theta[1:], strict=True)}
    m = model.member.scores(x).ravel()
    target = np.zeros((len(rows), len(model.classes)))
    for i, e in enumerate(rows):
        for sub in e.subjects:
            if sub in index:
                target[i, index[sub]] = 1.0
    t = target.ravel()

    def bce(ab: NDArray[np.float64]) -> float:
        z = ab[0] * m + ab[1]
        return float(np.mean(np.logaddexp(0.0, z) - t * z))

    res = minimize(bce, np.array([1.0, 0.0]), method="Nelder-Mead")
    model.platt = (float(res.x[0]), float(res.x[1]))


def _fit_linear_logits(
    parts: Sequence[NDArray[np.float64]], y: NDArray[np.int64], start: Sequence[float]
) -> NDArray[np.float64]:
    """The weights θ maximising the likelihood of softmax(Σ θ_k · parts_k) for the labels
    `y`: convex in θ, so L-BFGS with the exact gradient finds the optimum."""
    rows = np.arange(len(y))

    def nll(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = sum(t * p for t, p in zip(theta, parts, strict=True))
        assert isinstance(z, np.ndarray)
        z = z - z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        prob = np.exp(z - lse[:, None])
        grad = [-(p[rows, y] - (prob * p).sum(axis=1)).mean() for p in parts]
        return float(-(z[rows, y] - lse).mean()), np.array(grad)

    return np.asarray(minimize(nll, np.array(start), jac=True, method="L-BFGS-B").x)


# -- helpers --


def _texts(items: Sequence[tuple[str | None, str | None]], title_repeat: int) -> list[str]:
    """Title (repeated: short and dense with topic words) + abstract, each cut at MAX_CHARS."""
    return [
        " ".join([(t or "")[:MAX_CHARS]] * title_repeat + [(a or "")[:MAX_CHARS]]) for t, a in items
    ]


def _hash(texts: list[str], n_features_log2: int) -> sp.csr_matrix:
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        ngram_range=(1, 2),
        n_features=2**n_features_log2,
        alternate_sign=False,
        norm=None,
        dtype=np.float32,
    ).transform(texts)


def _idf(counts: sp.csr_matrix) -> NDArray[np.float32]:
    """Smoothed idf, as scikit-learn's TfidfTransformer computes it."""
    n = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    return (np.log((1 + n) / (1 + df)) + 1.0).astype(np.float32)


def _tfidf(counts: sp.csr_matrix, idf: NDArray[np.float32]) -> sp.csr_matrix:
    """Sublinear tf x idf, rows L2-normalised."""
    x = counts.tocsr(copy=True).astype(np.float32)
    x.data = 1.0 + np.log(x.data)
    x = x @ sp.diags(idf)
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ x, dtype=np.float32)


def _prune(coef: NDArray[Any], keep: int) -> sp.csr_matrix:
    """Keep the `keep` largest-magnitude weights per row (the rest barely move a score)."""
    coef = np.asarray(coef, dtype=np.float32)
    if coef.shape[1] > keep:
        thr = -np.partition(-np.abs(coef), keep - 1, axis=1)[:, keep - 1 : keep]
        coef = np.where(np.abs(coef) >= thr, coef, 0.0)
    return sp.csr_matrix(coef)


def _softmax(z: NDArray[np.float64]) -> NDArray[np.float64]:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def _sigmoid(z: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)))


# -- where the model lives --


def default_model_path() -> Path:
    """`$PAPERDESK_SUBJECTS_MODEL`, else the model shipped in the package if present, else
    `$XDG_DATA_HOME/paperdesk/subjects-model.npz` (where `paperdesk subjects train` writes)."""
    chosen = SUBJECTS_MODEL.get()
    if chosen is not None:
        return chosen
    shipped = Path(__file__).parent / "data" / "subjects-model.npz"
    if shipped.exists():
        return shipped
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "paperdesk" / "subjects-model.npz"


@cache
def _load_cached(path: str, mtime: float) -> SubjectModel:
    return SubjectModel.load(path)


def load_model(path: str | Path | None = None) -> SubjectModel:
    """The trained model; raises FileNotFoundError with the command that makes one."""
    p = Path(path) if path else default_model_path()
    if not p.exists():
        raise FileNotFoundError(
            f"no subject model at {p}: run `paperdesk subjects train` (or set ${MODEL_ENV})"
        )
    return _load_cached(str(p), p.stat().st_mtime)
