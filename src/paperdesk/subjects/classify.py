"""The classify stage: subjects per record, given by the source or predicted, and per work.

`classify(store, predict)` walks the records changed since its last run (the store's
`seq`): a record whose category list holds arXiv subjects gets those (canonical, primary
first; ACM/MSC codes go to the record's codes); a record without any gets the model's
prediction, marked predicted with its probabilities. Source-given subjects always win: a
work shows predicted subjects only when none of its records has given ones.

Without a model (`predict=None`, e.g. before `paperdesk subjects train` has run) the given
subjects are still recorded; records that need a prediction stay *pending* (no state row)
and are picked up by the next run that has a model.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from paperdesk.errors import NotFoundError
from paperdesk.model import SourceRecord
from paperdesk.resolve.works_curate import follow, format_id, parse_id
from paperdesk.store.base import Store, now
from paperdesk.subjects.context import RECENT_DAYS, RECENT_KEY, SECONDARY_WEIGHT, context_keys
from paperdesk.subjects.taxonomy import Taxonomy, load, split_categories

CHECKPOINT = "subjects.classify.seq"
FORMAT = 2
"""The format of the subjects tables this code writes: a store holding another is
re-classified whole by its next run, not migrated. 2: context keys (`record_context`)."""
_BATCH = 1000

Predictor = Callable[
    [Sequence[tuple[str | None, str | None]], Sequence[Mapping[str, Mapping[str, float]]]],
    list[list[dict[str, Any]]],
]
"""(title, abstract) pairs and each paper's context (each of its context keys — authors,
venue — that has a history → subject → weight of the given subjects of the records holding
it) → for each, ranked dicts with `subject`, `probability`, `primary_probability` (primary
first). Kept abstract so this stage does not import numpy."""
DEFER = 20_000
"""Records to predict are held until the given subjects of the run so far are written (so
that their authors' histories count, whatever order the records came in), at most this
many at a time."""


@dataclass
class ClassifyReport:
    records: int = 0
    given: int = 0
    predicted: int = 0
    no_text: int = 0
    """Records with neither subjects nor a title/abstract: left without subjects."""
    pending: int = 0
    """Records that need a prediction but there was no model: classified on a later run."""
    seconds: float = 0.0
    last_seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def classify(
    store: Store,
    predict: Predictor | None,
    *,
    model_id: str,
    full: bool = False,
    tax: Taxonomy | None = None,
) -> ClassifyReport:
    """Give subjects to every record changed since the last run (all records with `full`)."""
    tax = tax or load()
    t0 = time.perf_counter()
    report = ClassifyReport()
    full = full or store.derived_format("subjects") != FORMAT
    after = 0 if full else int(store.get_checkpoint(CHECKPOINT) or 0)
    batch: list[tuple[int, SourceRecord]] = []
    deferred: list[SourceRecord] = []
    todo = store.iter_changed(after)
    if predict is not None and after:
        todo = itertools.chain(store.subjects.pending(after), todo)
    for item in todo:
        batch.append(item)
        if len(batch) >= _BATCH:
            deferred += _classify_batch(store, batch, predict, tax, report)
            batch = []
            if len(deferred) >= DEFER and predict is not None:
                _predict(store, deferred, predict, model_id, report)
                deferred = []
    if batch:
        deferred += _classify_batch(store, batch, predict, tax, report)
    if deferred and predict is not None:
        _predict(store, deferred, predict, model_id, report)
    if report.last_seq > after:  # pending records picked up may be older than the checkpoint
        store.set_checkpoint(CHECKPOINT, report.last_seq)
    if full:
        store.set_derived_format("subjects", FORMAT)
    report.seconds = round(time.perf_counter() - t0, 2)
    return report


def _classify_batch(
    store: Store,
    batch: list[tuple[int, SourceRecord]],
    predict: Predictor | None,
    tax: Taxonomy,
    report: ClassifyReport,
) -> list[SourceRecord]:
    """Write the batch's given subjects (with their context keys); the records that need
    a prediction are returned (or counted pending without a model)."""
    subject_rows: list[tuple[Any, ...]] = []
    code_rows: list[tuple[Any, ...]] = []
    state_rows: list[tuple[Any, ...]] = []
    context_rows: list[tuple[str, str]] = []
    to_predict: list[SourceRecord] = []
    stamp = now()
    for _seq, rec in batch:
        split = split_categories(rec.categories, tax)
        code_rows += [(rec.key, i, c.scheme, c.code) for i, c in enumerate(split.codes)]
        if split.subjects:
            subject_rows += [(rec.key, i, s, 0, None, None) for i, s in enumerate(split.subjects)]
            state_rows.append((rec.key, None, stamp))
            context_rows += [(rec.key, k) for k in _context(rec)]
            report.given += 1
        elif (rec.title or "").strip() or (rec.abstract or "").strip():
            to_predict.append(rec)
        else:
            state_rows.append((rec.key, None, stamp))
            report.no_text += 1
    if to_predict and predict is None:
        report.pending += len(to_predict)
    with store.transaction():
        store.subjects.replace(
            [rec.key for _, rec in batch], subject_rows, code_rows, state_rows, context_rows
        )
    report.records += len(batch)
    report.last_seq = max(report.last_seq, max(seq for seq, _ in batch))
    return to_predict if predict is not None else []


def _context(rec: SourceRecord) -> list[str]:
    return context_keys([a.name for a in rec.authors], rec.venue, rec.comments)


def _predict(
    store: Store,
    records: list[SourceRecord],
    predict: Predictor,
    model_id: str,
    report: ClassifyReport,
) -> None:
    """Predict and write the subjects of `records`, each with its context: the given
    subjects of the records sharing each of its authors and its venue, and the store's
    recent mix of given primaries."""
    recent = store.subjects.recent_primaries(RECENT_DAYS)
    for start in range(0, len(records), _BATCH):
        part = records[start : start + _BATCH]
        keys = [_context(r) for r in part]
        counts = store.subjects.context_counts([k for ks in keys for k in ks], SECONDARY_WEIGHT)
        contexts = [{k: counts[k] for k in ks if k in counts} for ks in keys]
        if recent:
            for c in contexts:
                c[RECENT_KEY] = recent
        preds = predict([(r.title, r.abstract) for r in part], contexts)
        stamp = now()
        subject_rows: list[tuple[Any, ...]] = []
        state_rows: list[tuple[Any, ...]] = []
        for rec, ranked in zip(part, preds, strict=True):
            subject_rows += [
                (rec.key, i, p["subject"], 1, p["probability"], p["primary_probability"])
                for i, p in enumerate(ranked)
            ]
            state_rows.append((rec.key, model_id, stamp))
            report.predicted += 1
        with store.transaction():
            store.subjects.put_predicted([r.key for r in part], subject_rows, state_rows)


# -- reading -----------------------------------------------------------------------------


def merge_subjects(per_record: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A work's subjects from its records' (records in display order).

    Given subjects win: if any record has them, the work's subjects are the union of the
    given ones (primaries first). Otherwise the work takes the prediction of its record
    with the most confident predicted primary."""
    given = [subs for subs in per_record if subs and not subs[0]["predicted"]]
    if given:
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        ordered = [s[0] for s in given] + [e for s in given for e in s[1:]]
        for e in ordered:
            if e["subject"] not in seen:
                seen.add(e["subject"])
                out.append(e)
        return out
    predicted = [subs for subs in per_record if subs]
    if not predicted:
        return []
    return max(predicted, key=lambda s: s[0].get("primary_probability") or 0.0)


def _work_keys(store: Store, work: str | int) -> tuple[str, list[str]]:
    wid = follow(store.works, parse_id(work))
    keys = store.works.members_in_record_order(wid)
    if not keys:
        raise NotFoundError(f"no work {format_id(parse_id(work))}")
    return format_id(wid), keys


def work_subjects(store: Store, work: str | int, tax: Taxonomy | None = None) -> dict[str, Any]:
    """`subjects WORK_ID --json`: the work's subjects (given or predicted, never mixed), and
    each record's own subjects and classification codes."""
    tax = tax or load()
    wid, keys = _work_keys(store, work)
    per = store.subjects.of_records(keys)
    records = [
        {
            "key": k,
            "subjects": [_named(e, tax) for e in per.get(k, [])],
            "codes": store.subjects.codes_of(k),
        }
        for k in keys
    ]
    merged = merge_subjects([per.get(k, []) for k in keys])
    return {
        "work_id": wid,
        "subjects": [_named(e, tax) for e in merged],
        "predicted": bool(merged) and merged[0]["predicted"],
        "classified": all(k in per for k in keys)
        or store.subjects.count_classified(keys) == len(keys),
        "records": records,
    }


def _named(e: dict[str, Any], tax: Taxonomy) -> dict[str, Any]:
    cat = tax.categories.get(e["subject"])
    return {**e, "name": cat.name if cat else None}


def subject_counts(store: Store) -> dict[str, Counter[str]]:
    """Works per subject, split by kind: `{"given": Counter, "predicted": Counter}`. A record
    not yet in a work (resolve not run) counts as its own work."""
    work_of: dict[str, Any] = dict(store.works.assignment())
    per_work: dict[Any, list[list[dict[str, Any]]]] = defaultdict(list)
    current: list[dict[str, Any]] = []
    last: str | None = None

    def flush() -> None:
        if last is not None:
            per_work[work_of.get(last, last)].append(current)

    for key, entry in store.subjects.all_rows():
        if key != last:
            flush()
            last, current = key, []
        current.append(entry)
    flush()
    counts: dict[str, Counter[str]] = {"given": Counter(), "predicted": Counter()}
    for recs in per_work.values():
        for e in merge_subjects(recs):
            counts["predicted" if e["predicted"] else "given"][e["subject"]] += 1
    return counts
