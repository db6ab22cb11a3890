"""The author repository's interface: what the author stage, pages and the CLI may ask of
author profiles, signatures, samples, curations and the stage's staged rows.

Split from `store/base.py` (as `desk_base.py` is) to keep both modules short. Every
backend implements `AuthorRepository` (the shared part `store/sql/authors*.py`; SQLite's
`store/sqlite/authors*.py`, PostgreSQL's `store/postgres/authors.py`); it takes and returns plain values and the dataclasses
below, never a connection. Profile ids are `a` + 10 hex digits, signature ids
`RECORD_KEY#POSITION`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from paperdesk.store.profiles_codec import VariantCount, pack_folded, pack_variants


@dataclass
class SignatureRow:
    sig_id: str
    record_key: str
    position: int
    name: str
    name_folded: str
    block: str
    author_id: str
    given: str | None = None
    """The given name as written on the record ("Y.", "Yoshua"), for name compatibility."""


@dataclass
class ProfileRow:
    """What `author_profiles` holds for one profile (counts, canonical name, summary)."""

    author_id: str
    name: str
    name_folded: str
    block: str
    n_signatures: int
    n_records: int
    givens: list[str]
    """The distinct given names its signatures were written with."""
    reps: list[str]
    """A bounded sample of its signature ids (see migration 032)."""
    variants: list[VariantCount]
    """Its (name, folded, given, block, count) name variants (see migration 034)."""


@dataclass
class ProfileState:
    """What an incremental run updates a profile row from."""

    reps: list[str]
    n_records: int
    variants: list[VariantCount] | None
    """None for a row written before migration 034 (recount it from its signatures)."""
    block: str
    """Its row's block (a delta row's is always its base row's: see `put_profiles`)."""


@dataclass
class Curation:
    """One entry of the author curation log (merge, split, claim)."""

    id: int
    action: str
    groups: list[list[str]]
    apart: bool
    args: dict[str, Any]
    who: str
    at: str


PackedProfile = tuple[str, str, str | None, str, int, int, str, str, str]
"""A profile row as `put_profiles` binds it (author_id, name, name_folded, block,
n_signatures, n_records, givens, reps, variants), in the slim form of migration 039."""

SampleRow = tuple[bytes, bytes, bytes]
"""A stored sample: (meta JSON, packed co-author key codes, text vector), see migrations
033 and 040 and `paperdesk.resolve.authors_samples`."""

StageRow = tuple[str, str, int, str, str, str, str | None, int]
"""A staged signature row: (sig_id, record_key, position, name, name_folded, block,
given, unit), waiting for its unit's profile id."""

UnitRow = tuple[str, str, int, str, str | None, str]
"""(record_key, sig_id, position, block, given, author_id) of a stored signature."""

VariantsOf = tuple[str, list[tuple[str, str, str | None, str, int]], int]
"""(profile id, its (name, folded, given, block, count) variants, its distinct records)."""


def pack_profile(p: ProfileRow) -> PackedProfile:
    """`p` as its stored values. Pure Python, no SQL: the day packs its grown profiles'
    rows while its signature rows are written from another thread."""
    return (
        p.author_id, p.name, pack_folded(p.name, p.name_folded), p.block, p.n_signatures,
        p.n_records, orjson.dumps(p.givens).decode(), orjson.dumps(p.reps).decode(),
        pack_variants(p.variants, p.block),
    )


class PartStage(Protocol):
    """A full run's rows staged by worker processes, one part each (see
    `AuthorRepository.open_parts`)."""

    parts: int

    def close(self) -> None:
        """Drop whatever the parts hold."""
        ...


class AuthorRepository(Protocol):
    """Author signatures, profiles (base rows and a day's deltas, read as one), sampled
    members' features, redirects, the curation log, and a run's staged rows."""

    # -- signatures --
    def signatures_in_blocks(self, blocks: Iterable[str]) -> list[SignatureRow]:
        """The signatures of these blocks, per chunk of 500 sorted blocks by record key
        and position."""
        ...

    def signatures_by_id(self, sig_ids: Iterable[str]) -> list[SignatureRow]: ...

    def signatures_of_records(self, keys: Iterable[str]) -> list[SignatureRow]: ...

    def authors_of_records(self, keys: Iterable[str]) -> list[tuple[str, str]]:
        """(author_id, name) of these records' signatures, by record and position: the
        co-author list of a profile page, without a row object per signature."""
        ...

    def signatures_of_author(self, author_id: str) -> list[SignatureRow]: ...

    def unit_rows_of_records(self, keys: Iterable[str]) -> list[UnitRow]: ...

    def count_signatures(self) -> int: ...

    def name_forms(self) -> list[str]:
        """Every folded name the store's signatures carry."""
        ...

    def counted_rows(self, table: str) -> list[tuple[str, str, int]]:
        """(name or block, profile, signatures) of `author_names` / `author_blocks`."""
        ...

    def member_ids(self, author_id: str) -> list[str]: ...

    def record_counts(self, author_ids: Iterable[str]) -> dict[str, int]: ...

    def record_authors(self, record_key: str) -> list[dict[str, Any]]:
        """A record's authors in order: `{position, name, author_id}`."""
        ...

    def delete_signatures_of_records(self, keys: Iterable[str]) -> None: ...

    def set_authors(self, moves: Iterable[tuple[str, str]]) -> None:
        """(sig_id, author_id): stored signatures that changed profile."""
        ...

    # -- profiles --
    def put_profiles(self, profiles: Iterable[ProfileRow | PackedProfile]) -> None: ...

    def profile_rows(self, author_ids: Iterable[str] | None = None) -> Iterator[ProfileRow]: ...

    def delete_profiles(self, author_ids: Iterable[str]) -> None: ...

    def count_profiles(self) -> int: ...

    def profile_ids(self) -> set[str]: ...

    def ids_in_use(self, ids: Sequence[str]) -> set[str]:
        """Those of `ids` a profile or redirect has (a superset when `ids` is long)."""
        ...

    def profile_summaries(self, blocks: Iterable[str]) -> list[tuple[str, str, str, int]]:
        """(author_id, block, givens JSON, n_signatures) of the profiles in these blocks."""
        ...

    def profile_samples(self, author_ids: Iterable[str]) -> dict[str, list[str]]: ...

    def profile_states(self, author_ids: Iterable[str]) -> dict[str, ProfileState]: ...

    def name_variants_by_author(
        self, author_ids: Iterable[str] | None = None
    ) -> Iterator[VariantsOf]: ...

    def get_profile_row(self, author_id: str) -> dict[str, Any] | None: ...

    def profiles_by_name(self, name_folded: str, limit: int = 50) -> list[str]: ...

    def profiles_in_block(self, block: str, limit: int = 200) -> list[str]: ...

    def search_profiles(self, words: Sequence[str], limit: int = 50) -> list[str]: ...

    def delete_all(self) -> None:
        """Every signature, profile and sample (a full run rebuilds them)."""
        ...

    # -- samples, records --
    def put_samples(self, rows: Iterable[tuple[str, bytes, bytes, bytes]]) -> None: ...

    def get_samples(self, sig_ids: Iterable[str]) -> dict[str, SampleRow]: ...

    def delete_samples_of_records(self, keys: Iterable[str]) -> None: ...

    def records_by_key(self, keys: Iterable[str]) -> dict[str, Any]:
        """Records (`SourceRecord`, without raw payloads) by key."""
        ...

    def changed_records(self, since: int) -> Iterator[tuple[int, str, bytes]]:
        """(seq, key, stored data) of records changed after `since`, in seq order."""
        ...

    def all_works(self) -> dict[str, str]:
        """Record key → `W<n>` for every resolved record."""
        ...

    def records_of_works(self, works: Iterable[str]) -> dict[str, str]: ...

    # -- redirects, curations --
    def follow_redirects(self, author_id: str) -> str: ...

    def add_redirect(self, old_id: str, new_id: str) -> None: ...

    def add_curation(
        self,
        action: str,
        groups: Sequence[Sequence[str]],
        *,
        apart: bool,
        args: dict[str, Any],
        who: str,
    ) -> int: ...

    def list_curations(self, after_id: int = 0) -> list[Curation]: ...

    def max_curation_id(self) -> int: ...

    # -- a run's staged signature rows --
    def stage_reset(self) -> None:
        """Start staging (drops rows a failed run left)."""
        ...

    def stage_put(self, rows: Iterable[StageRow]) -> None: ...

    def stage_commit(self, unit_author: Iterable[tuple[int, str]], *, bulk: bool = False) -> None:
        """Inside the run's transaction: the staged rows into `author_signatures`, each
        with its unit's profile id, counted in the name, block and member tables."""
        ...

    @property
    def streams_parts(self) -> bool:
        """Whether `open_parts` is offered (worker processes staging rows of their own)."""
        ...

    def open_parts(self, parts: int) -> PartStage: ...

    def records_of_part(
        self, since: int, part: int, parts: int
    ) -> Iterator[tuple[int, int, str, bytes, str | None]]: ...

    def part_writer(self, stage: PartStage, part: int) -> Any:
        """A writer (`put(rows)`, `done()`) for part `part`, in a worker process."""
        ...

    def parts_attached(self, stage: PartStage) -> AbstractContextManager[None]:
        """Around the run's write transaction: the parts readable by `commit_parts`."""
        ...

    def map_parts(self, unit_author: Iterable[tuple[int, int, str]]) -> None:
        """(part, local unit, profile id) of every unit staged in the parts."""
        ...

    def commit_parts(self, stage: PartStage) -> None:
        """Inside the run's transaction (after `map_parts`): `stage_commit(bulk=True)` for
        the rows staged in the parts."""
        ...
