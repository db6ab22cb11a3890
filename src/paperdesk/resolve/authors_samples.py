"""Stored feature data of the members an incremental run compares new signatures with.

A profile's sample (`author_profiles.reps`, a few signature ids) is what a new signature
of its block is scored against. Reading those members' records and vectorising their text
again on every run was most of an incremental day's cost, so the fields the pair
features use and the text vector are stored once, when a member enters a sample
(`author_samples`), and turned back into a `Signature` plus its vector row here. The
co-author keys are kept as codes (migration 040, `paperdesk.store.samples_codec`) and come
back as `Signature.key_codes`, which `authors_vectors.sig_arrays` matches as arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import orjson
from scipy import sparse

from paperdesk.resolve.authors_features import TEXT_DIM, Signature, text_vectors
from paperdesk.resolve.authors_names import parse_given
from paperdesk.store import samples_codec as codec

Row = tuple[np.ndarray, np.ndarray]
"""A sparse vector row: (column indices, values)."""


def encode(
    sig: Signature, row: Row, cache: dict[str, int] | None = None
) -> tuple[bytes, bytes, bytes]:
    """`sig` and its text vector row as `author_samples` keeps them (meta, keys, vec);
    `cache` as `samples_codec.pack_keys` takes it."""
    meta = orjson.dumps(
        [
            sig.record_key, sig.position, sig.name, sig.block, sig.family, sig.given_raw,
            sorted(sig.affiliations), sig.affiliation_text, sig.orcid, sig.email,
            sig.venue, sig.year,
        ]
    )
    keys = (
        sig.key_codes.astype(np.dtype(codec.KEY_DTYPE)).tobytes()
        if sig.key_codes is not None
        else codec.pack_keys(sig.coauthors, cache)
    )
    idx, val = row
    return meta, keys, idx.astype(np.int32).tobytes() + val.astype(np.float64).tobytes()


def decode(sig_id: str, meta: bytes, keys: bytes, vec: bytes) -> tuple[Signature, Row]:
    n = len(vec) // 12
    idx = np.frombuffer(vec, dtype=np.int32, count=n).astype(np.int64)
    val = np.frombuffer(vec, dtype=np.float64, offset=4 * n)
    return decode_meta(sig_id, meta, keys), (idx, val)


_KEY = np.dtype(codec.KEY_DTYPE)
_NONE: frozenset[str] = frozenset()
"""Shared by the members without affiliations or (as stored) co-author key texts: a day
decodes ~60k members, and building their empty sets and the key dtype each time was a
third of the decoding."""


def decode_meta(sig_id: str, meta: bytes, keys: bytes) -> Signature:
    """The `Signature` of a stored sample (without its text: its vector is stored; its
    co-author keys as codes, see `Signature.key_codes`)."""
    (key, pos, name, block, family, given, affs, aff_text, orcid, email, venue, year) = (
        orjson.loads(meta)
    )
    return Signature(
        sig_id=sig_id, record_key=key, position=pos, name=name, block=block, family=family,
        given=parse_given(given), given_raw=given,
        affiliations=frozenset(affs) if affs else _NONE, affiliation_text=aff_text,
        orcid=orcid, email=email, coauthors=_NONE, venue=venue, year=year, text="",
        key_codes=np.frombuffer(keys, dtype=_KEY),
    )


def vectors(sigs: Sequence[Signature], stored: Mapping[str, bytes]) -> sparse.csr_matrix:
    """Text vectors of `sigs`, one row each: the stored rows (`vec` blobs as
    `author_samples` keeps them) where `stored` has them, the others vectorised from
    their text. The blobs are joined and read as two arrays at once: one small array
    per row, for ~30k rows a worker, cost more than the rest of this."""
    need = [s for s in sigs if s.sig_id not in stored]
    fresh = text_vectors(need) if need else sparse.csr_matrix((0, TEXT_DIM))
    if not stored:
        return fresh
    pos = {s.sig_id: k for k, s in enumerate(need)}
    cols: list[bytes] = []
    vals: list[bytes] = []
    lengths = np.zeros(len(sigs) + 1, dtype=np.int64)
    for k, s in enumerate(sigs):
        blob = stored.get(s.sig_id)
        if blob is None:
            j = pos[s.sig_id]
            lo, hi = fresh.indptr[j], fresh.indptr[j + 1]
            cols.append(fresh.indices[lo:hi].astype(np.int32).tobytes())
            vals.append(fresh.data[lo:hi].astype(np.float64).tobytes())
            lengths[k + 1] = hi - lo
        else:
            n = len(blob) // 12
            cols.append(blob[: 4 * n])
            vals.append(blob[4 * n :])
            lengths[k + 1] = n
    return sparse.csr_matrix(
        (
            np.frombuffer(b"".join(vals), dtype=np.float64).copy(),
            np.frombuffer(b"".join(cols), dtype=np.int32).astype(np.int64),
            np.cumsum(lengths),
        ),
        shape=(len(sigs), fresh.shape[1]),
    )


def row_blob(matrix: sparse.csr_matrix, k: int) -> bytes:
    """Row `k` of a text vector matrix as `author_samples.vec` holds it."""
    lo, hi = matrix.indptr[k], matrix.indptr[k + 1]
    return (
        matrix.indices[lo:hi].astype(np.int32).tobytes()
        + matrix.data[lo:hi].astype(np.float64).tobytes()
    )


def rows_of(matrix: sparse.csr_matrix, index: Iterable[int]) -> list[Row]:
    out = []
    for k in index:
        lo, hi = matrix.indptr[k], matrix.indptr[k + 1]
        out.append((matrix.indices[lo:hi], matrix.data[lo:hi]))
    return out
