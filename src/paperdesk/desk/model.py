"""The per-user recommendation model, on plain arrays (no store): `bench/recommend.py`
and `desk/recommend.py` run the same code.

A user's positives are their library and the works they marked relevant; negatives the
works they marked not relevant. Each candidate gets five signals, each with a reason:

- text: tf-idf cosine (uni+bigrams) to the nearest positives and to their centroid;
- embedding: the same with the search index's abstract vectors (when the store has them);
- co-authors: the candidate's authors who also wrote the user's positives (weighted by how
  often, and dampened for names seen on many papers of the pool), plus followed authors;
- subjects: followed subjects (the share of the positives filed in the candidate's
  subjects is computed too, but weighs 0: it did not help the tuning users);
- not relevant: similarity to the works marked not relevant, subtracted.

Text and embedding scores are standardised over the candidates (their scale differs per
user); the weights were chosen on the tuning users of `bench/recommend.py` only (the
held-out users are reported apart, docs/benchmarks.md).

Why nearest neighbours and not arxiv-sanity-lite's per-user linear SVM: there is nothing
to train (a user's model is their positives' rows), so "train and rank a month" is a few
sparse products; and a library holds several topics, which a max over neighbours keeps
apart where one hyperplane averages them.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

WEIGHTS = {"text": 1.0, "embedding": 1.0, "authors": 12.0, "subjects": 0.0, "negative": 1.0,
           "follow_author": 9.0, "follow_subject": 0.5}
"""authors / embedding / text / subjects chosen on the 100 tuning users of
bench/recommend.py (a coordinate search, 2026-12-02: authors 4 → 12 and embedding 0.5 → 1
took recall@100 from 0.765 to ~0.80; an initial+surname co-author match, the nearest
neighbours' share and a Rocchio centroid were tried too and added < 0.002, so they are not
here); the others set by hand (follow_author kept at 3/4 of authors)."""
TOP_K = 3
"""Neighbours averaged for the text and embedding signals."""


def fold_name(name: str) -> str:
    """An author name as the co-author signal compares it: ASCII, lower case, words only."""
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return " ".join(re.findall(r"[a-z]+", s))


@dataclass
class Doc:
    """A paper as the model sees it."""

    ref: str
    title: str = ""
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    date: str | None = None

    @property
    def text(self) -> str:
        return f"{self.title}. {self.abstract}"


@dataclass
class Pool:
    """The candidates, featurised once and shared by every user ranked over them."""

    docs: list[Doc]
    text: sp.csr_matrix
    """tf-idf rows, l2-normalised."""
    vectors: np.ndarray | None
    """Unit embedding rows (zero rows where a work has none), or None."""
    author_df: Counter[str]
    """Papers of the pool per folded author name (common names weigh less)."""
    authors: list[list[str]] = field(default_factory=list)

    @classmethod
    def build(cls, docs: list[Doc], text: sp.csr_matrix, vectors: np.ndarray | None,
              folded: bool = False) -> Pool:
        """`folded`: the docs' author names are `fold_name`d already (stored features)."""
        authors = [list(d.authors) if folded else [fold_name(a) for a in d.authors] for d in docs]
        df: Counter[str] = Counter()
        for names in authors:
            df.update(set(names))
        return cls(docs, text, vectors, df, authors)


@dataclass
class Profile:
    """One user's model: their positives' and negatives' rows, co-authors and subjects."""

    pos_text: sp.csr_matrix
    pos_vectors: np.ndarray | None
    pos_docs: list[Doc]
    neg_text: sp.csr_matrix | None = None
    neg_vectors: np.ndarray | None = None
    coauthors: Counter[str] = field(default_factory=Counter)
    subjects: Counter[str] = field(default_factory=Counter)
    follow_authors: set[str] = field(default_factory=set)
    follow_subjects: set[str] = field(default_factory=set)
    shown_names: dict[str, str] = field(default_factory=dict)
    follow_refs: dict[str, list[str]] = field(default_factory=dict)
    """Candidate ref → the followed author profiles (their names) among its authors."""

    @classmethod
    def build(
        cls, pos: list[Doc], pos_text: sp.csr_matrix, pos_vectors: np.ndarray | None,
        neg_text: sp.csr_matrix | None = None, neg_vectors: np.ndarray | None = None,
        follow_authors: Sequence[str] = (), follow_subjects: Sequence[str] = (),
        follow_refs: dict[str, list[str]] | None = None,
    ) -> Profile:
        co: Counter[str] = Counter()
        shown: dict[str, str] = {}
        subj: Counter[str] = Counter()
        for d in pos:
            for a in d.authors:
                k = fold_name(a)
                if k:
                    co[k] += 1
                    shown.setdefault(k, a)
            subj.update(set(d.subjects))
        follows = {fold_name(a) for a in follow_authors}
        for a in follow_authors:
            shown.setdefault(fold_name(a), a)
        return cls(pos_text, pos_vectors, pos, neg_text, neg_vectors, co, subj, follows,
                   set(follow_subjects), shown, dict(follow_refs or {}))


def _z(x: np.ndarray) -> np.ndarray:
    sd = float(x.std())
    return (x - float(x.mean())) / sd if sd > 1e-9 else np.zeros_like(x)


def _neighbours(sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(mean of each row's k largest, the column of each row's largest)."""
    k = min(k, sims.shape[1])
    top = np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:]
    return top.mean(axis=1), sims.argmax(axis=1)


@dataclass
class Scored:
    scores: np.ndarray
    parts: dict[str, np.ndarray]
    nearest: np.ndarray
    """Index into the positives of each candidate's most similar one."""


@dataclass
class Signals:
    """What `score` weighs, computed once per user and pool (the weights only combine
    them: the benchmark's tuning tries many weights on one computation)."""

    n: int
    nearest: np.ndarray
    text_top: np.ndarray | None = None
    text_cen: np.ndarray | None = None
    emb_top: np.ndarray | None = None
    emb_cen: np.ndarray | None = None
    emb_has: np.ndarray | None = None
    authors: np.ndarray = field(default_factory=lambda: np.zeros(0))
    follow: np.ndarray = field(default_factory=lambda: np.zeros(0))
    subjects: np.ndarray = field(default_factory=lambda: np.zeros(0))
    follow_subject: np.ndarray = field(default_factory=lambda: np.zeros(0))
    negative: np.ndarray | None = None


def signals(profile: Profile, pool: Pool) -> Signals:
    """Every weight-independent part of the candidates' scores."""
    n = len(pool.docs)
    sig = Signals(n, np.zeros(n, dtype=np.int64))
    if profile.pos_text.shape[0]:
        sims = np.asarray((pool.text @ profile.pos_text.T).todense(), dtype=np.float32)
        sig.text_top, sig.nearest = _neighbours(sims, TOP_K)
        centroid = np.asarray(profile.pos_text.mean(axis=0)).ravel()
        sig.text_cen = (pool.text @ centroid) / (np.linalg.norm(centroid) or 1.0)
    if profile.pos_vectors is not None and pool.vectors is not None and len(profile.pos_vectors):
        esims = pool.vectors @ profile.pos_vectors.T
        sig.emb_top, enear = _neighbours(esims, TOP_K)
        cen_v = profile.pos_vectors.mean(axis=0)
        sig.emb_cen = pool.vectors @ (cen_v / (np.linalg.norm(cen_v) or 1.0))
        sig.emb_has = np.abs(pool.vectors).sum(axis=1) > 0
        if sig.text_top is None:
            sig.nearest = enear
    sig.authors = np.zeros(n)
    sig.follow = np.zeros(n)
    if profile.follow_refs:
        for i, d in enumerate(pool.docs):
            if d.ref in profile.follow_refs:
                sig.follow[i] = 1.0
    if profile.coauthors or profile.follow_authors:
        for i, names in enumerate(pool.authors):
            s = 0.0
            for a in names:
                c = profile.coauthors.get(a)
                if c:
                    s += math.log1p(c) / math.log(2 + pool.author_df.get(a, 0))
                if a in profile.follow_authors:
                    sig.follow[i] = 1.0
            sig.authors[i] = s
    sig.subjects = np.zeros(n)
    sig.follow_subject = np.zeros(n)
    npos = max(1, len(profile.pos_docs))
    if profile.subjects or profile.follow_subjects:
        for i, d in enumerate(pool.docs):
            if d.subjects:
                sig.subjects[i] = max(profile.subjects.get(s, 0) for s in d.subjects) / npos
                sig.follow_subject[i] = float(any(s in profile.follow_subjects or s.split(".")[0] in profile.follow_subjects
                                                  for s in d.subjects))
    if profile.neg_text is not None and profile.neg_text.shape[0]:
        nsims = np.asarray((pool.text @ profile.neg_text.T).todense()).max(axis=1)
        if profile.neg_vectors is not None and pool.vectors is not None and len(profile.neg_vectors):
            nsims = 0.5 * nsims + 0.5 * (pool.vectors @ profile.neg_vectors.T).max(axis=1)
        sig.negative = nsims
    return sig


def combine(sig: Signals, weights: dict[str, float] | None = None) -> Scored:
    """The candidates' scores from their signals (see the module docstring)."""
    w = {**WEIGHTS, **(weights or {})}
    n = sig.n
    parts: dict[str, np.ndarray] = {}
    total = np.zeros(n, dtype=np.float64)
    if sig.text_top is not None and sig.text_cen is not None:
        parts["text"] = 0.5 * sig.text_top + 0.5 * sig.text_cen
        total += w["text"] * _z(parts["text"])
    if sig.emb_top is not None and sig.emb_cen is not None and sig.emb_has is not None:
        parts["embedding"] = 0.5 * sig.emb_top + 0.5 * sig.emb_cen
        has = sig.emb_has
        emb = np.zeros(n)
        emb[has] = _z(parts["embedding"][has]) if has.any() else parts["embedding"][has]
        total += w["embedding"] * emb
    parts["authors"] = sig.authors
    parts["follow_author"] = sig.follow
    total += w["authors"] * sig.authors + w["follow_author"] * sig.follow
    parts["subjects"] = sig.subjects
    parts["follow_subject"] = sig.follow_subject
    total += w["subjects"] * sig.subjects + w["follow_subject"] * sig.follow_subject
    if sig.negative is not None:
        parts["negative"] = sig.negative
        total -= w["negative"] * _z(sig.negative)
    return Scored(total, parts, sig.nearest)


def score(profile: Profile, pool: Pool, weights: dict[str, float] | None = None) -> Scored:
    """Every candidate's score and its parts (see the module docstring)."""
    return combine(signals(profile, pool), weights)


def reasons(profile: Profile, pool: Pool, scored: Scored, i: int) -> list[str]:
    """Why candidate `i` is recommended, strongest first, in words."""
    out: list[str] = []
    names = list(profile.follow_refs.get(pool.docs[i].ref, []))
    names += [n for a in pool.authors[i] if a in profile.follow_authors
              and (n := profile.shown_names.get(a, a)) not in names]
    if names:
        out.append("by " + ", ".join(names[:3]) + ", whom you follow")
    names = [profile.shown_names.get(a, a) for a in pool.authors[i] if a in profile.coauthors]
    if names:
        out.append("with " + ", ".join(names[:3]) + (" and others" if len(names) > 3 else "")
                   + ", authors of papers you saved")
    if profile.pos_docs and ("text" in scored.parts or "embedding" in scored.parts):
        near = profile.pos_docs[int(scored.nearest[i])]
        sim = max(float(scored.parts.get("text", np.zeros(i + 1))[i]),
                  float(scored.parts.get("embedding", np.zeros(i + 1))[i]))
        if sim > 0:
            out.append(f"close to “{near.title[:100]}” in your library")
    subs = [s for s in pool.docs[i].subjects if s in profile.follow_subjects or s.split(".")[0] in profile.follow_subjects]
    if subs:
        out.append(f"in {subs[0]}, which you follow")
    elif WEIGHTS["subjects"] > 0 and scored.parts["subjects"][i] > 0 and pool.docs[i].subjects:
        best = max(pool.docs[i].subjects, key=lambda s: profile.subjects.get(s, 0))
        if profile.subjects.get(best):
            out.append(f"in {best}, like {profile.subjects[best]} of your saved papers")
    return out or ["appeared in this range; little in common with your library"]


def top(scored: Scored, k: int, exclude: set[int] | None = None) -> list[int]:
    """The k best candidates, best first (ties by position, so rankings are stable)."""
    order = np.lexsort((np.arange(len(scored.scores)), -scored.scores))
    out = []
    for i in order:
        if exclude and int(i) in exclude:
            continue
        out.append(int(i))
        if len(out) == k:
            break
    return out
