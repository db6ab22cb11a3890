"""`hashed_terms` gives scikit-learn's hashed term vectors bit for bit, on real paper texts."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import orjson
from sklearn.feature_extraction._stop_words import ENGLISH_STOP_WORDS
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize
from sklearn.utils.murmurhash import murmurhash3_32

from conftest import open_feed
from paperdesk.resolve import hashed_terms

DIM = 2**18


def _feed_texts(n: int) -> list[str]:
    texts = []
    with open_feed() as f:
        for line in f:
            d = orjson.loads(line)
            texts.append(f"{d.get('title') or ''} {d.get('summary') or ''}")
            if len(texts) >= n:
                break
    # Edge cases beside the real ones: empty, accents and non-Latin letters, stop words
    # only, one long token, a token repeated.
    return [*texts, "", "Straße naïve café Ωmega Łukasz 張偉 x2y", "the and of", "x" * 600, "abc " * 50]


def test_murmur3_equals_sklearns_on_random_bytes() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 24)))
        assert hashed_terms.murmur3_32(data) == murmurhash3_32(data, 0)


def test_stop_words_are_sklearns() -> None:
    assert hashed_terms.STOP_WORDS == ENGLISH_STOP_WORDS


def test_vectors_equal_sklearns_bit_for_bit() -> None:
    texts = _feed_texts(3000)
    ours = hashed_terms.term_counts(texts, DIM)
    ref = HashingVectorizer(
        n_features=DIM,
        stop_words="english",
        alternate_sign=False,
        norm=None,
        token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9]{2,}\b",
    ).transform(texts).tocsr()
    for a, b in ((ours.indptr, ref.indptr), (ours.indices, ref.indices), (ours.data, ref.data)):
        assert np.array_equal(a, b)
    ours.data = 1.0 + np.log(ours.data)
    ref.data = 1.0 + np.log(ref.data)
    hashed_terms.l2_normalize(ours, chunk=500)  # several chunks
    ref = normalize(ref, norm="l2", copy=False)
    assert np.array_equal(ours.data, ref.data)  # the same bits, not merely close


def test_rows_without_scipy_equal_the_sparse_path_bit_for_bit() -> None:
    """`count_rows` (one sort, numpy only) sums and orders as scipy's `sum_duplicates`;
    and `sublinear_rows` are the author features' vectors as built from `term_counts`."""
    texts = _feed_texts(3000)
    ref = hashed_terms.term_counts(texts, DIM)
    rows = hashed_terms.count_rows(texts, DIM)
    for a, b in zip(rows, (ref.indptr, ref.indices, ref.data), strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    ref.data = 1.0 + np.log(ref.data)
    hashed_terms.l2_normalize(ref)
    rows = hashed_terms.sublinear_rows(texts, DIM)
    for a, b in zip(rows, (ref.indptr, ref.indices, ref.data), strict=True):
        assert np.array_equal(a, b)
    empty = hashed_terms.count_rows([], DIM)
    assert [len(a) for a in empty] == [1, 0, 0]


def test_hashed_terms_imports_no_scipy() -> None:
    """The texts helper of an incremental day starts fresh and imports this module: its
    start-up is numpy's, not scipy.sparse's."""
    code = "import sys, paperdesk.resolve.hashed_terms; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_author_stage_does_not_import_sklearn() -> None:
    code = (
        "import sys, paperdesk.resolve.authors, paperdesk.resolve.works_run;"
        "print(sorted(m for m in ('sklearn', 'scipy.stats') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
