"""Stored feature data of the members an incremental run compares new signatures with.

A profile's sample (`author_profiles.reps`, a few signature ids) is what a new signature
of its block is scored against. Reading those members' records and vectorising their text
again on every run was most of an incremental day's cost, so the fields the pair
features use and the text vector are stored once, when a member enters a sample
(`author_samples`), and turned back into a `Signature` plus its vector row here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import orjson
from scipy import sparse

from paperdesk.resolve.authors_features import TEXT_DIM, Signature, text_vectors
from paperdesk.resolve.authors_names import parse_given

Row = tuple[np.ndarray, np.ndarray]
"""A sparse vector row: (column indices, values)."""


def encode(sig: Signature, row: Row) -> tuple[bytes, bytes]:
    meta = orjson.dumps(
        [
            sig.record_key, sig.position, sig.name, sig.block, sig.family, sig.given_raw,
            sorted(sig.affiliations), sig.affiliation_text, sig.orcid, sig.email,
            sorted(sig.coauthors), sig.venue, sig.year,
        ]
    )
    idx, val = row
    return meta, idx.astype(np.int32).tobytes() + val.astype(np.float64).tobytes()


def decode(sig_id: str, meta: bytes, vec: bytes) -> tuple[Signature, Row]:
    (key, pos, name, block, family, given, affs, aff_text, orcid, email, co, venue, year) = (
        orjson.loads(meta)
    )
    n = len(vec) // 12
    idx = np.frombuffer(vec[: 4 * n], dtype=np.int32).astype(np.int64)
    val = np.frombuffer(vec[4 * n :], dtype=np.float64)
    sig = Signature(
        sig_id=sig_id, record_key=key, position=pos, name=name, block=block, family=family,
        given=parse_given(given), given_raw=given, affiliations=frozenset(affs),
        affiliation_text=aff_text, orcid=orcid, email=email, coauthors=frozenset(co),
        venue=venue, year=year, text="",
    )
    return sig, (idx, val)


def vectors(sigs: Sequence[Signature], cached: Mapping[str, Row]) -> sparse.csr_matrix:
    """Text vectors of `sigs`, one row each: stored rows where `cached` has them, the
    others vectorised from their text."""
    need = [s for s in sigs if s.sig_id not in cached]
    fresh = text_vectors(need) if need else sparse.csr_matrix((0, TEXT_DIM))
    if not cached:
        return fresh
    pos = {s.sig_id: k for k, s in enumerate(need)}
    indptr, cols, vals = [0], [], []
    for s in sigs:
        row = cached.get(s.sig_id)
        if row is None:
            k = pos[s.sig_id]
            lo, hi = fresh.indptr[k], fresh.indptr[k + 1]
            row = (fresh.indices[lo:hi], fresh.data[lo:hi])
        cols.append(row[0])
        vals.append(row[1])
        indptr.append(indptr[-1] + len(row[0]))
    return sparse.csr_matrix(
        (
            np.concatenate(vals) if vals else np.empty(0),
            np.concatenate(cols) if cols else np.empty(0, np.int64),
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(len(sigs), fresh.shape[1]),
    )


def rows_of(matrix: sparse.csr_matrix, index: Iterable[int]) -> list[Row]:
    out = []
    for k in index:
        lo, hi = matrix.indptr[k], matrix.indptr[k + 1]
        out.append((matrix.indices[lo:hi], matrix.data[lo:hi]))
    return out
