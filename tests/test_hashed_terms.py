"""`hashed_terms` gives scikit-learn's hashed term vectors bit for bit, on real paper texts."""

from __future__ import annotations

import gzip
import random
import subprocess
import sys

import numpy as np
import orjson
from sklearn.feature_extraction._stop_words import ENGLISH_STOP_WORDS
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize
from sklearn.utils.murmurhash import murmurhash3_32

from conftest import shared_file
from paperdesk.resolve import hashed_terms

DIM = 2**18


def _feed_texts(n: int) -> list[str]:
    texts = []
    with gzip.open(shared_file("arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"), "rb") as f:
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


def test_the_author_stage_does_not_import_sklearn() -> None:
    code = (
        "import sys, paperdesk.resolve.authors, paperdesk.store.works;"
        "print(sorted(m for m in ('sklearn', 'scipy.stats') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
