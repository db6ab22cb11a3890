"""The works tables: incremental resolve, the identity registry, redirects and curations.

`resolve_works(store)` reads the records changed since its last checkpoint (the store's
`seq`), groups them with the pure stages of `paperdesk.resolve` (identity keys, LSH
candidates, pair scores, constrained clustering), then attaches each group to an existing
work — by a registered identifier first, else by the best content match among the stored
LSH band keys — or founds a new work. Nothing already resolved is recomputed, so a day of
new records costs seconds whatever the size of the store; `full=True` re-clusters
everything and keeps each work's old id (the majority of its records' previous ids).

Curations (`merge_works`, `split_work`) change the tables at once and are also kept as
record-level constraints (`work_constraints`) that every later run obeys.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import orjson

from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.gcpause import gc_paused
from paperdesk.resolve.blocking import (
    MAX_BUCKET,
    LshIndex,
    abstract_keys,
    candidate_pairs,
    title_keys,
)
from paperdesk.resolve.cluster import Clusterer
from paperdesk.resolve.pairs import MATCH_THRESHOLD, score
from paperdesk.resolve.works import Doc, make_doc, make_docs
from paperdesk.store.sqlite import (
    CACHE_KIB,
    SQLiteStore,
    decode_record,
    now,
    restore_derived_text,
)

CHECKPOINT = "resolve.works.seq"
TOP_CANDIDATES = 20
"""Stored candidates scored per new record: those sharing the most LSH keys with it."""
PARALLEL_MIN = 50_000
"""Runs with fewer changed records featurise in-process."""
DOC_CACHE = 400_000
"""Features of at most this many indexed records are kept between batches (~1.5 kB each)."""
_CHUNK = 500  # SQLite host-parameter chunk
SPLIT_MIN = 500
"""A one-process run's batch of at least this many records is shared with a forked helper
(`_prepare_split`); below it, starting the helper costs more than it saves."""
SPLIT_SHARE = 50
"""Percent of such a batch this process keeps (the helper takes the rest)..."""
BESIDE_SHARE = 10
"""... less this when the caller has work of its own to run meanwhile (`beside`): the
CLI's ~0.2 s of author-stage imports against ~0.65 s for half of a 1M store's day."""
LSH_DAY_ROWS = 250_000
"""Rows `work_lsh_day` may hold before a run folds them into `work_lsh`. A 1M store's day
adds ~30k: the small table's index stays a few hundred pages (each day dirties about all
of them), and the fold, which dirties about every leaf of `work_lsh_key` as one day used
to, comes once in ~8 days."""
LSH_TABLES = ("work_lsh", "work_lsh_day")
"""The stored band keys: the folded rows, then the rows added since the last fold."""
_DAY_ORDER = 1 << 40
"""Added to `work_lsh_day` rowids where both tables' rows are ranked in stored order:
they come after every `work_lsh` row, as they will once folded."""


@dataclass
class ResolveReport:
    """What one resolve run did."""

    records: int = 0
    new_works: int = 0
    by_identity: int = 0
    by_content: int = 0
    works_merged: int = 0
    seconds: float = 0.0
    last_seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def format_id(work_id: int) -> str:
    return f"W{work_id}"


def parse_id(text: str | int) -> int:
    """`W123`, `w123` or `123` → 123; raises NotFoundError for anything else."""
    s = str(text).strip()
    if s[:1] in "Ww":
        s = s[1:]
    if not s.isdigit():
        raise NotFoundError(f"{text!r} is not a work id (W<number>)")
    return int(s)


def _chunks(items: Sequence[Any], n: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _marks(n: int) -> str:
    return ",".join("?" * n)


# -- look-ups ----------------------------------------------------------------------------
def follow(conn: sqlite3.Connection, work_id: int) -> int:
    """The live id of a work, following merge redirects (bounded against cycles)."""
    for _ in range(100):
        row = conn.execute(
            "SELECT new_id FROM work_redirects WHERE old_id = ?", (work_id,)
        ).fetchone()
        if row is None:
            return work_id
        work_id = int(row[0])
    raise PaperdeskError(f"redirect loop at work {format_id(work_id)}")


def work_id_for(conn: sqlite3.Connection, key: str) -> str | None:
    """The work id (`W<n>`) of record `key`, or None before it was resolved."""
    row = conn.execute("SELECT work_id FROM work_records WHERE record_key = ?", (key,)).fetchone()
    return format_id(int(row[0])) if row else None


def work_ids_for(conn: sqlite3.Connection, keys: Sequence[str]) -> dict[str, str]:
    """Batch form of `work_id_for`: key → `W<n>` for the keys already resolved."""
    out: dict[str, str] = {}
    for part in _chunks(list(keys)):
        sql = f"SELECT record_key, work_id FROM work_records WHERE record_key IN ({_marks(len(part))})"  # noqa: S608
        for k, w in conn.execute(sql, list(part)):
            out[k] = format_id(int(w))
    return out


def _work_keys_of(
    conn: sqlite3.Connection, work_ids: Iterable[int]
) -> dict[int, dict[str, set[str]]]:
    out: dict[int, dict[str, set[str]]] = defaultdict(dict)
    ids = list(set(work_ids))
    for part in _chunks(ids):
        sql = f"SELECT work_id, kind, value FROM work_keys WHERE work_id IN ({_marks(len(part))})"  # noqa: S608
        for w, k, v in conn.execute(sql, list(part)):
            out[int(w)].setdefault(k, set()).add(v)
    return out


def _ids_conflict(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    return any(k in b and vals.isdisjoint(b[k]) for k, vals in a.items())


def _constraints(conn: sqlite3.Connection, keys: Sequence[str]) -> list[tuple[str, str, str]]:
    out = []
    for part in _chunks(list(keys)):
        m = _marks(len(part))
        sql = (
            f"SELECT key_a, key_b, kind FROM work_constraints WHERE key_a IN ({m})"  # noqa: S608
            f" UNION SELECT key_a, key_b, kind FROM work_constraints WHERE key_b IN ({m})"
        )
        out.extend(conn.execute(sql, [*part, *part]).fetchall())
    return out


# -- the incremental run -----------------------------------------------------------------
def _iter_changed(
    conn: sqlite3.Connection, after_seq: int, batch: int
) -> Iterator[list[tuple[int, int, bytes]]]:
    """Batches of (rowid, seq, encoded record) changed after `after_seq`, in seq order."""
    cur = conn.execute(
        "SELECT rowid, seq, data FROM records WHERE seq > ? ORDER BY seq, rowid", (after_seq,)
    )
    while rows := cur.fetchmany(batch):
        yield [(int(r), int(s), bytes(d)) for r, s, d in rows]


class AuthorLite:
    """The two author fields the matcher reads."""

    __slots__ = ("name", "family")

    def __init__(self, name: str, family: str | None):
        self.name, self.family = name, family


class RecordLite:
    """A stored record reduced to the fields the matcher reads, straight from its JSON
    (building the full `SourceRecord` with its nested dataclasses cost as much as
    parsing the JSON itself)."""

    __slots__ = (
        "source",
        "source_id",
        "title",
        "title_text",
        "abstract",
        "abstract_text",
        "authors",
        "doi",
        "arxiv_id",
        "ids",
        "year",
    )

    def __init__(self, data: bytes):
        d = restore_derived_text(orjson.loads(data))  # plain text `encode_record` left out
        g = d.get
        self.source, self.source_id = d["source"], d["source_id"]
        self.title, self.title_text = g("title"), g("title_text")
        self.abstract, self.abstract_text = g("abstract"), g("abstract_text")
        self.authors = [AuthorLite(a["name"], a.get("family")) for a in g("authors") or ()]
        self.doi, self.arxiv_id = g("doi"), g("arxiv_id")
        self.ids = g("ids") or {}
        self.year = g("year")

    @property
    def key(self) -> str:
        return f"{self.source}:{self.source_id}"


@dataclass
class Prepared:
    """One batch made ready for the resolving process (built in a worker process): the
    records' features, their LSH keys and the within-batch pairs that reach the threshold."""

    rowids: list[int]
    seqs: list[int]
    docs: list[Doc]
    tkeys: np.ndarray
    akeys: np.ndarray
    pairs: list[tuple[float, int, int]]
    """(score, i, j), best first, only pairs scoring at least the threshold."""
    scores: dict[int, dict[int, float]] | None = None
    """Each doc's scores against the stored works (`_doc_scores`) when computed with the
    features (`_prepare_split`); None: `_resolve_batch` looks them up."""


def _featurised(rows: Sequence[tuple[int, int, bytes]]) -> tuple[list[Doc], np.ndarray, np.ndarray]:
    """Docs and their title and abstract LSH keys (each record's alone)."""
    docs = make_docs([RecordLite(d) for _, _, d in rows])
    return docs, title_keys(docs), abstract_keys(docs)


def prepare(rows: Sequence[tuple[int, int, bytes]], threshold: float) -> Prepared:
    """Featurise stored rows and score their within-batch candidate pairs: everything of a
    batch that does not depend on the store, so it runs in worker processes while the
    resolving process attaches the previous batch."""
    return _paired(rows, *_featurised(rows), threshold)


def _paired(
    rows: Sequence[tuple[int, int, bytes]],
    docs: list[Doc],
    tkeys: np.ndarray,
    akeys: np.ndarray,
    threshold: float,
) -> Prepared:
    pairs = []
    for i, j in candidate_pairs([tkeys, akeys]):
        sc = score(docs[i], docs[j], threshold)
        if sc >= threshold:
            pairs.append((sc, i, j))
    pairs.sort(reverse=True)
    return Prepared([r for r, _, _ in rows], [q for _, q, _ in rows], docs, tkeys, akeys, pairs)


def _prepared(
    conn: sqlite3.Connection,
    after: int,
    batch_size: int,
    workers: int,
    threshold: float,
    run: _Run,
    split: str | None,
    beside: Callable[[], object] | None,
) -> Iterator[Prepared]:
    """Prepared batches in order; with `workers` > 1 the next batches are prepared in
    other processes (one batch each) while this one resolves the current batch. With
    `split` (the store file) a one-process run's batch of at least SPLIT_MIN records is
    featurised and scored against the stored works by this process and a forked helper
    (`_prepare_split`). `beside` runs once: while the helper works on the first batch it
    shares, else after the last batch."""
    raw = _iter_changed(conn, after, batch_size)
    if workers <= 1:
        for rows in raw:
            if split is not None and len(rows) >= SPLIT_MIN:
                yield _prepare_split(conn, split, rows, threshold, run, beside)
                beside = None
            else:
                yield prepare(rows, threshold)
    else:
        ctx = multiprocessing.get_context("spawn")  # no fork of an open SQLite connection
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            pending: deque[Future[Prepared]] = deque()
            for rows in raw:
                pending.append(pool.submit(prepare, rows, threshold))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
    if beside is not None:
        beside()


def can_split(path: str) -> bool:
    """Whether a small run's batches may be shared with a forked helper (`_prepare_split`):
    a store file (the helper opens its own connection), fork, and two cores."""
    return (
        path != ":memory:"
        and "fork" in multiprocessing.get_all_start_methods()
        and (os.cpu_count() or 1) >= 2
    )


@dataclass
class _Half:
    """Part of a batch featurised and scored against the stored works (`_doc_scores`,
    indices into `docs`)."""

    docs: list[Doc]
    tkeys: np.ndarray
    akeys: np.ndarray
    scores: dict[int, dict[int, float]]


def _matched(
    conn: sqlite3.Connection, rows: Sequence[tuple[int, int, bytes]], threshold: float, run: _Run
) -> _Half:
    docs, tkeys, akeys = _featurised(rows)
    members = np.arange(len(docs), dtype=np.int64)
    return _Half(docs, tkeys, akeys, _doc_scores(conn, docs, tkeys, akeys, members, run, threshold))


def _matched_into(
    pipe: Any, path: str, rows: Sequence[tuple[int, int, bytes]], threshold: float, run: _Run
) -> None:
    """The forked helper of `_prepare_split`: its part on a read-only connection of its
    own (a forked process must not use its parent's)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    pipe.send(_matched(conn, rows, threshold, run))
    pipe.close()


def _prepare_split(
    conn: sqlite3.Connection,
    path: str,
    rows: Sequence[tuple[int, int, bytes]],
    threshold: float,
    run: _Run,
    beside: Callable[[], object] | None = None,
) -> Prepared:
    """`prepare` plus every doc's scores against the stored works, the later part of the
    batch done by a forked helper meanwhile (this process runs `beside` first, if given,
    and keeps a smaller part). Why: on a 1M store's day these were ~1.4 of the stage's
    ~1.8 CPU-s (featurising the 2,000 records, looking up their stored candidates,
    decoding and scoring ~15k of them), all of it per record and read-only, while the
    second core idled. Each doc's scores depend on that doc and the stored rows
    alone (`_doc_scores`), so the halves give what one process gives; the stored state is
    the one `_resolve_batch` would read (nothing is written between). If the helper fails,
    its part is done here."""
    cut = len(rows) * (SPLIT_SHARE - (BESIDE_SHARE if beside is not None else 0)) // 100
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe(duplex=False)
    helper = ctx.Process(target=_matched_into, args=(theirs, path, rows[cut:], threshold, run))
    helper.start()
    theirs.close()
    try:
        if beside is not None:
            beside()
        a = _matched(conn, rows[:cut], threshold, run)
        try:
            b: _Half | None = ours.recv()
        except (EOFError, OSError):
            b = None
    finally:
        ours.close()
        helper.join()
    if b is None:
        b = _matched(conn, rows[cut:], threshold, run)
    batch = _paired(
        rows,
        a.docs + b.docs,
        np.vstack([a.tkeys, b.tkeys]),
        np.vstack([a.akeys, b.akeys]),
        threshold,
    )
    batch.scores = {**a.scores, **{cut + i: s for i, s in b.scores.items()}}
    return batch


@dataclass
class _Run:
    """State one resolve run keeps across its batches."""

    cache: dict[int, Doc]
    """Features of indexed records, so later batches reuse them."""
    redirects: dict[int, int]
    """Merge redirects (old → new work), loaded once and kept current by the run."""
    next_id: int = 0
    """The id the next new work gets (ids are never reused, nor are merged-away ones)."""
    index: LshIndex | None = None
    """In-memory copy of `work_lsh` for large runs (None: look keys up in SQL)."""
    lsh_table: str = "work_lsh"
    """Where the run's new band keys go: `work_lsh_day` on a small incremental run."""

    def follow(self, work: int) -> int:
        for _ in range(100):
            nxt = self.redirects.get(work)
            if nxt is None:
                return work
            work = nxt
        raise PaperdeskError(f"redirect loop at work {format_id(work)}")


def resolve_works(
    store: SQLiteStore,
    *,
    full: bool = False,
    batch_size: int = 20_000,
    threshold: float = MATCH_THRESHOLD,
    workers: int | None = None,
    in_memory: bool | None = None,
    progress: Callable[[ResolveReport], None] | None = None,
    beside: Callable[[], object] | None = None,
) -> ResolveReport:
    """Resolve records changed since the last run into works (all records when `full`).

    `beside`: the caller's own work, run once in this process during the stage, while a
    forked helper shares a day's batch (`_prepare_split`) if one does: `paperdesk resolve`
    imports the author stage there, off the day's critical path.

    `in_memory`: hold the stored LSH keys in memory for the run (default: when at least
    PARALLEL_MIN records are to resolve; loading them costs more than a small run saves).

    An incremental run has the cyclic garbage collector off: reference counting frees
    what it allocates, and the collector's passes over everything the process holds were
    ~1 s of the works stage of a 1M store's day (niced dev runs); a full run keeps it,
    to be safe over its long life."""
    with gc_paused(not full):
        return _resolve_works(
            store, full, batch_size, threshold, workers, in_memory, progress, beside
        )


def _resolve_works(
    store: SQLiteStore,
    full: bool,
    batch_size: int,
    threshold: float,
    workers: int | None,
    in_memory: bool | None,
    progress: Callable[[ResolveReport], None] | None,
    beside: Callable[[], object] | None,
) -> ResolveReport:
    t0 = time.perf_counter()
    conn = store.conn
    report = ResolveReport()
    old_assignment: dict[str, int] = {}
    if full:
        old_assignment = dict(conn.execute("SELECT record_key, work_id FROM work_records"))
        with store.transaction():
            for table in ("work_records", "work_keys", *LSH_TABLES, "work_docs", "works"):
                conn.execute(f"DELETE FROM {table}")  # noqa: S608 (fixed names)
        after = 0
    else:
        after = int(store.get_checkpoint(CHECKPOINT) or 0)
    report.last_seq = after
    # During a full run new works get ids above every old one, remapped at the end.
    base = 0
    if full:
        row = conn.execute(
            "SELECT MAX(m) FROM (SELECT MAX(old_id) m FROM work_redirects UNION ALL"
            " SELECT MAX(new_id) FROM work_redirects)"
        ).fetchone()
        base = max([0, *old_assignment.values(), int(row[0] or 0)]) + 1_000_000
    if not full:
        _backfill_docs(store)
    todo = int(conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (after,)).fetchone()[0])
    nproc = workers if workers is not None else min(2, os.cpu_count() or 1)
    if workers is None and todo < PARALLEL_MIN:
        nproc = 1  # starting worker processes costs more than a small run
    run = _Run(
        {},
        {int(o): int(n) for o, n in conn.execute("SELECT old_id, new_id FROM work_redirects")},
    )
    run.next_id = _first_new_id(conn, base)
    if in_memory or (in_memory is None and todo >= PARALLEL_MIN):
        fold_lsh(store)
        run.index = _load_index(conn)
    elif not full:
        if _day_rows(conn) >= LSH_DAY_ROWS:
            fold_lsh(store)
        run.lsh_table = "work_lsh_day"
    split = store.path if run.index is None and nproc <= 1 and can_split(store.path) else None
    for batch in _prepared(conn, after, batch_size, nproc, threshold, run, split, beside):
        if len(run.cache) > DOC_CACHE:
            run.cache.clear()
        with store.transaction():
            _resolve_batch(conn, batch, threshold, report, run)
            report.records += len(batch.docs)
            report.last_seq = batch.seqs[-1]
            store._set_checkpoint(CHECKPOINT, report.last_seq, stamp=now())
        if progress:
            progress(report)
    if full:
        with store.transaction():
            _restore_ids(conn, old_assignment, base)
    report.seconds = time.perf_counter() - t0
    return report


def _day_rows(conn: sqlite3.Connection) -> int:
    """About how many rows `work_lsh_day` holds (its largest rowid: rows are only
    appended, and a fold empties the table, so rowids start again from 1)."""
    return int(conn.execute("SELECT MAX(rowid) FROM work_lsh_day").fetchone()[0] or 0)


def fold_lsh(store: SQLiteStore) -> int:
    """Move the rows of `work_lsh_day` into `work_lsh`, in their order, in one
    transaction; the number moved. `work_lsh` gets the rows (and rowids) it would have
    had, had they been written there."""
    conn = store.conn
    if not _day_rows(conn):
        return 0
    with store.transaction():
        cur = conn.execute(
            "INSERT INTO work_lsh (band_key, record_rowid, work_id)"
            " SELECT band_key, record_rowid, work_id FROM work_lsh_day ORDER BY rowid"
        )
        conn.execute("DELETE FROM work_lsh_day")
    return int(cur.rowcount)


def _load_index(conn: sqlite3.Connection) -> LshIndex:
    """The stored band keys in memory (a large run looks up tens of thousands of keys per
    batch)."""
    index = LshIndex()
    sql = " UNION ALL ".join(
        f"SELECT band_key, record_rowid, work_id FROM {t}"  # noqa: S608 (fixed names)
        for t in LSH_TABLES
    )
    rows = np.array(conn.execute(sql).fetchall(), dtype=np.int64).reshape(-1, 3)
    index.add(rows[:, 0], rows[:, 1], rows[:, 2])
    return index


def _backfill_docs(store: SQLiteStore) -> None:
    """Stores resolved before `work_docs` existed get the features of their indexed
    records once (later runs find the table filled and skip this)."""
    conn = store.conn
    if conn.execute("SELECT 1 FROM work_docs LIMIT 1").fetchone() is not None:
        return
    if conn.execute(
        "SELECT 1 FROM work_lsh UNION ALL SELECT 1 FROM work_lsh_day LIMIT 1"
    ).fetchone() is None:
        return
    rowids = [
        r
        for (r,) in conn.execute(
            "SELECT record_rowid FROM work_lsh UNION SELECT record_rowid FROM work_lsh_day"
        )
    ]
    for part in _chunks(rowids):
        sql = f"SELECT rowid, data FROM records WHERE rowid IN ({_marks(len(part))})"  # noqa: S608
        rows = [
            (int(r), pack_doc(make_doc(decode_record(d)))) for r, d in conn.execute(sql, list(part))
        ]
        with store.transaction():
            conn.executemany(
                "INSERT OR REPLACE INTO work_docs (record_rowid, doc) VALUES (?, ?)", rows
            )


def _first_new_id(conn: sqlite3.Connection, base: int) -> int:
    """The id `_new_work` would give now (a run then counts up from it)."""
    if base:
        row = conn.execute("SELECT MAX(id) FROM works").fetchone()
        return max(int(row[0] or 0) + 1, base)
    row = conn.execute(
        "SELECT MAX(m) FROM (SELECT MAX(id) m FROM works UNION ALL"
        " SELECT MAX(old_id) FROM work_redirects)"
    ).fetchone()
    return int(row[0] or 0) + 1


def _new_work(conn: sqlite3.Connection) -> int:
    stamp = now()
    wid = _first_new_id(conn, 0)
    conn.execute(
        "INSERT INTO works (id, created_at, updated_at) VALUES (?, ?, ?)", (wid, stamp, stamp)
    )
    return wid


def _resolve_batch(
    conn: sqlite3.Connection,
    batch: Prepared,
    threshold: float,
    report: ResolveReport,
    run: _Run,
) -> None:
    docs, rowids, tkeys, akeys = batch.docs, batch.rowids, batch.tkeys, batch.akeys
    cache = run.cache
    keys = [d.key for d in docs]
    pos = {k: i for i, k in enumerate(keys)}
    pos_of = {rowid: i for i, rowid in enumerate(rowids)}
    prior = {k: int(w) for k, w in _prior(conn, keys).items()}

    # Curations touching these records.
    must_partner: dict[int, set[str]] = defaultdict(set)
    cannot_partner: dict[int, set[str]] = defaultdict(set)
    cl = Clusterer(docs)
    cons = _constraints(conn, keys)
    for a, b, kind in cons:
        if kind == "cannot" and a in pos and b in pos:
            cl.forbid(pos[a], pos[b])
    for a, b, kind in cons:
        if kind == "must" and a in pos and b in pos:
            cl.union(pos[a], pos[b], force=True)
    for a, b, kind in cons:
        for mine, other in ((a, b), (b, a)):
            if mine in pos and other not in pos:
                (must_partner if kind == "must" else cannot_partner)[pos[mine]].add(other)

    # Stage 1 and 2 inside the batch (pairs scored by `prepare`, best first).
    cl.link_identities()
    for _, i, j in batch.pairs:
        cl.union(i, j)
    groups = cl.groups()

    # Identity registry hits for every identifier in the batch.
    all_ids = sorted({ident for d in docs for ident in d.ids})
    registry: dict[tuple[str, str], int] = {}
    for part in _chunks(all_ids, 400):
        cond = " OR ".join(["(kind = ? AND value = ?)"] * len(part))
        args = [x for kv in part for x in kv]
        sql = f"SELECT kind, value, work_id FROM work_keys WHERE {cond}"  # noqa: S608
        for k, v, w in conn.execute(sql, args):
            registry[(k, v)] = int(w)

    # Partner works named by curations (records outside this batch).
    partner_keys = sorted(
        {k for s in (*must_partner.values(), *cannot_partner.values()) for k in s}
    )
    partner_work = {k: int(w) for k, w in _prior(conn, partner_keys).items()}

    # Candidate existing works by identity, then content for groups without identity hits.
    plans: list[tuple[list[int], list[int], dict[int, float]]] = []
    need_content: list[int] = []
    for g in groups:
        hits = [registry[(k, v)] for i in g for k, v in docs[i].ids if (k, v) in registry]
        existing: list[int] = []
        for i in g:
            for k in must_partner.get(i, ()):
                if k in partner_work:
                    existing.append(partner_work[k])
        # The oldest work survives a merge: its id is the one most likely linked already.
        existing += sorted(set(hits) | {prior[keys[i]] for i in g if keys[i] in prior})
        existing = list(dict.fromkeys(existing))
        plans.append((g, existing, {}))
        need_content.append(len(plans) - 1)
    if need_content:
        _content_candidates(conn, plans, need_content, batch, run, threshold)

    forbidden_by_group: dict[int, set[int]] = {}
    for n, (g, _, _) in enumerate(plans):
        fw = {partner_work[k] for i in g for k in cannot_partner.get(i, ()) if k in partner_work}
        if fw:
            forbidden_by_group[n] = fw
    # Only works a group may join are read (its identifier hits, curated partners and
    # content matches above the threshold; works merged below are among them): the ~14k
    # content candidates of a 1M store's day were most of these look-ups, and a match
    # below the threshold is never consulted.
    cand_works = {
        w for _, ex, cs in plans for w in (*ex, *(w for w, s in cs.items() if s >= threshold))
    }
    wkeys = _work_keys_of(conn, cand_works)
    out = _Writes(now())
    out.load_flags(conn, cand_works)

    # Decide and write.
    counts: Counter[str] = Counter()
    lsh_rows: list[tuple[int, int, int]] = []  # (batch index, 0 title | 1 abstract, work)
    for n, (g, existing, content) in enumerate(plans):
        gids: dict[str, set[str]] = {}
        for i in g:
            for k, v in docs[i].ids:
                gids.setdefault(k, set()).add(v)
        forbidden = forbidden_by_group.get(n, set())
        target: int | None = None
        how = "new"
        best = None
        for w in existing:
            w = run.follow(w)
            if w in forbidden:
                continue
            if target is None:
                target = w
                how = "curation" if any(must_partner.get(i) for i in g) else ""
                continue
            if w != target and out.flush(conn) and _mergeable(conn, target, w, wkeys):
                _merge_into(conn, w, target, "a record holds identifiers of both")
                out.merged(w, target)
                run.redirects[w] = target
                wkeys[target] = _merge_keys(wkeys.get(target, {}), wkeys.pop(w, {}))
                report.works_merged += 1
        # Content matches: the best one takes the group when no identifier did; any other
        # work the group matches as well joins too (as inside a batch, where matching pairs
        # cluster transitively), unless identifiers or a curation keep them apart.
        for w, s in sorted(content.items(), key=lambda x: -x[1]):
            if s < threshold:
                break
            w = run.follow(w)
            if w == target or w in forbidden:
                continue
            have = _merge_keys(wkeys.get(target, {}), gids) if target is not None else gids
            if _ids_conflict(have, wkeys.get(w, {})):
                continue
            if target is None:
                target, how, best = w, "content", s
            elif out.flush(conn) and _mergeable(conn, target, w, wkeys):
                keep, gone = min(target, w), max(target, w)  # the older id survives
                _merge_into(conn, gone, keep, "a record matches both by content")
                out.merged(gone, keep)
                run.redirects[gone] = keep
                wkeys[keep] = _merge_keys(wkeys.get(keep, {}), wkeys.pop(gone, {}))
                target = keep
                report.works_merged += 1
        if target is None:
            target = run.next_id
            run.next_id += 1
            out.new_works.append(target)
            out.flags[target] = [False, False]
            report.new_works += 1
            how = "new"
        wkeys[target] = _merge_keys(wkeys.get(target, {}), gids)
        _attach(out, target, g, docs, how, best, registry, counts)
        lsh_rows += _lsh_rows(conn, out, target, g, docs)
    out.flush(conn)
    report.by_identity += counts["id"]
    report.by_content += counts["content"]
    # Band key rows: every key of each indexed (record, field), in key order (B-tree
    # inserts in key order touch each page once).
    parts = []
    for field, fkeys in ((0, tkeys), (1, akeys)):
        sel = [(i, w) for i, f, w in lsh_rows if f == field]
        if sel:
            idx = np.array([i for i, _ in sel], dtype=np.int64)
            k = fkeys[idx]
            n = k.shape[1]
            parts.append(
                np.stack(
                    [
                        k.reshape(-1),
                        np.repeat(np.asarray(rowids, dtype=np.int64)[idx], n),
                        np.repeat(np.array([w for _, w in sel], dtype=np.int64), n),
                    ],
                    axis=1,
                )
            )
    indexed = sorted({rowids[i] for i, _, _ in lsh_rows})
    for rowid in indexed:
        cache.setdefault(rowid, docs[pos_of[rowid]])
    conn.executemany(
        "INSERT OR REPLACE INTO work_docs (record_rowid, doc) VALUES (?, ?)",
        [(rowid, pack_doc(docs[pos_of[rowid]])) for rowid in indexed],
    )
    if parts:
        arr = np.concatenate(parts)
        arr = arr[arr[:, 0] != 0]
        arr = arr[np.argsort(arr[:, 0], kind="stable")]
        conn.executemany(
            f"INSERT INTO {run.lsh_table} (band_key, record_rowid, work_id) VALUES (?, ?, ?)",  # noqa: S608
            arr.tolist(),
        )
        if run.index is not None:
            run.index.add(arr[:, 0], arr[:, 1], arr[:, 2])


def _prior(conn: sqlite3.Connection, keys: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in _chunks(list(keys)):
        sql = f"SELECT record_key, work_id FROM work_records WHERE record_key IN ({_marks(len(part))})"  # noqa: S608
        out.update((k, int(w)) for k, w in conn.execute(sql, list(part)))
    return out


def _merge_keys(a: dict[str, set[str]], b: dict[str, set[str]]) -> dict[str, set[str]]:
    out = {k: set(v) for k, v in a.items()}
    for k, v in b.items():
        out.setdefault(k, set()).update(v)
    return out


def _mergeable(
    conn: sqlite3.Connection, a: int, b: int, wkeys: dict[int, dict[str, set[str]]]
) -> bool:
    """Two existing works may merge unless their identifiers or a curation say otherwise."""
    if _ids_conflict(wkeys.get(a, {}), wkeys.get(b, {})):
        return False
    ka = [k for (k,) in conn.execute("SELECT record_key FROM work_records WHERE work_id = ?", (a,))]
    cons = _constraints(conn, ka)
    others = [y if x in set(ka) else x for x, y, kind in cons if kind == "cannot"]
    if not others:
        return True
    return b not in set(_prior(conn, others).values())


def _merge_into(conn: sqlite3.Connection, old: int, new: int, reason: str) -> None:
    """Move everything of work `old` into `new` and leave a redirect."""
    for table, col in (
        ("work_records", "work_id"),
        ("work_keys", "work_id"),
        *((t, "work_id") for t in LSH_TABLES),
    ):
        conn.execute(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", (new, old))  # noqa: S608
    conn.execute(
        "UPDATE works SET indexed_title = MAX(indexed_title, (SELECT indexed_title FROM works"
        " WHERE id = ?)), indexed_abstract = MAX(indexed_abstract, (SELECT indexed_abstract"
        " FROM works WHERE id = ?)), updated_at = ? WHERE id = ?",
        (old, old, now(), new),
    )
    conn.execute("DELETE FROM works WHERE id = ?", (old,))
    conn.execute("UPDATE work_redirects SET new_id = ? WHERE new_id = ?", (new, old))
    conn.execute(
        "INSERT OR REPLACE INTO work_redirects (old_id, new_id, reason, created_at)"
        " VALUES (?, ?, ?, ?)",
        (old, new, reason, now()),
    )


def _attach(
    out: _Writes,
    work: int,
    group: Sequence[int],
    docs: Sequence[Doc],
    how: str,
    best: float | None,
    registry: dict[tuple[str, str], int],
    counts: Counter[str],
) -> None:
    rows = []
    # Within the group: a record sharing an identifier with another member joined by it;
    # the first of a new work founded it; the rest joined by content.
    seen: Counter[tuple[str, str]] = Counter(ident for i in group for ident in docs[i].ids)
    for n, i in enumerate(group):
        d = docs[i]
        known = [k for k, v in d.ids if registry.get((k, v)) is not None]
        shared = [k for k, v in d.ids if seen[(k, v)] > 1]
        if how == "curation":
            h = how
        elif known and how != "new":
            h = f"id:{known[0]}"
        elif how == "content":
            h = how
        elif n > 0 and shared:
            h = f"id:{shared[0]}"
        elif n == 0 and how == "new":
            h = "new"
        elif how == "new":
            h = "content"
        else:
            h = f"id:{shared[0]}" if shared else "content"
        counts[h.split(":")[0]] += 1
        rows.append((d.key, work, h, best if h == "content" else None))
    out.records += rows
    idrows = [(k, v, work) for i in group for k, v in docs[i].ids]
    out.keys += idrows
    for k, v, _ in idrows:
        registry.setdefault((k, v), work)
    out.touched.add(work)


def _lsh_rows(
    conn: sqlite3.Connection, out: _Writes, work: int, group: Sequence[int], docs: Sequence[Doc]
) -> list[tuple[int, int, int]]:
    """(batch index, field, work) of the first title and the first abstract the work gets:
    their band keys are stored (`LSH_TABLES`; not every record's: versions of one paper
    add little, and the table stays small)."""
    flags = out.flags_of(conn, work)
    rows: list[tuple[int, int, int]] = []
    for i in group:
        if not flags[0] and len(docs[i].title_tokens):
            rows.append((i, 0, work))
            flags[0] = True
            out.touched.add(work)
        if not flags[1] and len(docs[i].abstract_shingles):
            rows.append((i, 1, work))
            flags[1] = True
            out.touched.add(work)
    return rows


class _Writes:
    """One batch's writes, held until the batch ends (or until a merge needs the tables
    current): executemany of thousands of rows instead of several statements per group."""

    def __init__(self, stamp: str):
        self.stamp = stamp
        self.new_works: list[int] = []
        self.records: list[tuple[str, int, str, float | None]] = []
        self.keys: list[tuple[str, str, int]] = []
        self.flags: dict[int, list[bool]] = {}
        """work → [indexed_title, indexed_abstract], current."""
        self.touched: set[int] = set()

    def load_flags(self, conn: sqlite3.Connection, works: Iterable[int]) -> None:
        ids = [w for w in set(works) if w not in self.flags]
        for part in _chunks(ids):
            sql = f"SELECT id, indexed_title, indexed_abstract FROM works WHERE id IN ({_marks(len(part))})"  # noqa: S608
            for w, t, a in conn.execute(sql, list(part)):
                self.flags[int(w)] = [bool(t), bool(a)]

    def flags_of(self, conn: sqlite3.Connection, work: int) -> list[bool]:
        if work not in self.flags:
            self.load_flags(conn, [work])
        return self.flags.setdefault(work, [True, True])  # no row: never index it

    def merged(self, old: int, new: int) -> None:
        """`_merge_into(old, new)` ran: the tables hold the merged flags; mirror them."""
        fo = self.flags.pop(old, [False, False])
        fn = self.flags.setdefault(new, [False, False])
        fn[0], fn[1] = fn[0] or fo[0], fn[1] or fo[1]
        self.touched.discard(old)

    def flush(self, conn: sqlite3.Connection) -> bool:
        """Write what is pending; True (so it can guard a merge in one condition)."""
        if self.new_works:
            conn.executemany(
                "INSERT INTO works (id, created_at, updated_at) VALUES (?, ?, ?)",
                [(w, self.stamp, self.stamp) for w in self.new_works],
            )
            self.new_works = []
        if self.touched:
            conn.executemany(
                "UPDATE works SET indexed_title = ?, indexed_abstract = ?, updated_at = ?"
                " WHERE id = ?",
                [
                    (int(f[0]), int(f[1]), self.stamp, w)
                    for w in sorted(self.touched)
                    if (f := self.flags.get(w)) is not None
                ],
            )
            self.touched = set()
        if self.records:
            conn.executemany(
                "INSERT INTO work_records (record_key, work_id, how, score) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(record_key) DO UPDATE SET work_id = excluded.work_id,"
                " how = excluded.how, score = excluded.score",
                self.records,
            )
            self.records = []
        if self.keys:
            conn.executemany(
                "INSERT OR IGNORE INTO work_keys (kind, value, work_id) VALUES (?, ?, ?)",
                self.keys,
            )
            self.keys = []
        return True


def _content_candidates(
    conn: sqlite3.Connection,
    plans: list[tuple[list[int], list[int], dict[int, float]]],
    which: Sequence[int],
    batch: Prepared,
    run: _Run,
    threshold: float,
) -> None:
    """Fill plans[n][2] (work → best score) for groups in `which`: its members' scores
    against the stored works, in member order (a work's place in the dict is where it is
    first met, which orders ties)."""
    scores = batch.scores
    if scores is None:
        members = np.array([i for n in which for i in plans[n][0]], dtype=np.int64)
        scores = _doc_scores(conn, batch.docs, batch.tkeys, batch.akeys, members, run, threshold)
    for n in which:
        best = plans[n][2]
        for i in plans[n][0]:
            for work, s in scores.get(i, {}).items():
                if s > best.get(work, -1.0):
                    best[work] = s


def _doc_scores(
    conn: sqlite3.Connection,
    docs: Sequence[Doc],
    tkeys: np.ndarray,
    akeys: np.ndarray,
    members: np.ndarray,
    run: _Run,
    threshold: float,
) -> dict[int, dict[int, float]]:
    """doc (of `members`) → work → the doc's best score against the work's stored records
    among its top LSH candidates, works in the order first met."""
    cache = run.cache
    if run.index is not None:
        qkeys = np.hstack([tkeys[members], akeys[members]])
        qdocs = np.repeat(members, qkeys.shape[1])
        found = run.index.top_candidates(qkeys.reshape(-1), qdocs, TOP_CANDIDATES)
        top = {i: [(r, run.follow(run.index.work_of[r])) for r in rws] for i, rws in found.items()}
    else:
        top = _sql_candidates(conn, members, tkeys, akeys)
    rows = sorted({r for lst in top.values() for r, _ in lst} - cache.keys())
    for part in _chunks(rows):
        sql = f"SELECT record_rowid, doc FROM work_docs WHERE record_rowid IN ({_marks(len(part))})"  # noqa: S608
        for rowid, blob in conn.execute(sql, list(part)):
            cache[int(rowid)] = unpack_doc(blob)
    out: dict[int, dict[int, float]] = {}
    for i, cands in top.items():
        best: dict[int, float] = {}
        for rowid, work in cands:
            c = cache.get(rowid)
            if c is None:
                continue
            s = score(docs[i], c, threshold)
            if s > best.get(work, -1.0):
                best[work] = s
        out[i] = best
    return out


_LSH_CHUNK = 999
"""Band keys asked per query of a band key table."""


def _sql_candidates(
    conn: sqlite3.Connection, members: np.ndarray, tkeys: np.ndarray, akeys: np.ndarray
) -> dict[int, list[tuple[int, int]]]:
    """doc → (rowid, work) of the stored records sharing the most LSH keys with it (at
    most TOP_CANDIDATES, most shared first), looked up in `work_lsh` and `work_lsh_day`
    (small runs: no index to load). A key held by more than MAX_BUCKET stored records says nothing and
    is skipped (as in the batch); a key a doc holds twice counts twice. Ties go to the
    candidate met first when the keys are taken in the order of their first stored row
    and each key's rows in stored order (`work_lsh_day`'s rows after `work_lsh`'s: where
    a fold puts them, so a fold changes no decision).

    The keys are asked in chunks through the key index, the rows sorted by rowid here
    (a temp table of the ~55k keys of a 1M store's day cost 0.25 s to fill, and as a
    join SQLite scanned all 3.2M rows), and the counting and ranking run on arrays: the
    same candidates in the same order as counting with one `Counter` a doc."""
    qk = np.hstack([tkeys[members], akeys[members]]).astype(np.int64)
    qd = np.repeat(members.astype(np.int64), qk.shape[1])
    qk = qk.reshape(-1)
    qd, qk = qd[qk != 0], qk[qk != 0]
    keys = np.unique(qk).tolist()
    found: list[tuple[int, int, int, int]] = []
    for table, after in zip(LSH_TABLES, (0, _DAY_ORDER), strict=True):
        for part in _chunks(keys, _LSH_CHUNK):
            found += conn.execute(
                f"SELECT rowid + {after}, band_key, record_rowid, work_id FROM {table}"  # noqa: S608
                f" WHERE band_key IN ({_marks(len(part))})",
                part,
            ).fetchall()
    if not found:
        return {}
    rows = np.array(found, dtype=np.int64).reshape(-1, 4)
    rows = rows[np.argsort(rows[:, 0])]  # stored order
    n = len(rows)
    # Group the rows by key, each key's rows in stored order; rank keys by first row.
    by_key = np.argsort(rows[:, 1], kind="stable")
    sk = rows[by_key, 1]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    sizes = np.diff(np.r_[starts, n])
    key_rank = np.empty(len(starts), np.int64)
    key_rank[np.argsort(by_key[starts], kind="stable")] = np.arange(len(starts))
    # Each (doc, key) pair of a useful key meets every stored row of the key.
    g = np.searchsorted(sk[starts], qk)
    g = np.minimum(g, len(starts) - 1)
    hit = (sk[starts][g] == qk) & (sizes[g] <= MAX_BUCKET)
    qd, g = qd[hit], g[hit]
    if not len(g):
        return {}
    reps = sizes[g]
    within = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    pos = by_key[np.repeat(starts[g], reps) + within]  # row (in stored order) met
    doc = np.repeat(qd, reps)
    met = np.repeat(key_rank[g], reps) * n + pos  # when the counting meets it
    # A candidate is a (rowid, work) pair: count its meetings with each doc.
    cand_of, cand = np.unique(rows[:, 2:], axis=0, return_inverse=True)
    cand = cand.reshape(-1)[pos]
    order = np.lexsort((met, cand, doc))
    doc, cand, met = doc[order], cand[order], met[order]
    first = np.flatnonzero(np.r_[True, (doc[1:] != doc[:-1]) | (cand[1:] != cand[:-1])])
    count = np.diff(np.r_[first, len(doc)])
    doc, cand, met = doc[first], cand[first], met[first]
    rank = np.lexsort((met, -count, doc))
    doc, cand = doc[rank], cand[rank]
    dstart = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    place = np.arange(len(doc)) - np.repeat(dstart, np.diff(np.r_[dstart, len(doc)]))
    keep = place < TOP_CANDIDATES
    out: dict[int, list[tuple[int, int]]] = {}
    pairs = cand_of.tolist()
    for d, c in zip(doc[keep].tolist(), cand[keep].tolist(), strict=True):
        out.setdefault(d, []).append((pairs[c][0], pairs[c][1]))
    return out


def pack_doc(d: Doc) -> bytes:
    """A Doc as bytes for `work_docs` (arrays as raw uint32, the rest as JSON)."""
    head = orjson.dumps(
        [
            d.key,
            d.ids,
            d.title,
            d.title_head,
            sorted(d.surnames),
            sorted(d.name_tokens),
            d.year,
            d.source,
            sorted(d.title_marks),
            len(d.title_tokens),
        ]
    )
    return (
        len(head).to_bytes(4, "little")
        + head
        + d.title_tokens.astype(np.uint32).tobytes()
        + d.abstract_shingles.astype(np.uint32).tobytes()
    )


def unpack_doc(blob: bytes) -> Doc:
    n = int.from_bytes(blob[:4], "little")
    key, ids, title, head, fams, words, year, source, marks, nt = orjson.loads(blob[4 : 4 + n])
    arrays = np.frombuffer(blob[4 + n :], dtype=np.uint32)
    return Doc(
        key=key,
        ids=[(k, v) for k, v in ids],
        title=title,
        title_head=head,
        title_tokens=arrays[:nt].copy(),
        abstract_shingles=arrays[nt:].copy(),
        surnames=frozenset(fams),
        name_tokens=frozenset(words),
        year=year,
        source=source,
        title_marks=frozenset(marks),
    )


def _restore_ids(conn: sqlite3.Connection, old: dict[str, int], base: int) -> None:
    """After a full run: give each new work the old id most of its records had."""
    members: dict[int, list[str]] = defaultdict(list)
    for k, w in conn.execute("SELECT record_key, work_id FROM work_records"):
        members[int(w)].append(k)
    votes = []
    for w, ks in members.items():
        c = Counter(old[k] for k in ks if k in old)
        for o, n in c.items():
            votes.append((-n, o, w))
    votes.sort()
    remap: dict[int, int] = {}
    used: set[int] = set()
    for _, o, w in votes:
        if w in remap or o in used:
            continue
        remap[w] = o
        used.add(o)
    row = conn.execute(
        "SELECT MAX(m) FROM (SELECT MAX(old_id) m FROM work_redirects WHERE old_id < ?"
        " UNION ALL SELECT MAX(new_id) FROM work_redirects WHERE new_id < ?)",
        (base, base),
    ).fetchone()
    nxt = max([0, *old.values(), int(row[0] or 0)]) + 1
    for w in sorted(members):
        if w not in remap:
            remap[w] = nxt
            nxt += 1
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _remap (tmp INTEGER PRIMARY KEY, final INTEGER)")
    conn.execute("DELETE FROM _remap")
    conn.executemany("INSERT INTO _remap VALUES (?, ?)", list(remap.items()))
    for table, col in (
        ("work_records", "work_id"),
        ("work_keys", "work_id"),
        *((t, "work_id") for t in LSH_TABLES),
        ("works", "id"),
    ):
        conn.execute(
            f"UPDATE {table} SET {col} = (SELECT final FROM _remap WHERE tmp = {col})"  # noqa: S608
            f" WHERE {col} >= ?",
            (base,),
        )
    # Old ids whose records now live elsewhere redirect to where most of them went.
    stamp = now()
    where: dict[int, Counter[int]] = defaultdict(Counter)
    cur = dict(conn.execute("SELECT record_key, work_id FROM work_records"))
    for k, o in old.items():
        if k in cur:
            where[o][int(cur[k])] += 1
    for o, c in where.items():
        if o in used:
            continue
        conn.execute(
            "INSERT OR REPLACE INTO work_redirects (old_id, new_id, reason, created_at)"
            " VALUES (?, ?, ?, ?)",
            (o, c.most_common(1)[0][0], "full re-resolve joined it to another work", stamp),
        )
    # Redirects made between temporary ids during this run point at final ids now.
    conn.execute("DELETE FROM work_redirects WHERE old_id >= ?", (base,))
    conn.execute(
        "UPDATE work_redirects SET new_id = (SELECT final FROM _remap WHERE tmp = new_id)"
        " WHERE new_id >= ?",
        (base,),
    )
    conn.execute("DELETE FROM work_redirects WHERE old_id IN (SELECT id FROM works)")
    conn.execute("DELETE FROM _remap")


# -- reading a work ----------------------------------------------------------------------
def get_work(store: SQLiteStore, work: str | int) -> dict[str, Any]:
    """A work with all its source records (source, id, year, title, url, how matched)."""
    conn = store.conn
    asked = parse_id(work)
    wid = follow(conn, asked)
    if conn.execute("SELECT 1 FROM works WHERE id = ?", (wid,)).fetchone() is None:
        raise NotFoundError(f"no work {format_id(asked)}")
    rows = conn.execute(
        "SELECT wr.record_key, wr.how, wr.score, r.data FROM work_records wr"
        " JOIN records r ON r.key = wr.record_key WHERE wr.work_id = ?"
        " ORDER BY r.year, r.rowid",
        (wid,),
    ).fetchall()
    records = []
    for key, how, sc, data in rows:
        r = decode_record(data)
        records.append(
            {
                "key": key,
                "source": r.source,
                "id": r.source_id,
                "year": r.year,
                "title": r.title,
                "url": r.url,
                "doi": r.doi,
                "arxiv_id": r.arxiv_id,
                "venue": r.venue or r.journal_ref,
                "version": r.latest_version,
                "matched_by": how,
                "score": sc,
            }
        )
    ids = [
        {"kind": k, "value": v}
        for k, v in conn.execute(
            "SELECT kind, value FROM work_keys WHERE work_id = ? ORDER BY kind, value", (wid,)
        )
    ]
    titled = [r for r in records if r["title"]]
    lead = sorted(titled, key=lambda r: (r["source"] != "doi" and not r["doi"], -(r["year"] or 0)))
    out: dict[str, Any] = {
        "work_id": format_id(wid),
        "title": lead[0]["title"] if lead else None,
        "years": sorted({r["year"] for r in records if r["year"]}),
        "identifiers": ids,
        "records": records,
        "redirected_from": format_id(asked) if asked != wid else None,
        "merged_from": [
            format_id(int(o))
            for (o,) in conn.execute(
                "SELECT old_id FROM work_redirects WHERE new_id = ? ORDER BY old_id", (wid,)
            )
        ],
    }
    return out


def list_curations(store: SQLiteStore) -> list[dict[str, Any]]:
    rows = store.conn.execute(
        "SELECT id, action, work_a, work_b, records, who, note, created_at FROM work_curations"
        " ORDER BY id"
    ).fetchall()
    return [
        {
            "id": i,
            "action": a,
            "work_a": format_id(wa),
            "work_b": format_id(wb) if wb is not None else None,
            "records": orjson.loads(rec),
            "who": who,
            "note": note,
            "at": at,
        }
        for i, a, wa, wb, rec, who, note, at in rows
    ]


# -- curations ---------------------------------------------------------------------------
def _keys_of(conn: sqlite3.Connection, wid: int) -> list[str]:
    return [
        k
        for (k,) in conn.execute(
            "SELECT record_key FROM work_records WHERE work_id = ? ORDER BY record_key", (wid,)
        )
    ]


def _log(
    conn: sqlite3.Connection,
    action: str,
    a: int,
    b: int | None,
    records: dict[str, list[str]],
    who: str,
    note: str | None,
) -> int:
    cur = conn.execute(
        "INSERT INTO work_curations (action, work_a, work_b, records, who, note, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (action, a, b, orjson.dumps(records).decode(), who, note, now()),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def _constrain(conn: sqlite3.Connection, pairs: Iterable[tuple[str, str, str]], cid: int) -> None:
    rows = []
    for a, b, kind in pairs:
        x, y = sorted((a, b))
        rows.append((x, y, kind, cid))
        # A new constraint overrides the opposite one between the same two records.
        conn.execute(
            "DELETE FROM work_constraints WHERE key_a = ? AND key_b = ? AND kind = ?",
            (x, y, "cannot" if kind == "must" else "must"),
        )
    conn.executemany(
        "INSERT OR REPLACE INTO work_constraints (key_a, key_b, kind, curation_id)"
        " VALUES (?, ?, ?, ?)",
        rows,
    )


def merge_works(
    store: SQLiteStore, a: str | int, b: str | int, *, who: str, note: str | None = None
) -> str:
    """Curated merge: work `b` joins work `a` (b redirects to a); kept as a constraint."""
    conn = store.conn
    wa, wb = follow(conn, parse_id(a)), follow(conn, parse_id(b))
    with store.transaction():
        ka, kb = _keys_of(conn, wa), _keys_of(conn, wb)
        if not ka:
            raise NotFoundError(f"no work {format_id(parse_id(a))}")
        if not kb:
            raise NotFoundError(f"no work {format_id(parse_id(b))}")
        if wa == wb:
            return format_id(wa)
        cid = _log(conn, "merge", wa, wb, {"a": ka, "b": kb}, who, note)
        _constrain(
            conn, [(ka[0], k, "must") for k in kb] + [(ka[0], k, "must") for k in ka[1:]], cid
        )
        # The curation overrides an earlier split between these records.
        for x in ka:
            for y in kb:
                p, q = sorted((x, y))
                conn.execute(
                    "DELETE FROM work_constraints WHERE key_a = ? AND key_b = ? AND kind = 'cannot'",
                    (p, q),
                )
        _merge_into(conn, wb, wa, f"curated merge #{cid} by {who}")
        conn.execute("UPDATE work_records SET how = 'curation' WHERE work_id = ?", (wa,))
    return format_id(wa)


def split_work(
    store: SQLiteStore,
    work: str | int,
    keys: Sequence[str],
    *,
    who: str,
    note: str | None = None,
) -> str:
    """Curated split: the records `keys` leave `work` for a new work of their own.

    Kept as constraints: the moved records stay together and apart from the others on
    every later run (incremental or full)."""
    conn = store.conn
    wid = follow(conn, parse_id(work))
    with store.transaction():
        members = _keys_of(conn, wid)
        if not members:
            raise NotFoundError(f"no work {format_id(parse_id(work))}")
        moving = list(dict.fromkeys(keys))
        missing = [k for k in moving if k not in members]
        if missing:
            raise PaperdeskError(f"not records of {format_id(wid)}: {', '.join(missing)}")
        staying = [k for k in members if k not in set(moving)]
        if not staying:
            raise PaperdeskError("a split must leave at least one record in the work")
        cid = _log(conn, "split", wid, None, {"moved": moving, "stayed": staying}, who, note)
        pairs = [(x, y, "cannot") for x in moving for y in staying]
        pairs += [(moving[0], k, "must") for k in moving[1:]]
        _constrain(conn, pairs, cid)
        new = _new_work(conn)
        conn.execute("UPDATE work_curations SET work_b = ? WHERE id = ?", (new, cid))
        for part in _chunks(moving):
            m = _marks(len(part))
            conn.execute(
                f"UPDATE work_records SET work_id = ?, how = 'curation' WHERE record_key IN ({m})",  # noqa: S608
                [new, *part],
            )
            for table in LSH_TABLES:
                conn.execute(
                    f"UPDATE {table} SET work_id = ? WHERE record_rowid IN"  # noqa: S608
                    f" (SELECT rowid FROM records WHERE key IN ({m}))",
                    [new, *part],
                )
        # Identifiers only the moved records carry now name the new work.
        stay_ids: set[tuple[str, str]] = set()
        move_ids: set[tuple[str, str]] = set()
        for part, bucket in ((staying, stay_ids), (moving, move_ids)):
            for chunk in _chunks(part):
                sql = f"SELECT data FROM records WHERE key IN ({_marks(len(chunk))})"  # noqa: S608
                for (data,) in conn.execute(sql, list(chunk)):
                    bucket.update(make_doc(decode_record(data)).ids)
        for k, v in move_ids - stay_ids:
            conn.execute(
                "UPDATE work_keys SET work_id = ? WHERE kind = ? AND value = ?", (new, k, v)
            )
        conn.execute(
            "UPDATE works SET indexed_title = 1, indexed_abstract = 1 WHERE id = ?", (new,)
        )
    return format_id(new)
