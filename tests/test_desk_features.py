"""The recommender's stored text features (desk/features.py, desk/cache.py).

The hashed counts and the space fitted on them give what scikit-learn's
`TfidfVectorizer` gives on real paper texts (up to hash collisions); the store keeps each
record's features, computes them once, again when the record or the format changes, and
never because works were regrouped; a ranking from stored features is the ranking from
freshly computed ones. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from conftest import BACKENDS, PGSchemas, open_feed
from loopback import feed_store
from paperdesk.desk import cache as C
from paperdesk.desk import features as F
from paperdesk.desk.library import add
from paperdesk.desk.recommend import recommend
from paperdesk.store import curators, open_store

DAY = "2025-03-18"


def _texts(n: int) -> list[str]:
    out = []
    with open_feed() as f:
        for line in f:
            d = orjson.loads(line)
            out.append(f"{d.get('title') or ''}. {d.get('summary') or ''}")
            if len(out) == n:
                break
    return out


def test_the_space_is_scikit_learns_tfidf_on_real_texts() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = _texts(600)
    ours = F.TextSpace.fit(F.term_counts(texts))
    x = ours.transform(F.term_counts(texts))
    ref = TfidfVectorizer(strip_accents="unicode", lowercase=True, stop_words="english",
                          token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
                          max_features=20_000, sublinear_tf=True, min_df=2, max_df=0.5)
    y = ref.fit_transform(texts)
    # as many terms kept, give or take the few rare terms a hash collision pushes to df 2
    assert abs(len(ours) - len(ref.vocabulary_)) < 0.03 * len(ref.vocabulary_)
    s1, s2 = (x @ x.T).toarray(), (y @ y.T).toarray()
    assert np.abs(s1 - s2).mean() < 0.002 and np.quantile(np.abs(s1 - s2), 0.99) < 0.02
    overlap = [len(set(np.argsort(-s1[i])[:11]) & set(np.argsort(-s2[i])[:11])) / 11 for i in range(0, 600, 5)]
    assert np.mean(overlap) > 0.97
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)


def test_terms_tokenise_as_the_vectorizer_did() -> None:
    t = F.term_counts(["Café naïve", "cafe naive", "the and of", "", "Deep deep learning"])
    assert np.array_equal(t.row(0)[0], t.row(1)[0])  # accents stripped
    assert len(t.row(2)[0]) == len(t.row(3)[0]) == 0  # stop words only, nothing
    cols, counts = t.row(4)  # deep x2, learning, "deep deep", "deep learning"
    assert sorted(counts.tolist()) == [1, 1, 1, 2] and len(cols) == 4
    back = F.unpack(F.pack(cols, counts))
    assert np.array_equal(back[0], cols) and np.array_equal(back[1], counts)
    picked = t.take([4, 0])
    assert np.array_equal(picked.row(0)[0], cols) and np.array_equal(picked.row(1)[0], t.row(0)[0])
    empty = F.TextSpace.fit(F.term_counts(["", "the"]), min_df=1, max_df=1.0)
    assert len(empty) == 0 and empty.transform(F.term_counts(["x y"])).shape == (1, 1)


@pytest.fixture(scope="module", params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path | str]:
    schemas = PGSchemas()
    request.addfinalizer(schemas.close)
    tmp = tmp_path_factory.mktemp("deskfeat")
    target = feed_store(tmp, db=schemas.new() if request.param == "postgresql" else None)
    with open_store(target) as store:
        curators.add_user(store, "ann", "correct horse battery")
    yield target


def _hits(store: Any) -> list[tuple[str, float]]:
    return [(h["work_id"], h["score"]) for h in recommend(store, "ann", since=DAY, until=DAY, limit=100)["hits"]]


def test_features_are_stored_once_and_renewed_when_records_change(db: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(db) as store:
        with store.transaction():
            store.conn.execute("DELETE FROM desk_features")
        n = len(store.desk.candidates(DAY, DAY))
        first = C.candidates(store, DAY, DAY)
        assert first.computed == n > 50
        again = C.candidates(store, DAY, DAY)
        assert again.computed == 0
        assert [d.ref for d in again.docs] == [d.ref for d in first.docs]
        assert np.array_equal(again.terms.cols, first.terms.cols) and np.array_equal(again.terms.counts, first.terms.counts)
        # a changed record (its seq moves on) is computed again; the others are kept
        key = store.desk.candidates(DAY, DAY)[0].key
        with store.transaction():
            store.conn.execute("UPDATE records SET seq = seq + 1000000 WHERE key = ?", (key,))
        assert C.candidates(store, DAY, DAY).computed == 1
        # works regrouped: nothing to compute (grouping is read on every call)
        with store.transaction():
            store.conn.execute("DELETE FROM work_records WHERE record_key = ?", (key,))
        regrouped = C.candidates(store, DAY, DAY)
        assert regrouped.computed == 0 and key in [d.ref for d in regrouped.docs]
        # another format: every row again
        monkeypatch.setattr(F, "FORMAT", F.FORMAT + 1)
        assert C.candidates(store, DAY, DAY).computed == n


def test_a_ranking_from_stored_features_is_the_fresh_ranking(db: Path | str) -> None:
    with open_store(db) as store:
        works = [d.ref for d in C.candidates(store, DAY, DAY).docs if d.ref.startswith("W")]
        add(store, "ann", works[:3])
        cached = _hits(store)
        with store.transaction():
            store.conn.execute("DELETE FROM desk_features")
        fresh = _hits(store)
        assert cached == fresh and len(cached) > 20
        with store.reader() as view:  # a read-only view computes what it lacks, stores nothing
            with store.transaction():
                store.conn.execute("DELETE FROM desk_features")
            assert _hits(view) == fresh
        assert store.conn.execute("SELECT COUNT(*) FROM desk_features").fetchone()[0] == 0
