"""The works resolver's per-record matching: records reduced to what matching reads,
their features and LSH keys, within-batch pair scores, and each record's scores against
the stored works (its top LSH candidates, ranked on arrays).

Reads the store through its works repository only (`store.works`); everything here is
read-only, so batches can be prepared in worker processes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import orjson

from paperdesk.errors import PaperdeskError
from paperdesk.resolve.blocking import (
    MAX_BUCKET,
    LshIndex,
    abstract_keys,
    candidate_pairs,
    title_keys,
)
from paperdesk.resolve.pairs import (
    GENERIC_CAP,
    TIE,
    related_kind,
    related_pairs,
    score,
    shared_titles,
    undecided,
)
from paperdesk.resolve.works import Doc, make_docs
from paperdesk.store.base import WorkRepository
from paperdesk.store.codec import restore_derived_text

TOP_CANDIDATES = 20
"""Stored candidates scored per new record: those sharing the most LSH keys with it."""


def format_id(work_id: int) -> str:
    return f"W{work_id}"


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
        "venue",
        "journal_ref",
        "extra",
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
        self.venue, self.journal_ref = g("venue"), g("journal_ref")
        extra = g("extra") or {}
        self.extra = {k: extra[k] for k in ("page", "pages") if k in extra}

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
    shared: set[str] = dataclasses.field(default_factory=set)
    """Titles that two records of one source in the batch carry (`pairs.shared_titles`)."""
    related: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)
    """(referring, referred, kind) pairs inside the batch (`pairs.related_pairs`)."""


def featurised(rows: Sequence[tuple[int, int, bytes]]) -> tuple[list[Doc], np.ndarray, np.ndarray]:
    """Docs and their title and abstract LSH keys (each record's alone)."""
    docs = make_docs([RecordLite(d) for _, _, d in rows])
    return docs, title_keys(docs), abstract_keys(docs)


def prepare(rows: Sequence[tuple[int, int, bytes]], threshold: float) -> Prepared:
    """Featurise stored rows and score their within-batch candidate pairs: everything of a
    batch that does not depend on the store, so it runs in worker processes while the
    resolving process attaches the previous batch."""
    return paired(rows, *featurised(rows), threshold)


def paired(
    rows: Sequence[tuple[int, int, bytes]],
    docs: list[Doc],
    tkeys: np.ndarray,
    akeys: np.ndarray,
    threshold: float,
) -> Prepared:
    pairs = []
    common = shared_titles(docs)
    cands = candidate_pairs([tkeys, akeys])
    for i, j in cands:
        a, b = docs[i], docs[j]
        sc = score(a, b, threshold, a.title in common or b.title in common)
        if sc >= threshold:
            pairs.append((sc, i, j))
    pairs = [p for p in undecided(docs, pairs, common) if p[0] >= threshold]
    pairs.sort(reverse=True)
    return Prepared(
        [r for r, _, _ in rows],
        [q for _, q, _ in rows],
        docs,
        tkeys,
        akeys,
        pairs,
        common,
        related_pairs(docs, sorted(cands)),
    )


@dataclass
class Run:
    """State one resolve run keeps across its batches."""

    cache: dict[int, Doc]
    """Features of indexed records, so later batches reuse them."""
    redirects: dict[int, int]
    """Merge redirects (old → new work), loaded once and kept current by the run."""
    next_id: int = 0
    """The id the next new work gets (ids are never reused, nor are merged-away ones)."""
    index: LshIndex | None = None
    """In-memory copy of the stored band keys for large runs (None: ask the store)."""
    related: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    """(referring key, referred key, kind) met against stored records, to be written."""

    def follow(self, work: int) -> int:
        for _ in range(100):
            nxt = self.redirects.get(work)
            if nxt is None:
                return work
            work = nxt
        raise PaperdeskError(f"redirect loop at work {format_id(work)}")


def content_candidates(
    works: WorkRepository,
    plans: list[tuple[list[int], list[int], dict[int, float]]],
    which: Sequence[int],
    batch: Prepared,
    run: Run,
    threshold: float,
) -> None:
    """Fill plans[n][2] (work → best score) for groups in `which`: its members' scores
    against the stored works, in member order (a work's place in the dict is where it is
    first met, which orders ties)."""
    members = np.array([i for n in which for i in plans[n][0]], dtype=np.int64)
    scores = doc_scores(
        works, batch.docs, batch.tkeys, batch.akeys, members, run, threshold, batch.shared
    )
    for n in which:
        best = plans[n][2]
        for i in plans[n][0]:
            for work, s in scores.get(i, {}).items():
                if s > best.get(work, -1.0):
                    best[work] = s


def doc_scores(
    works: WorkRepository,
    docs: Sequence[Doc],
    tkeys: np.ndarray,
    akeys: np.ndarray,
    members: np.ndarray,
    run: Run,
    threshold: float,
    shared: set[str] | None = None,
) -> dict[int, dict[int, float]]:
    """doc (of `members`) → work → the doc's best score against the work's stored records
    among its top LSH candidates, works in the order first met.

    A title that two stored works carry among a doc's candidates (or `shared`: two
    records of one source in the batch) is generic for that doc (`pairs.score`). Related
    records (an erratum of a stored paper) are added to `run.related`."""
    cache = run.cache
    if run.index is not None:
        qkeys = np.hstack([tkeys[members], akeys[members]])
        qdocs = np.repeat(members, qkeys.shape[1])
        found = run.index.top_candidates(qkeys.reshape(-1), qdocs, TOP_CANDIDATES)
        top = {i: [(r, run.follow(run.index.work_of[r])) for r in rws] for i, rws in found.items()}
    else:
        top = stored_candidates(works, members, tkeys, akeys)
    rows = sorted({r for lst in top.values() for r, _ in lst} - cache.keys())
    for rowid, blob in works.docs(rows):
        cache[rowid] = unpack_doc(blob)
    out: dict[int, dict[int, float]] = {}
    shared = shared or set()
    for i, cands in top.items():
        best: dict[int, float] = {}
        d = docs[i]
        met = [(cache[r], w) for r, w in cands if r in cache]
        generic = bool(d.title) and (
            d.title in shared or len({w for c, w in met if c.title == d.title}) >= 2
        )
        for c, work in met:
            s = score(d, c, threshold, generic)
            if s > best.get(work, -1.0):
                best[work] = s
            if d.kinds or c.kinds:
                rel = related_kind(d, c)
                if rel is not None:
                    run.related.append((d.key, c.key, rel[0]) if rel[1] else (c.key, d.key, rel[0]))
        if (generic or d.generic) and len(best) > 1:
            # Two stored works match a generic title equally well: nothing decides (`undecided`).
            high = max(best.values())
            tied = [w for w, s in best.items() if s >= threshold and high - s < TIE]
            if len(tied) > 1:
                for w in tied:
                    best[w] = min(best[w], GENERIC_CAP)
        out[i] = best
    return out


def stored_candidates(
    works: WorkRepository, members: np.ndarray, tkeys: np.ndarray, akeys: np.ndarray
) -> dict[int, list[tuple[int, int]]]:
    """doc → (rowid, work) of the stored records sharing the most LSH keys with it (at
    most TOP_CANDIDATES, most shared first), looked up in `work_lsh` (small runs: no
    index to load). A key held by more than MAX_BUCKET stored records says nothing and
    is skipped (as in the batch); a key a doc holds twice counts twice. Ties go to the
    candidate met first when the keys are taken in the order of their first stored row
    and each key's rows in stored order (rowid).

    The keys are asked in chunks through the key index, the rows sorted by rowid here
    (a temp table of the ~55k keys of a 1M store's day cost 0.25 s to fill, and as a
    join SQLite scanned all 3.2M rows), and the counting and ranking run on arrays: the
    same candidates in the same order as counting with one `Counter` a doc."""
    qk = np.hstack([tkeys[members], akeys[members]]).astype(np.int64)
    qd = np.repeat(members.astype(np.int64), qk.shape[1])
    qk = qk.reshape(-1)
    qd, qk = qd[qk != 0], qk[qk != 0]
    keys = np.unique(qk).tolist()
    rows = works.lsh_rows(keys)
    if not len(rows):
        return {}
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
            sorted(d.kinds),
            d.core,
            d.generic,
            d.venue,
            d.venue_kind,
            d.pages,
            d.lead,
            len(d.sketch),
            d.note,
        ]
    )
    return (
        len(head).to_bytes(4, "little")
        + head
        + d.title_tokens.astype(np.uint32).tobytes()
        + d.sketch.astype(np.uint32).tobytes()
        + d.abstract_shingles.astype(np.uint32).tobytes()
    )


def unpack_doc(blob: bytes) -> Doc:
    n = int.from_bytes(blob[:4], "little")
    (
        key, ids, title, head, fams, words, year, source, marks, nt,
        kinds, core, generic, venue, venue_kind, pages, lead, ns, note,
    ) = orjson.loads(blob[4 : 4 + n])
    arrays = np.frombuffer(blob[4 + n :], dtype=np.uint32)
    return Doc(
        key=key,
        ids=[(k, v) for k, v in ids],
        title=title,
        title_head=head,
        title_tokens=arrays[:nt].copy(),
        abstract_shingles=arrays[nt + ns :].copy(),
        surnames=frozenset(fams),
        name_tokens=frozenset(words),
        year=year,
        source=source,
        title_marks=frozenset(marks),
        kinds=frozenset(kinds),
        core=core,
        generic=generic,
        venue=venue,
        venue_kind=venue_kind,
        pages=pages,
        lead=lead,
        sketch=arrays[nt : nt + ns].copy(),
        note=note,
    )
