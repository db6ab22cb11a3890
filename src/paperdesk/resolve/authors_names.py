"""Given-name comparison for author disambiguation: initials, hyphens and nicknames.

Blocking puts "Yoshua Bengio", "Y. Bengio" and "Yann Bengio" in one block (`bengio y`);
whether two of them *can* be one person is decided here, before any learned score:
"Y." is compatible with both, "Yoshua" and "Yann" are not. Hard incompatibility becomes a
cannot-link in clustering (as in S2AND), so a merge through a bare initial can never glue
two differently named people together.

Nicknames ("Chris" / "Christopher") come from S2AND's given-name variant pairs, found by
`variants_file`; without a file, only exact, initial and hyphenation matches count (a
resolve run reports how many pairs it had, `nickname_pairs`, so that is never silent).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from anyascii import anyascii

from paperdesk.settings import NAME_VARIANTS

_SPLIT = re.compile(r"[\s.]+")
_DEFAULT_VARIANTS = (
    Path(__file__).resolve().parents[4]
    / "shared"
    / "data"
    / "names"
    / "s2and_name_tuples_filtered.txt"
)


def fold(text: str) -> str:
    """Lower-case ASCII transliteration ("Jürgen" → "jurgen", "张" → "zhang") so that
    spellings from different sources compare equal."""
    return anyascii(text).lower() if not text.isascii() else text.lower()


@dataclass(frozen=True)
class GivenName:
    """A folded given name: `first` is the first token ("" if absent), `full` says whether
    it is spelt out (not just an initial), `initials` are the first letters of all tokens."""

    first: str
    full: bool
    initials: str
    joined: str
    """All given tokens concatenated without hyphens: "Yi-Ting" and "Yiting" both → `yiting`."""
    tokens: tuple[str, ...] = ()
    """The folded tokens: "Joao F." → (`joao`, `f`)."""


@lru_cache(maxsize=65_536)
def parse_given(given: str | None) -> GivenName:
    """Split a given-name string: "Joao F." → first `joao`, initials `jf`;
    "Y.-T." → first `y` (initial only), initials `yt`; "Yi-Ting" → first `yiting`."""
    text = fold(given or "")
    text = re.sub(r"[^a-z\s.\-']", " ", text).replace("'", "")
    tokens: list[str] = []
    for tok in _SPLIT.split(text):
        if not tok:
            continue
        parts = [p for p in tok.split("-") if p]
        if not parts:
            continue
        if len(parts) > 1 and all(len(p) == 1 for p in parts):
            tokens.extend(parts)  # "Y.-T." → y, t
        elif len(parts) > 1:
            tokens.append("".join(parts))  # "Yi-Ting" → yiting
            # keep the initials of every part for the initials string
        else:
            tokens.append(parts[0])
    if not tokens:
        return GivenName("", False, "", "", ())
    initials = "".join(t[0] for t in tokens)
    if given and "-" in given and len(tokens) == 1 and len(tokens[0]) > 1:
        initials = "".join(p[0] for p in fold(given).split("-") if p.strip(" ."))
    first = tokens[0]
    return GivenName(first, len(first) > 1, initials, "".join(tokens), tuple(tokens))


def variants_file(shared: Path = _DEFAULT_VARIANTS, prefix: str = sys.prefix) -> Path:
    """The given-name pairs file: `$PAPERDESK_NAME_VARIANTS`; else the shared data folder
    next to the checkout (the file the benchmarks and their figures use); else the copy
    `make` takes from S2AND's wheel into the environment (`share/paperdesk/`, see
    requirements-data.lock) — a later revision of the same list (11,782 lines against the
    shared file's 11,850), so a machine without the shared data still joins
    "Chris"/"Christopher". The first candidate is returned even when absent (then no
    pairs load)."""
    chosen = NAME_VARIANTS.get()
    if chosen is not None:
        return chosen
    packaged = Path(prefix) / "share" / "paperdesk" / shared.name
    if not shared.is_file() and packaged.is_file():
        return packaged
    return shared


def load_variant_pairs(path: str | Path | None = None) -> frozenset[tuple[str, str]]:
    """Given-name variant pairs ("chris", "christopher"), both orders; empty when the file
    is absent. Lines are `a,b`; anything else is skipped."""
    where = Path(path) if path else variants_file()
    pairs: set[tuple[str, str]] = set()
    try:
        text = where.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        a, sep, b = line.strip().partition(",")
        a, b = fold(a).strip(), fold(b).strip()
        if sep and a and b and a != b:
            pairs.add((a, b))
            pairs.add((b, a))
    return frozenset(pairs)


@lru_cache(maxsize=1)
def variant_pairs() -> frozenset[tuple[str, str]]:
    return load_variant_pairs()


@lru_cache(maxsize=262_144)
def first_names_relation(a: GivenName, b: GivenName) -> str:
    """How two given names relate: `equal`, `nickname`, `initial` (at least one side is
    only an initial and they agree), `missing` (a side has no given name), or
    `incompatible`."""
    if not a.first or not b.first:
        return "missing"
    if a.full and b.full:
        if a.first == b.first or a.joined == b.joined:
            return "equal"
        if (a.first, b.first) in variant_pairs():
            return "nickname"
        return "incompatible"
    if a.first[0] != b.first[0]:
        return "incompatible"
    # Initials on one side: the initials must agree as far as both go ("J. F." vs "Joao").
    shorter, longer = sorted((a.initials, b.initials), key=len)
    if not longer.startswith(shorter) and not _split_initials_agree(a, b):
        return "incompatible"
    return "initial"


def _split_initials_agree(a: GivenName, b: GivenName) -> bool:
    """ "Y. T." vs "Yiting": a concatenated two-syllable name may be written as two
    initials; accept when the first initials agree and one side is a single full token."""
    return a.initials[:1] == b.initials[:1] and (len(a.initials) == 1 or len(b.initials) == 1)


def middle_conflict(a: GivenName, b: GivenName) -> bool:
    """Both have a second initial and they differ ("J. F. Henriques" vs "J. M. Henriques")."""
    return len(a.initials) > 1 and len(b.initials) > 1 and a.initials[1] != b.initials[1]
