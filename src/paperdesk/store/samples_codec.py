"""How `author_samples` rows keep a sampled member's co-author keys since migration 040.

An incremental day reads back ~60k stored members and compares each with the day's new
signatures. Only the co-author keys that a new signature shares count, yet each member's
JSON held its ~24 keys as text: parsing them, building a set of them and hashing every
string again to intersect it with the day's keys was most of decoding a member. The keys
are now stored apart from the JSON, as sorted 64-bit codes (`key_code`), so a member's
keys come back as one array and are matched against the day's keys as arrays.

A code is the first 8 bytes of the key's BLAKE2b digest: stateless (a key has the same
code in every store and run, like the hashed text vectors) and, at ~1M distinct keys in
a store, with a chance of any two keys sharing a code of about 3e-8. The function is
part of the stored format: never change it (another code needs another migration).
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from collections.abc import Iterable

import orjson

KEY_DTYPE = "<i8"
"""A stored key code as numpy reads it: signed 64-bit, little-endian (the store itself
does not import numpy: every command opens a store, few need numpy)."""

_COAUTHORS = 10
"""Position of the co-author list in a sample's JSON before migration 040."""


def key_code(key: str) -> int:
    """The 64-bit code of a blocking key (see the module doc)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


def key_codes(keys: Iterable[str], cache: dict[str, int] | None = None) -> list[int]:
    """The codes of `keys`, sorted; `cache` keeps codes across calls (a full run packs
    ~13M keys of ~1M distinct ones)."""
    if cache is None:
        return sorted(key_code(k) for k in keys)
    codes = []
    for k in keys:
        c = cache.get(k)
        if c is None:
            c = cache[k] = key_code(k)
        codes.append(c)
    return sorted(codes)


def pack_keys(keys: Iterable[str], cache: dict[str, int] | None = None) -> bytes:
    """`key_codes` as `author_samples.keys` holds them (`KEY_DTYPE`)."""
    arr = array("q", key_codes(keys, cache))
    if arr.itemsize != 8:  # pragma: no cover - no such platform in use
        raise ValueError("pack_keys needs 8-byte signed ints")
    if sys.byteorder == "big":  # pragma: no cover
        arr.byteswap()
    return arr.tobytes()


def meta_without_keys(meta: bytes) -> bytes:
    """SQL `paperdesk_sample_meta(meta)` (migration 040): a sample's JSON of the
    migration-033 form without its co-author list."""
    fields = orjson.loads(meta)
    del fields[_COAUTHORS]
    return orjson.dumps(fields)


def keys_of_meta(meta: bytes) -> bytes:
    """SQL `paperdesk_sample_keys(meta)` (migration 040): the co-author keys of a sample's
    JSON of the migration-033 form, packed."""
    return pack_keys(orjson.loads(meta)[_COAUTHORS])
