"""Name rarity: how many distinct people plausibly carry a name, from the names a store holds.

S2AND scores a pair of signatures with the frequency of their name in a large corpus: two
papers by "Percy Liang" are likely one person even with no co-author in common, two by
"Wei Zhang" are not. A count of *signatures* cannot say that on a store of a few hundred
thousand records — one prolific person makes their own name look common (22 records of
Percy Liang outnumber most "Wei Zhang"s). What stays small for a rare name however many
papers its carrier writes is the number of distinct *names* around it:

* `surnames(f)`: distinct surnames carried with the given name `f` ("percy": a handful;
  "wei": hundreds);
* `givens(l)`: distinct (spelt-out) given names carried with the surname `l`;
* `distinct`: distinct (given, surname) pairs in the store.

If given names and surnames were paired at random, `surnames(f) * givens(l) / distinct`
people would carry the pair by chance: the estimate of `people(form)`. It is well below 1
for "percy liang", "yoshua bengio", "sergey levine", and around or above 1 for "wei zhang",
"yang liu" (the estimate is floored at 1 / distinct). A name written with an initial only
("v papyan") gets instead the number of spelt-out given names its block holds
(`block_people`): 1 when "Vardan Papyan" is the only one, so the initial can join him.
The same count tells the model how crowded a block is ("liang p": dozens of given names).

A small store cannot know that "Wei Zhang" is common: its few names make every name look
rare. So both counts are the larger of the store's own and those of a prior shipped with
the package (`authors_name_prior.json`: the counts over the ~234k distinct names of the
shared arXiv daily feed, 2025-03 to 2026-04, of given names and surnames seen with at least
`PRIOR_MIN` partners, and of blocks holding at least `PRIOR_BLOCK_MIN` given names;
`bench/authors.py --write-name-prior` rebuilds it). The prior also puts the model's
training and its use on one scale: it is trained on OpenReview's ~14k names, where "liang
p" holds a handful of given names, and runs on stores of ~250k, where it holds dozens —
counted from the store alone, the same block looked crowded only at serving time, and
prolific people with rare names in such blocks were split (session 8: Percy Liang in 17
profiles on the feed, one on a slice of it).

Everything is computed from name *forms* (`authors_features.name_form`: folded given
tokens, then the surname), so a full run (the forms its units counted) and an incremental
one (the forms stored in `author_names`, plus the day's) count the same names.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Any

PRIOR_FILE = "authors_name_prior.json"
PRIOR_MIN = 5
"""Partners (distinct surnames of a given name, given names of a surname) from which a name
is listed in the prior; below, it counts as one."""

PRIOR_BLOCK_MIN = 2
"""Spelt-out given names from which a block (surname + first initial) is listed in the
prior; below, the store's own count stands."""

NO_NAME = 3.0
"""`log_people` of a form without a spelt-out given name (the tree model tells it apart
from any real estimate, which is at most log10 of the number of surnames)."""


def split_form(form: str) -> tuple[str, str] | None:
    """(first given token, last surname token) of a name form; None without both."""
    parts = form.split(" ")
    if len(parts) < 2 or not parts[0] or not parts[-1]:
        return None
    return parts[0], parts[-1]


class NameStats:
    """Distinct-name counts over a set of name forms (see the module doc)."""

    def __init__(self, forms: Iterable[str], prior: NameStats | None | bool = True):
        """`prior`: the packaged prior (True), none (None/False), or these counts."""
        self.prior = default_prior() if prior is True else (prior or None)
        surnames: Counter[str] = Counter()
        givens: Counter[str] = Counter()
        in_block: Counter[tuple[str, str]] = Counter()
        pairs = set()
        for form in set(forms):
            fl = split_form(form)
            if fl is None or len(fl[0]) < 2:
                continue
            pairs.add(fl)
        for first, last in pairs:
            surnames[first] += 1
            givens[last] += 1
            in_block[(last, first[0])] += 1
        self.surnames = surnames
        self.givens = givens
        self.in_block = in_block
        self.distinct = max(len(pairs), 1)

    def people(self, form: str) -> float:
        """Expected people carrying this spelt-out name by chance (see the module doc);
        NaN for a form with an initial only or no given name."""
        fl = split_form(form)
        if fl is None or len(fl[0]) < 2:
            return math.nan
        first, last = fl
        n_f = max(self.surnames.get(first, 0), 1)
        n_l = max(self.givens.get(last, 0), 1)
        own = n_f * n_l / self.distinct
        return own if self.prior is None else max(own, self.prior.people(form))

    def log_people(self, form: str) -> float:
        p = self.people(form)
        return NO_NAME if math.isnan(p) else math.log10(p)

    def block_people(self, form: str) -> int:
        """Distinct spelt-out given names in the form's block (surname + first initial)."""
        fl = split_form(form)
        if fl is None:
            return 0
        first, last = fl
        own = self.in_block.get((last, first[0]), 0)
        return own if self.prior is None else max(own, self.prior.block_people(form))

    def to_json(self, least: int = PRIOR_MIN) -> dict[str, Any]:
        """The counts of names with at least `least` partners, of blocks with at least
        `PRIOR_BLOCK_MIN` given names (the prior's format)."""
        return {
            "distinct": self.distinct,
            "least": least,
            "surnames": {k: v for k, v in sorted(self.surnames.items()) if v >= least},
            "givens": {k: v for k, v in sorted(self.givens.items()) if v >= least},
            "blocks": {
                f"{last} {initial}": v
                for (last, initial), v in sorted(self.in_block.items())
                if v >= PRIOR_BLOCK_MIN
            },
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> NameStats:
        out = cls((), prior=None)
        out.surnames = Counter(d["surnames"])
        out.givens = Counter(d["givens"])
        for key, count in d.get("blocks", {}).items():
            last, _, initial = key.rpartition(" ")
            out.in_block[(last, initial)] = int(count)
        out.distinct = int(d["distinct"])
        return out


@lru_cache(maxsize=1)
def default_prior() -> NameStats:
    """The prior shipped in the package (see the module doc)."""
    text = resources.files("paperdesk.resolve").joinpath(PRIOR_FILE).read_text("utf-8")
    return NameStats.from_json(json.loads(text))
