"""The store interface: what the stages, the CLI and the web layer may rely on.

Every backend implements `Store` (SQLite in `store/sqlite/`, PostgreSQL in `store/postgres/`).
A store has one writer and hands out repositories, one per aggregate; they take and
return plain values and the dataclasses below, never connections or cursors. Writes
happen inside `store.transaction()` (explicit, one per batch, nested use joins the outer
one); `store.reader()` gives a read-only view of the same repositories on a connection of
its own. Nothing above this interface writes SQL. See docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np

from paperdesk.model import SourceRecord
from paperdesk.store.authors_base import AuthorRepository
from paperdesk.store.desk_base import DeskRepository


def now() -> str:
    """The UTC time stamp every backend stores (`2026-12-01T23:04:10Z`)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def whole_seqs(
    pages: Iterable[list[tuple[int, int, bytes]]],
) -> Iterator[list[tuple[int, int, bytes]]]:
    """Pages of (rowid, seq, data) in seq order, regrouped so that no batch ends inside a seq
    (a seq longer than a page makes one longer batch).

    Why: a stage checkpoints the last seq of each batch it commits, and one ingest write
    gives thousands of records the same seq; a batch cut inside a seq would leave that
    seq's other records behind a checkpoint that says they are done, and a kill between
    two batches would then lose them for good."""
    held: list[tuple[int, int, bytes]] = []
    for page in pages:
        held += page
        if not held:
            continue
        last = held[-1][1]
        cut = len(held)
        while cut and held[cut - 1][1] == last:
            cut -= 1
        if cut:
            yield held[:cut]
            held = held[cut:]
    if held:
        yield held


@dataclass
class PutResult:
    """What one `put_records` call did."""

    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    keys: list[str] = field(default_factory=list)
    """Keys of records inserted or updated (what downstream stages must re-process)."""


@dataclass
class Reject:
    """A record that could not be ingested, kept so users can see and fix it."""

    origin: str
    record_no: int | None
    error: str
    snippet: str = ""


@dataclass
class WorkRecordRow:
    """One record of a work as a work page shows it."""

    key: str
    how: str
    score: float | None
    data: bytes
    """The record's stored document (`paperdesk.store.codec.decode_record`)."""


@dataclass
class CurationRow:
    """One entry of the works' curation log."""

    id: int
    action: str
    work_a: int
    work_b: int | None
    records: dict[str, list[str]]
    who: str
    note: str | None
    at: str


class WorkRepository(Protocol):
    """Works, their records and identifiers, redirects, curations and the LSH band keys
    the works resolver keeps. Records are named by key, or by the integer row id the
    records repository gave them; works by their integer id (`W<id>` for users)."""

    def redirect_of(self, work_id: int) -> int | None:
        ...

    def redirects(self) -> dict[int, int]:
        ...

    def work_of(self, key: str) -> int | None:
        ...

    def works_of(self, keys: Sequence[str]) -> dict[str, int]:
        """key → work id for the keys already resolved."""
        ...

    def assignment(self) -> dict[str, int]:
        """Every resolved record's work."""
        ...

    def exists(self, work_id: int) -> bool:
        ...

    def members(self, work_id: int) -> list[str]:
        """The work's record keys, sorted."""
        ...

    def members_unordered(self, work_id: int) -> list[str]:
        ...

    def members_in_record_order(self, work_id: int) -> list[str]:
        """The work's record keys in the order the records were stored."""
        ...

    def keys_of(self, work_ids: Iterable[int]) -> dict[int, dict[str, set[str]]]:
        """work → identifier kind → values."""
        ...

    def registry(self, idents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """(kind, value) → work for the identifiers already registered."""
        ...

    def constraints(self, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """Curated (key_a, key_b, must|cannot) pairs naming any of `keys`."""
        ...

    def flags(self, work_ids: Iterable[int]) -> dict[int, list[bool]]:
        """work → [title indexed, abstract indexed]."""
        ...

    def identifiers(self, work_id: int) -> list[tuple[str, str]]:
        ...

    def merged_from(self, work_id: int) -> list[int]:
        ...

    def record_rows(self, work_id: int) -> list[WorkRecordRow]:
        """The work's records, oldest year first, then in stored order."""
        ...

    def record_data(self, keys: Sequence[str]) -> list[bytes]:
        """The stored documents of the records `keys` (in no particular order)."""
        ...

    def curations(self) -> list[CurationRow]:
        ...

    def count_changed(self, after_seq: int) -> int:
        ...

    def changed_rows(self, after_seq: int, batch: int) -> Iterator[list[tuple[int, int, bytes]]]:
        """Batches of (rowid, seq, stored document) changed after `after_seq`, in seq order."""
        ...

    def max_redirect_id(self) -> int:
        ...

    def first_new_id(self, base: int) -> int:
        """The id the next new work gets: above every work and redirected id (above `base`
        during a full run, whose ids are renumbered at its end)."""
        ...

    def lsh_all(self) -> np.ndarray:
        """Every stored band key row as (band key, record rowid, work), int64 (n, 3)."""
        ...

    def lsh_rows(self, keys: Sequence[int]) -> np.ndarray:
        """The stored rows of the band keys `keys` as (stored order, band key, record rowid,
        work), int64 (n, 4), in no particular order."""
        ...

    def docs(self, rowids: Sequence[int]) -> Iterator[tuple[int, bytes]]:
        """(record rowid, packed features) kept for the indexed records among `rowids`."""
        ...

    def docs_missing(self) -> list[int]:
        """Indexed record rowids of a store resolved before `work_docs` existed (empty when
        the table has rows, or nothing is indexed)."""
        ...

    def record_data_by_rowid(self, rowids: Sequence[int]) -> list[tuple[int, bytes]]:
        ...

    def clear(self) -> None:
        """Empty the derived works tables (a full run rebuilds them)."""
        ...

    def add_works(self, ids: Sequence[int], stamp: str) -> None:
        ...

    def new_work(self) -> int:
        """A new empty work with the next id."""
        ...

    def set_flags(self, rows: Sequence[tuple[int, bool, bool]], stamp: str) -> None:
        """(work, title indexed, abstract indexed) for each touched work."""
        ...

    def put_records(self, rows: Sequence[tuple[str, int, str, float | None]]) -> None:
        """(record key, work, how it joined, score): insert or move."""
        ...

    def add_keys(self, rows: Sequence[tuple[str, str, int]]) -> None:
        """(kind, value, work): identifiers registered for their first work."""
        ...

    def put_docs(self, rows: Sequence[tuple[int, bytes]]) -> None:
        ...

    def add_related(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """(referring record key, referred record key, kind): an erratum, reply, comment or
        other part linked to the paper it refers to (derived; emptied by `clear`)."""
        ...

    def related_of(self, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """(from key, to key, kind) of the links touching any of `keys`."""
        ...

    def add_lsh(self, rows: np.ndarray) -> None:
        """(band key, record rowid, work) rows, appended in their order."""
        ...

    def merge(self, old: int, new: int, reason: str) -> None:
        """Move everything of work `old` into `new` and leave a redirect."""
        ...

    def add_redirects(self, rows: Sequence[tuple[int, int, str]]) -> None:
        ...

    def max_redirect_below(self, base: int) -> int:
        ...

    def renumber(self, remap: dict[int, int], base: int) -> None:
        """After a full run: the works numbered from `base` get their final ids (`remap`),
        and redirects made between temporary ids point at final ids."""
        ...

    def finish_renumber(self, base: int) -> None:
        ...

    def log_curation(
        self,
        action: str,
        a: int,
        b: int | None,
        records: dict[str, list[str]],
        who: str,
        note: str | None,
    ) -> int:
        ...

    def set_curation_work_b(self, cid: int, work: int) -> None:
        ...

    def constrain(self, pairs: Iterable[tuple[str, str, str]], cid: int) -> None:
        """Record (key, key, must|cannot) constraints of curation `cid`; each overrides the
        opposite one between the same two records."""
        ...

    def drop_cannot(self, a: str, b: str) -> None:
        ...

    def mark_curated(self, work_id: int) -> None:
        ...

    def move_records(self, keys: Sequence[str], work_id: int) -> None:
        """The records `keys` (and their band keys) to `work_id`, marked curated."""
        ...

    def move_key(self, kind: str, value: str, work_id: int) -> None:
        ...

    def mark_indexed(self, work_id: int) -> None:
        """Never index band keys for this work (a split-off work: its records keep theirs)."""
        ...


class SubjectRepository(Protocol):
    """Subjects per record (given by the source or predicted) and classification codes."""

    def pending(self, upto_seq: int) -> Iterator[tuple[int, SourceRecord]]:
        """Records up to `upto_seq` without a classification state (left by a run
        without a model)."""
        ...

    def replace(
        self,
        keys: Sequence[str],
        subjects: Sequence[tuple[str, int, str, int, float | None, float | None]],
        codes: Sequence[tuple[str, int, str, str]],
        states: Sequence[tuple[str, str | None, str]],
        contexts: Sequence[tuple[str, str]] = (),
    ) -> None:
        """The subjects, codes and context keys (`(record key, context key)`) of records
        `keys` replaced by the rows given."""
        ...

    def put_predicted(
        self,
        keys: Sequence[str],
        subjects: Sequence[tuple[str, int, str, int, float | None, float | None]],
        states: Sequence[tuple[str, str | None, str]],
    ) -> None:
        """The predicted subjects and states of records `keys` (codes and context stay)."""
        ...

    def context_counts(
        self, keys: Sequence[str], secondary_weight: float
    ) -> dict[str, dict[str, float]]:
        """Context key → subject → weight of the given subjects of the records holding it
        (a primary counts 1, a cross-list `secondary_weight`)."""
        ...

    def recent_primaries(self, days: int) -> dict[str, float]:
        """Subject → records that gave it as their primary in the `days` days before the
        latest day a record with given subjects appeared (the classifier's recent mix)."""
        ...

    def of_records(self, keys: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Each record's subjects in rank order: `{subject, predicted[, probability,
        primary_probability]}`."""
        ...

    def codes_of(self, key: str) -> list[dict[str, str]]:
        ...

    def count_classified(self, keys: Sequence[str]) -> int:
        ...

    def all_rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(record key, subject entry) of every record, by key and rank."""
        ...


class CatalogRepository(Protocol):
    """The read queries behind the pages: days, the records of works, subject lists.
    Work ids are `W<id>` strings, or a record key for a record not yet resolved."""

    def latest_day(self) -> str | None:
        """The newest day that has any record."""
        ...

    def neighbour_days(self, day: str) -> tuple[str | None, str | None]: ...

    def day_records(self, day: str) -> list[tuple[str, SourceRecord]]: ...

    def day_index(self, day: str) -> list[tuple[str, int, str | None]]:
        """(work id, record rowid, category code or None) for every record of `day`."""
        ...

    def work_records(self, work_ids: Sequence[str]) -> dict[str, list[SourceRecord]]: ...

    def author_ids(self, keys: Sequence[str]) -> dict[tuple[str, int], str]:
        """(record key, author position) -> author profile id."""
        ...

    def follow_work(self, work_id: str) -> str:
        """The id a (possibly merged-away) work id now answers to."""
        ...

    def code_counts(self) -> dict[str, int]: ...

    def data_version(self) -> tuple[int, int]:
        """Changes whenever anything a page shows may have changed (the page cache's key)."""
        ...

    def recent_in(
        self, codes: Sequence[str], prefix: str | None, limit: int
    ) -> list[tuple[str, SourceRecord]]: ...


class SearchRepository(Protocol):
    """Search documents (work id ↔ docno, content hashes) and stored vectors: what the
    search stage and the index read and write beside the index files."""

    def doc_hashes(self, work_ids: Sequence[str]) -> dict[str, tuple[int, str]]: ...

    def upsert_docs(self, rows: Iterable[tuple[str, str]]) -> dict[str, int]: ...

    def delete_docs(self, docnos: Sequence[int]) -> None: ...

    def docno_of(self, work_id: str) -> int | None: ...

    def work_ids(self, docnos: Sequence[int]) -> dict[int, str]: ...

    def count_docs(self) -> int: ...

    def all_docnos(self) -> list[int]: ...

    def vector_hashes(
        self, model: str, docnos: Sequence[int] | None = None
    ) -> dict[int, bytes]: ...

    def vectors_by_hash(self, hashes: Sequence[bytes]) -> dict[bytes, np.ndarray]: ...

    def put_vectors(self, model: str, rows: Iterable[tuple[int, bytes, np.ndarray]]) -> None: ...

    def iter_vectors(
        self, model: str, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]: ...

    def count_vectors(self, model: str) -> int: ...

    def reset_hashes(self) -> None: ...

    def delete_vectors(self, docnos: Sequence[int]) -> None: ...

    def has_works(self) -> bool: ...

    def work_members(self, keys: Sequence[str]) -> dict[str, list[str]]: ...

    def works_updated_after(self, stamp: str) -> tuple[list[str], str]: ...

    def orphan_docnos(self) -> list[int]: ...


class Store(Protocol):
    """One store: a writer, its repositories, checkpoints and the records' own methods."""

    path: str

    @property
    def shared(self) -> bool:
        """Whether worker processes can open views of this store (`reader()`)."""
        ...

    @property
    def authors(self) -> AuthorRepository: ...

    @property
    def works(self) -> WorkRepository: ...

    @property
    def subjects(self) -> SubjectRepository: ...

    @property
    def catalog(self) -> CatalogRepository: ...

    @property
    def search(self) -> SearchRepository: ...

    @property
    def desk(self) -> DeskRepository: ...

    def close(self) -> None: ...

    def transaction(self) -> AbstractContextManager[Any]:
        """One write transaction (nested use joins the outer one)."""
        ...

    def reader(self) -> AbstractContextManager[Store]:
        """A read-only view of this store on a connection of its own."""
        ...

    # -- source records --
    def known_payloads(self, pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
        """The subset of (record key, payload sha256 hex) pairs whose record already holds
        that payload."""
        ...

    def put_records(
        self,
        records: Sequence[SourceRecord],
        *,
        origin: str,
        checkpoint: tuple[str, Any] | None = None,
        rejects: Sequence[Reject] = (),
        hashes: Sequence[str] | None = None,
    ) -> PutResult:
        """Insert or merge records, their raw payloads, rejects and an optional checkpoint
        in ONE transaction: after a crash either all of it is stored or none of it."""
        ...

    def get_record(self, key: str) -> SourceRecord:
        """The record `SOURCE:ID`; raises NotFoundError."""
        ...

    def get_records(self, keys: Sequence[str]) -> dict[str, SourceRecord]: ...

    def list_records(
        self, source: str | None = None, *, limit: int = 50, offset: int = 0
    ) -> list[SourceRecord]:
        """A page of records, newest rowid first."""
        ...

    def list_rejects(self, limit: int = 100) -> list[Reject]:
        """The newest rejected inputs (file, record number, error, snippet)."""
        ...

    # -- bulk ingest (ingest.py): rows encoded by the backend's `prepare_row` --
    readonly: bool

    @property
    def target(self) -> str:
        """What the store was opened from: a file path or a URL (never with a password)."""
        ...

    def has_records(self) -> bool: ...

    def put_rows(
        self,
        rows: Sequence[tuple[Any, ...]],
        *,
        origin: str,
        checkpoint: tuple[str, Any] | None = None,
        rejects: Sequence[Reject] = (),
    ) -> PutResult:
        """`put_records` for records already encoded (possibly in another process)."""
        ...

    def rows_transaction(self) -> AbstractContextManager[Any]:
        """The transaction `put_rows` writes in, for a caller grouping several batches."""
        ...

    def restart_wal_if_large(self) -> None:
        """Between two transactions of a bulk write: the backend's log housekeeping."""
        ...

    def file_done(self, digest: str) -> bool:
        """Whether an input file with this sha256 was ingested whole before."""
        ...

    def mark_file_done(
        self, digest: str, path: str, size: int, records: int, rejected: int
    ) -> None: ...

    def iter_records(
        self, source: str | None = None, *, after_rowid: int = 0, limit: int | None = None
    ) -> Iterator[tuple[int, SourceRecord]]:
        """(rowid, record) in insertion order; `after_rowid` lets stages resume incrementally."""
        ...

    def iter_changed(self, after_seq: int) -> Iterator[tuple[int, SourceRecord]]:
        """(seq, record) for records inserted or changed after `after_seq`, in seq order."""
        ...

    def record_payloads(self, key: str) -> list[dict[str, Any]]:
        """Every raw payload received for a record: format, origin, received_at, body."""
        ...

    def count_records(self, source: str | None = None) -> int: ...

    # -- bookkeeping --
    def derived_format(self, name: str) -> int | None:
        """The format version of stage `name`'s derived tables (None: never recorded)."""
        ...

    def set_derived_format(self, name: str, version: int) -> None: ...

    def count_changed(self, after_seq: int) -> int:
        """Records inserted or changed after `after_seq`."""
        ...

    def get_checkpoint(self, name: str) -> Any | None: ...

    def set_checkpoint(self, name: str, value: Any) -> None:
        """Inside a caller's transaction it commits with it."""
        ...

    def add_rejects(self, rejects: Iterable[Reject]) -> None: ...

    def stats(self) -> dict[str, Any]: ...
