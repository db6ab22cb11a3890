"""Units: the signatures of one author position of one work, disambiguated as one.

A paper reaches the store many times (arXiv v1 and v3, the OpenReview copy, the journal
version, a BibTeX entry), and the works stage has already said which records are one
paper. The k-th author with blocking key `wang y` on every record of one work is one
person, so those signatures form one *unit*: the clustering scores and clusters one
representative per unit (the member that says the most: a spelled-out given name, then
the most co-authors, then the longest text) and every member follows it. On a store of
copies that is an order of magnitude fewer items to compare, and an incremental day's
copies of known papers attach to their profile without any scoring.

A signature named by a curation is a unit of its own (a curation may split two records
of one work between people), and so is a member whose given name contradicts its
unit's representative ("Yu" against "Yann": a wrongly merged work, not one person).
Records not (yet) in a work are their own work.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from paperdesk.model import Author
from paperdesk.normalize.names import normalize_author
from paperdesk.resolve.authors_features import Signature, signatures_from_record
from paperdesk.resolve.authors_names import (
    GivenName,
    first_names_relation,
    fold,
    middle_conflict,
    parse_given,
)
from paperdesk.store.codec import decode_record

StageRow = tuple[str, str, int, str, str, str, str | None, int]
"""(sig_id, record_key, position, name, name_folded, block, given, unit): a signature
row waiting for its unit's profile id."""


@dataclass
class Unit:
    index: int
    key: str
    rep: Signature
    rank: tuple[int, int, int, int]
    work: str | None
    """The work id, or None for a record not in a work (or a unit of one signature)."""
    size: int = 0

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Plain values unpickle faster than a dataclass __dict__ (see `authors_stream`).
        return (Unit, (self.index, self.key, self.rep, self.rank, self.work, self.size))


def rank_of(given: GivenName, n_authors: int, text_len: int) -> tuple[int, int, int, int]:
    """How much a member says about its person: spelled-out given name, its length, the
    co-author list (an "et al." copy lists fewer), the paper text."""
    return (int(given.full), len(given.joined), n_authors, text_len)


_relation = first_names_relation.__wrapped__


def compatible(a: GivenName, b: GivenName) -> bool:
    return _relation(a, b) != "incompatible" and not middle_conflict(a, b)


def unit_keys(work: str, blocks: Iterable[str]) -> list[str]:
    """`WORK/BLOCK/k` for each author position: k counts earlier positions with the same
    blocking key on the record (two "Y. Wang" on one paper are two people)."""
    seen: dict[str, int] = {}  # not a Counter: its look-up of a new key is a Python call
    out = []
    for b in blocks:
        k = seen.get(b, 0)
        out.append(f"{work}/{b}/{k}")
        seen[b] = k + 1
    return out


Variant = tuple[str, str, str | None, str]
"""(display name, folded name, given as written, block) of a signature."""


class UnitBuilder:
    """Groups the signatures of records, fed one at a time as stored JSON dicts, into
    units; hands back the rows to store (`StageRow`s) so members need not stay in
    memory. Until `finish()`, a unit's representative is a stub holding its ids and
    names: a `SourceRecord` is built only at the end, once per record that gives some
    unit its final representative (a unit's best member changes several times while a
    shuffled store of copies streams in; decoding each candidate was a third of the
    streaming)."""

    def __init__(self, solo: set[str]):
        self.solo = solo
        self.units: dict[str, Unit] = {}
        self.variants: list[Counter[Variant]] = []
        """Per unit index: how often each name variant occurs among its members."""
        self.name_counts: Counter[str] = Counter()
        """Signatures per folded name: their names are what `authors_rarity` counts."""
        self.signatures = 0
        self._folded: dict[tuple[str | None, str | None], str] = {}
        self._source: dict[int, tuple[str, bytes, int]] = {}
        """Unit index → (record key, stored data, position) of its representative-to-be."""

    def _fold_name(self, given: str | None, family: str | None) -> str:
        key = (given, family)
        out = self._folded.get(key)
        if out is None:
            tokens = parse_given(given).tokens
            out = self._folded[key] = " ".join((*tokens, fold(family or ""))).strip()
        return out

    def add(self, key: str, data: bytes, work: str | None) -> list[StageRow]:
        """Units and stage rows for one stored record (its `records.data`)."""
        d = orjson.loads(data)
        rkey = key
        authors: list[dict[str, Any]] = d.get("authors") or []
        text_len = len(d.get("title") or "") + len(d.get("abstract") or "")
        named = [(pos, a) for pos, a in enumerate(authors) if a["name"].strip()]
        for _, a in named:
            if a.get("key") is None or a.get("family") is None:
                au = normalize_author(Author(name=a["name"], given=a.get("given"),
                                             family=a.get("family")))
                a.update(given=au.given, family=au.family, display=au.display, key=au.key)
        blocks = [a.get("key") or fold(a["name"]) for _, a in named]
        keys = unit_keys(work or rkey, blocks)
        rows: list[StageRow] = []
        for (pos, a), block, ukey in zip(named, blocks, keys, strict=True):
            sig_id = f"{rkey}#{pos}"
            given_raw = a.get("given")
            given = parse_given(given_raw)
            folded = self._fold_name(given_raw, a.get("family"))
            rank = rank_of(given, len(authors), text_len)
            if sig_id in self.solo:
                ukey = f"sig:{sig_id}"
            unit = self.units.get(ukey)
            if unit is not None and unit.rep.given is not given and not compatible(
                unit.rep.given, given
            ):
                ukey = f"sig:{sig_id}"
                unit = self.units.get(ukey)
            if unit is None or rank > unit.rank:
                stub = _stub(sig_id, rkey, pos, a, block, given, given_raw)
                if unit is None:
                    in_work = work if work and not ukey.startswith("sig:") else None
                    unit = Unit(len(self.units), ukey, stub, rank, in_work)
                    self.units[ukey] = unit
                    self.variants.append(Counter())
                else:
                    unit.rep, unit.rank = stub, rank
                self._source[unit.index] = (rkey, data, pos)
            unit.size += 1
            self.signatures += 1
            self.name_counts[folded] += 1
            name = a.get("display") or a["name"]
            self.variants[unit.index][(name, folded, given_raw, block)] += 1
            rows.append((sig_id, rkey, pos, name, folded, block, given_raw, unit.index))
        return rows

    def finish(self) -> None:
        """Give every unit the full `Signature` of its representative (call once all
        records are in, before the units are used)."""
        by_record: dict[str, tuple[bytes, dict[int, Unit]]] = {}
        units = list(self.units.values())
        for index, (key, data, pos) in self._source.items():
            by_record.setdefault(key, (data, {}))[1][pos] = units[index]
        for data, wanted in by_record.values():
            for sig in signatures_from_record(decode_record(data), wanted):
                wanted[sig.position].rep = sig
        self._source.clear()


def _stub(
    sig_id: str, key: str, pos: int, author: dict[str, Any], block: str, given: GivenName,
    given_raw: str | None,
) -> Signature:
    """A representative's ids and names, until `UnitBuilder.finish` decodes its record."""
    return Signature(
        sig_id=sig_id, record_key=key, position=pos, name=author.get("display") or author["name"],
        block=block, family="", given=given, given_raw=given_raw, affiliations=frozenset(),
        affiliation_text="", orcid=None, email=None, coauthors=frozenset(), venue="",
        year=None, text="",
    )


def stored_units(
    rows: Iterable[tuple[str, str, int, str, str | None, str]],
    work_of: Mapping[str, str],
    solo: set[str],
) -> dict[str, list[tuple[str, str, str | None]]]:
    """Unit key → [(sig_id, author_id, given)] for stored signature rows
    `(record_key, sig_id, position, block, given, author_id)`, grouped the way
    `UnitBuilder` groups new ones."""
    by_record: dict[str, list[tuple[int, str, str, str | None, str]]] = {}
    for key, sig_id, pos, block, given, aid in rows:
        by_record.setdefault(key, []).append((pos, sig_id, block, given, aid))
    out: dict[str, list[tuple[str, str, str | None]]] = {}
    for key, members in by_record.items():
        members.sort()
        ukeys = unit_keys(work_of.get(key, key), (m[2] for m in members))
        for (_, sig_id, _, given, aid), ukey in zip(members, ukeys, strict=True):
            if sig_id in solo:
                ukey = f"sig:{sig_id}"
            out.setdefault(ukey, []).append((sig_id, aid, given))
    return out
