"""A full author run's streaming phase, split over worker processes.

Reading a million records into units (parsing their JSON, normalising names, picking each
unit's representative, staging the signature rows until their profile ids are known) and
vectorising the representatives' text was most of a full run, in one process. Here the
records are shared out between forked workers by their work id (a unit never spans two
works, so each worker builds whole units); each reads its share from the store file with
its own read-only view (`store.reader()`), stages its rows in a part of its own (on
SQLite a file, `store.authors.open_parts`) and vectorises its units' text. Only a backend
whose repository offers parts (`streams_parts`) streams: elsewhere a full run reads in
one process. The parent merges the units in the order a single process would have made
them (by the record that opened each unit, then position), so everything downstream —
blocks, sub-blocks, labels, profile ids — is exactly the serial run's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from paperdesk import parallel
from paperdesk.resolve.authors_features import text_vectors
from paperdesk.resolve.authors_units import Unit, UnitBuilder
from paperdesk.store.authors_base import PartStage
from paperdesk.store.base import Store

STREAM_MIN = 20_000
"""Records from which a full run streams them in worker processes."""

_ROWS = 20_000
"""Stage rows a worker writes at once."""


@dataclass
class Part:
    """What one worker hands back: its units (local index order), their name variants,
    counts, the (seq, rowid) of the record that opened each unit, and the units'
    representative text vectors (the text itself stays behind)."""

    units: list[Unit]
    variants: list[dict[Any, int]]
    """Per unit, as plain dicts (a Counter unpickles through Python code)."""
    opened: list[tuple[int, int]]
    name_counts: Counter[str]
    signatures: int
    records: int
    last_seq: int
    vectors: sparse.csr_matrix


@dataclass
class Streamed:
    """The merged result: a `UnitBuilder` as one process would have built it, the text
    vectors of its units' representatives (unit index order), and the staged rows, one
    part per worker, whose unit numbers are the worker's local ones (`local_to_global`)."""

    builder: UnitBuilder
    vectors: sparse.csr_matrix
    records: int
    last_seq: int
    local_to_global: list[np.ndarray]
    stage: PartStage = field(repr=False)

    def unit_rows(self, unit_author: dict[int, str]) -> Iterator[tuple[int, int, str]]:
        """(worker, local unit, profile id) for every unit."""
        for k, glob in enumerate(self.local_to_global):
            for local, g in enumerate(glob.tolist()):
                yield k, local, unit_author[g]

    def close(self) -> None:
        self.stage.close()


_Job = tuple[Store, int, set[str], int, PartStage]
"""What the workers share (`parallel.fork_map`): (the store, since, solo, workers, the
parts they stage their rows in)."""


def _stream_part(k: int) -> Part:
    job: _Job = parallel.shared()
    store, since, solo, n, stage = job
    builder = UnitBuilder(solo)
    opened: list[tuple[int, int]] = []
    rows: list[Any] = []
    records = 0
    last_seq = since
    with store.reader() as view:
        out = view.authors.part_writer(stage, k)
        for seq, rowid, key, data, work in view.authors.records_of_part(since, k, n):
            records += 1
            last_seq = max(last_seq, seq)
            before = len(builder.units)
            rows.extend(builder.add(key, data, work))
            opened.extend([(seq, rowid)] * (len(builder.units) - before))
            if len(rows) >= _ROWS:
                out.put(rows)
                rows.clear()
        out.put(rows)
        out.done()
    builder.finish()
    units = list(builder.units.values())
    vectors = text_vectors([u.rep for u in units])
    for u in units:
        u.rep.text = ""  # vectorised: no need to ship it back
    return Part(
        units, [dict(v) for v in builder.variants], opened, builder.name_counts,
        builder.signatures, records, last_seq, vectors,
    )


def can_stream(store: Store, since: int) -> bool:
    """A full run over a store large enough to be worth the workers, whose repository
    can stage rows in parts (SQLite files; not an in-memory store)."""
    if since != 0 or not store.shared or not parallel.can_fork():
        return False
    if not store.authors.streams_parts:
        return False
    if parallel.workers() < 2:
        return False
    return store.count_records() >= STREAM_MIN


def stream(store: Store, solo: set[str], processes: int | None = None) -> Streamed:
    """Every record into units, in `processes` forked workers (see the module doc)."""
    n = parallel.workers() if processes is None else processes
    stage = store.authors.open_parts(n)
    try:
        job: _Job = (store, 0, solo, n, stage)
        parts = parallel.fork_map(_stream_part, range(n), state=job, processes=n)
        return _merge(parts, solo, stage)
    except BaseException:
        stage.close()
        raise


def _merge(parts: list[Part], solo: set[str], stage: PartStage) -> Streamed:
    """One builder from the workers' parts, units in the serial run's order: by the
    (seq, rowid) of the record that opened them, then by creation order within it (a
    record belongs to one worker, which opened its units in position order)."""
    order = sorted(
        (opened, k, i) for k, part in enumerate(parts) for i, opened in enumerate(part.opened)
    )
    builder = UnitBuilder(solo)
    local_to_global = [np.empty(len(p.units), dtype=np.int64) for p in parts]
    offsets = np.cumsum([0, *(len(p.units) for p in parts)])
    rows = np.empty(len(order), dtype=np.int64)
    for g, (_, k, i) in enumerate(order):
        unit = parts[k].units[i]
        unit.index = g
        builder.units[unit.key] = unit
        builder.variants.append(Counter(parts[k].variants[i]))
        local_to_global[k][i] = g
        rows[g] = offsets[k] + i
    for p in parts:
        builder.name_counts.update(p.name_counts)
        builder.signatures += p.signatures
    vectors = sparse.vstack([p.vectors for p in parts], format="csr")[rows]
    return Streamed(
        builder=builder,
        vectors=vectors,
        records=sum(p.records for p in parts),
        last_seq=max(p.last_seq for p in parts),
        local_to_global=local_to_global,
        stage=stage,
    )
