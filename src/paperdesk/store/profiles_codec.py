"""How `author_profiles` rows are stored since migration 039: the same values in fewer bytes.

A 1M store's incremental day rewrites the rows of ~10k grown profiles spread over the
whole table, so it dirties most of the table's pages whatever it changes in them: the
pages a day writes follow the table's size. These encodings shrink a row from ~230 to
~120 bytes; `paperdesk.store.authors` decodes them back to exactly what it stored before.

- A variant (name, folded, given, block, count) leaves out what its name predicts: the
  folded form when it is `fold_guess(name)`, the given name when it is the name's first
  word, the block when it is the profile's own. Every field is stored whenever the
  prediction misses, so decoding is exact for any input; the predictions only decide how
  often a field can be left out (~96 % and ~89 % of variants at 1M records). They are part
  of the stored format: never change them (a new prediction needs a new migration).
- Times are Unix seconds instead of ISO text.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson

_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

VariantCount = tuple[str, str, str | None, str, int]
"""(name, folded, given as written, block, signatures) of one name variant of a profile."""


def fold_guess(name: str) -> str | None:
    """What a display name's folded form usually is ("Q. Liao" → "q liao"); None (no
    guess) for a name that is not plain ASCII, whose lower-casing could change between
    Unicode versions."""
    if not name.isascii():
        return None
    return " ".join(name.replace(".", " ").replace(",", " ").lower().split())


def given_guess(name: str) -> str:
    """What the given name written with a display name usually is: its first word."""
    return name.split(" ", 1)[0]


@lru_cache(maxsize=1 << 16)
def _guesses(name: str) -> tuple[str | None, str]:
    """(`fold_guess`, `given_guess`) of a name, cached: a profile's names recur in the
    rows a day reads and writes."""
    return fold_guess(name), given_guess(name)


def _omitted(value: Any) -> bool:
    return type(value) is int and value == 0


def pack_variants(variants: list[VariantCount] | list[list[Any]], block: str) -> str:
    """Variants as JSON of `[name, count, folded, given, block]` lists, each field after
    the count 0 where predicted (see the module) and trailing zeros left off."""
    out: list[list[Any]] = []
    for name, folded, given, vblock, count in variants:
        fold, first = _guesses(name)
        f = 0 if folded == fold else folded
        if vblock != block:
            out.append([name, count, f, 0 if given == first else given, vblock])
        elif given != first:
            out.append([name, count, f, given])
        elif f != 0:
            out.append([name, count, f])
        else:
            out.append([name, count])
    return orjson.dumps(out).decode()


def unpack_variants(text: str, block: str) -> list[VariantCount]:
    """The variants `pack_variants(variants, block)` stored, in their order."""
    out: list[VariantCount] = []
    for e in orjson.loads(text):
        name = e[0]
        fold, first = _guesses(name)
        n = len(e)
        folded = e[2] if n > 2 and not _omitted(e[2]) else fold
        given = e[3] if n > 3 and not _omitted(e[3]) else first
        vblock = e[4] if n > 4 and not _omitted(e[4]) else block
        out.append((name, folded, given, vblock, e[1]))  # type: ignore[arg-type]  # folded: a miss of the guess is always stored
    return out


def pack_folded(name: str, folded: str) -> str | None:
    """The profile's folded canonical name, None where `fold_guess(name)` gives it."""
    return None if folded == _guesses(name)[0] else folded


def unpack_folded(name: str, stored: str | None) -> str:
    return stored if stored is not None else fold_guess(name) or ""


def pack_time(text: str) -> int | str:
    """An ISO time `YYYY-MM-DDTHH:MM:SSZ` as Unix seconds (any other text as it is)."""
    try:
        t = datetime.strptime(text, _TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return text
    seconds = int(t.timestamp())
    return seconds if unpack_time(seconds) == text else text


def unpack_time(stored: int | str) -> str:
    if isinstance(stored, str):
        return stored
    return datetime.fromtimestamp(stored, UTC).strftime(_TIME_FORMAT)


def now_seconds() -> int:
    return int(datetime.now(UTC).timestamp())
