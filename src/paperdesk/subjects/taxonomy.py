"""The arXiv subject taxonomy, shipped as package data, and the split of a record's
category list into arXiv subjects and other classification codes.

Records carry what their source wrote: arXiv cross-lists under both halves of an alias pair
(`math.IT` and `cs.IT`), old papers use defunct archives (`cmp-lg`, `solv-int`), and feeds
mix ACM (`I.2.7`) and MSC (`68T50`) codes into the same list. Users browse by one
canonical subject per topic, so everything is canonicalised here, once; codes that are not
arXiv subjects are kept apart so they are never shown as one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Category:
    """One arXiv category as arXiv defines it."""

    id: str
    name: str
    archive: str
    group: str
    """Group key (`cs`, `math`, `physics`, …); its display name is in `Taxonomy.groups`."""
    active: bool
    """False for defunct archives (`cmp-lg`) and bare legacy codes (`cond-mat`)."""
    canonical: str
    """The code arXiv shows for this category: itself, or what it is an alias of or was
    subsumed by (`math.IT` → `cs.IT`, `cmp-lg` → `cs.CL`)."""
    aliases: tuple[str, ...] = ()
    """Other codes that mean this category (only on canonical categories)."""

    @property
    def is_alias(self) -> bool:
        return self.canonical != self.id


@dataclass(eq=False)
class Taxonomy:
    groups: dict[str, str]
    archives: dict[str, dict[str, object]]
    categories: dict[str, Category]
    _lower: dict[str, Category] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._lower = {k.lower(): v for k, v in self.categories.items()}

    def get(self, code: str) -> Category | None:
        """The category for `code`, matched exactly, then case-insensitively
        (`CS.AI`, `Hep-Th` appear in hand-written BibTeX)."""
        cat = self.categories.get(code)
        if cat is None:
            cat = self._lower.get(code.lower())
        return cat

    def canonical(self, code: str) -> str | None:
        """The canonical subject for `code`, or None when it is not an arXiv category."""
        cat = self.get(code.strip())
        return cat.canonical if cat else None

    def subjects(self) -> list[Category]:
        """The categories a user browses: canonical ones, active first then legacy."""
        return [c for c in self.categories.values() if not c.is_alias]

    def group_name(self, code: str) -> str:
        cat = self.categories[self.canonical(code) or code]
        return self.groups.get(cat.group, cat.group)


@cache
def load() -> Taxonomy:
    """The shipped taxonomy (`subjects/data/taxonomy.json`, made by scripts/make_taxonomy.py)."""
    raw = json.loads(
        resources.files("paperdesk.subjects").joinpath("data/taxonomy.json").read_text("utf-8")
    )
    cats = {
        c["id"]: Category(
            id=c["id"],
            name=c["name"],
            archive=c["archive"],
            group=c["group"],
            active=c["active"],
            canonical=c["canonical"],
            aliases=tuple(c["aliases"]),
        )
        for c in raw["categories"]
    }
    return Taxonomy(groups=raw["groups"], archives=raw["archives"], categories=cats)


# ACM CCS 1998: `I.2.7`, `I.4`, `H.3.3`, `I.4.m`, `D.2.12`.
_ACM = re.compile(r"^[A-K]\.(?:\d{1,2}|m)(?:\.(?:\d{1,2}|m))?$")
# MSC 2010/2020: `68T50`, `68Txx`, `62-08`, `68-XX`, `35Q` .
_MSC = re.compile(r"^\d{2}(?:[A-Z](?:\d{2}|xx|XX)?|-(?:\d{2}|xx|XX))$")
_SEP = re.compile(r"[;,]|\s+")
_NOISE = re.compile(r"\((?:primary|secondary)\)|\b(?:primary|secondary)\b[:]?", re.I)


@dataclass(frozen=True)
class Code:
    """A classification code that is not an arXiv subject."""

    scheme: str
    """`acm`, `msc` or `other`."""
    code: str


@dataclass(frozen=True)
class SplitCategories:
    subjects: list[str]
    """Canonical arXiv subjects, the record's primary first, without duplicates."""
    codes: list[Code]
    """ACM, MSC and unrecognised codes, in the order given, without duplicates."""

    @property
    def primary(self) -> str | None:
        return self.subjects[0] if self.subjects else None


def code_scheme(code: str) -> str:
    if _ACM.match(code):
        return "acm"
    if _MSC.match(code):
        return "msc"
    return "other"


def split_categories(items: list[str] | str | None, tax: Taxonomy | None = None) -> SplitCategories:
    """Split a record's category list (primary first) into canonical arXiv subjects and
    other codes.

    Items may hold several codes (`"I.2.6; I.2.7"`, `"68T50 (Primary) 68T07, 68Q32
    (Secondary)"`); a plain string is one item (some feeds give the primary only). The order
    is kept, so the primary stays first even when an alias appears before its canonical
    twin.
    """
    tax = tax or load()
    if items is None:
        return SplitCategories([], [])
    if isinstance(items, str):
        items = [items]
    subjects: list[str] = []
    codes: list[Code] = []
    for item in items:
        if not isinstance(item, str):
            continue
        for tok in _SEP.split(_NOISE.sub(" ", item)):
            tok = tok.strip().strip(".;:()[]")
            if not tok:
                continue
            canon = tax.canonical(tok)
            if canon is not None:
                if canon not in subjects:
                    subjects.append(canon)
            else:
                code = Code(code_scheme(tok), tok)
                if code not in codes:
                    codes.append(code)
    return SplitCategories(subjects, codes)
