"""The candidates of a date range as the model sees them, from features kept in the store.

Each record's recommender features — its hashed term counts (`desk/features.py`), its
authors' folded names, its subject codes and how good a lead record it makes — are
computed the first time the record is ranked and stored in `desk_features` with the
record's `seq` and the code's `FORMAT`. A later call reads them back (one indexed range
query); a record changed since (new `seq`) or rows of an older format are computed again
and replaced. Nothing depends on how records are grouped into works: that comes from
`work_records` on every call, so a works run invalidates nothing.

Why stored rather than cached in the process: the CLI is a new process every time, and
the web's workers are several; the store is what they share. A reader (read-only view)
computes what is missing and uses it without storing it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from paperdesk.desk import features as F
from paperdesk.desk.model import Doc, fold_name
from paperdesk.errors import StoreError
from paperdesk.model import SourceRecord
from paperdesk.store.base import Store
from paperdesk.store.codec import decode_record
from paperdesk.store.desk_base import FeatureRow

_CODE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")
_BATCH = 2000


def lead_rank(rec: SourceRecord) -> int:
    """Orders a work's records for choosing the one whose text stands for it: an arXiv
    record first, then the longest abstract, then a DOI record."""
    return ((rec.source == "arxiv") << 40) | (min(len(rec.abstract or ""), 1 << 30) << 1) | (rec.source == "doi")


def subjects_of(rec: SourceRecord) -> list[str]:
    return [c for c in dict.fromkeys(rec.categories) if _CODE.match(c)]


def text_of(rec: SourceRecord) -> str:
    return Doc(ref="", title=rec.title_text or rec.title or "", abstract=rec.abstract_text or rec.abstract or "").text


def compute(recs: list[tuple[str, int, SourceRecord]]) -> list[tuple[str, int, int, bytes, str]]:
    """Stored rows (key, seq, format, terms, meta) of records."""
    terms = F.term_counts([text_of(r) for _, _, r in recs])
    out = []
    for i, (key, seq, r) in enumerate(recs):
        meta = orjson.dumps([lead_rank(r), [fold_name(a.display or a.name) for a in r.authors], subjects_of(r)])
        out.append((key, seq, F.FORMAT, F.pack(*terms.row(i)), meta.decode()))
    return out


def fill(store: Store, rows: list[FeatureRow]) -> int:
    """Compute and store the features `rows` lack; the number computed."""
    missing = [r for r in rows if r.terms is None]
    for i in range(0, len(missing), _BATCH):
        part = missing[i : i + _BATCH]
        data = store.desk.record_data([r.key for r in part])
        made = compute([(r.key, r.seq, decode_record(data[r.key])) for r in part if r.key in data])
        by_key = {m[0]: m for m in made}
        for r in part:
            m = by_key.get(r.key)
            if m is not None:
                r.terms, r.meta = m[3], m[4]
        if not store.readonly:
            try:
                with store.transaction():
                    store.desk.put_features(made)
            except StoreError:  # a read-only backend view: use them unstored
                pass
    return len(missing)


@dataclass
class Candidates:
    """One document per work of the range (the lead record's terms and authors, the
    subjects of all its records in the range, its first day there)."""

    docs: list[Doc] = field(default_factory=list)
    terms: F.Terms = field(default_factory=lambda: F.Terms.stack([]))
    keys: dict[str, list[str]] = field(default_factory=dict)
    """Each work's record keys in the range."""
    computed: int = 0
    """Records whose features this call computed (0 when all were stored)."""


def group(rows: list[FeatureRow], subject: str | None = None) -> Candidates:
    """Works from records with their features (rows in appearance order)."""
    by_work: dict[str, list[tuple[FeatureRow, list[Any]]]] = {}
    for r in rows:
        if r.terms is None or r.meta is None:
            continue
        ref = f"W{r.work_id}" if r.work_id is not None else r.key
        by_work.setdefault(ref, []).append((r, orjson.loads(r.meta)))
    out = Candidates(computed=0)
    lead_terms = []
    for ref, members in by_work.items():
        subjects: list[str] = []
        for _, (_, _, subs) in members:
            subjects += [s for s in subs if s not in subjects]
        if subject and not any(s == subject or s.startswith(subject + ".") for s in subjects):
            continue
        lead, (_, authors, _) = max(members, key=lambda m: m[1][0])
        assert lead.terms is not None
        out.docs.append(Doc(ref=ref, authors=authors, subjects=subjects, date=members[0][0].appeared))
        lead_terms.append(F.unpack(lead.terms))
        out.keys[ref] = [m.key for m, _ in members]
    out.terms = F.Terms.stack(lead_terms)
    return out


def candidates(store: Store, since: str, until: str, subject: str | None = None) -> Candidates:
    """The works that appeared on days `since`..`until`, featurised."""
    rows = store.desk.feature_rows(since, until, F.FORMAT)
    n = fill(store, rows)
    out = group(rows, subject)
    out.computed = n
    return out
