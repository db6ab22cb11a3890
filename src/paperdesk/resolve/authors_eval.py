"""B³ scores and the two naive baselines that author disambiguation must beat.

Kept in the package (not only in bench/) so tests can check them on hand-made examples
and the benchmark reports figures from the same code.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from paperdesk.model import Author, SourceRecord
from paperdesk.normalize import finish
from paperdesk.normalize.names import normalize_author
from paperdesk.resolve.authors_names import fold


@dataclass
class B3:
    precision: float
    recall: float
    f1: float
    n: int

    def row(self) -> str:
        return f"P={self.precision:.4f} R={self.recall:.4f} F1={self.f1:.4f} (n={self.n})"


def b3(
    truth: Mapping[str, Hashable],
    predicted: Mapping[str, Hashable],
    subset: Sequence[str] | None = None,
) -> B3:
    """B-cubed precision/recall/F1 over the items of `subset` (default: all of `truth`).

    Both clusterings are restricted to the subset first, so a hard-subset score is not
    helped or hurt by items outside it."""
    items = list(truth) if subset is None else list(subset)
    if not items:
        return B3(0.0, 0.0, 0.0, 0)
    t_members: dict[Hashable, set[str]] = defaultdict(set)
    p_members: dict[Hashable, set[str]] = defaultdict(set)
    for x in items:
        t_members[truth[x]].add(x)
        p_members[predicted[x]].add(x)
    p_sum = r_sum = 0.0
    for x in items:
        t, p = t_members[truth[x]], p_members[predicted[x]]
        both = len(t & p)
        p_sum += both / len(p)
        r_sum += both / len(t)
    prec, rec = p_sum / len(items), r_sum / len(items)
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return B3(prec, rec, f1, len(items))


def exact_name_baseline(names: Mapping[str, str]) -> dict[str, str]:
    """One profile per exact name string (case and accents folded, spacing collapsed)."""
    return {sid: " ".join(fold(n).split()) for sid, n in names.items()}


def key_baseline(names: Mapping[str, str]) -> dict[str, str]:
    """One profile per blocking key: folded surname + first initial."""
    out: dict[str, str] = {}
    for sid, n in names.items():
        out[sid] = normalize_author(Author(name=n)).key or fold(n)
    return out


@dataclass
class LabelledSet:
    """OpenReview records with the ground truth of their signatures."""

    records: list[SourceRecord]
    truth: dict[str, str | None]
    """Profile id by signature id (`openreview:PAPER#POS`); None where unlabelled."""
    names: dict[str, str]
    """The name exactly as the dataset writes it, by signature id."""


def load_openreview(shared: Path, paper_ids: Collection[str] | None = None) -> LabelledSet:
    """`openreview/papers.jsonl` + `signatures.jsonl` as `SourceRecord`s (one per paper,
    authors with their affiliations, `+`-separated in the data), optionally only some
    papers. The raw payload is the paper's JSON line, so records can go into a store."""
    papers: dict[str, bytes] = {}
    for line in (shared / "openreview" / "papers.jsonl").open("rb"):
        p = orjson.loads(line)
        if paper_ids is None or p["paper_id"] in paper_ids:
            papers[p["paper_id"]] = line.strip()
    by_paper: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (shared / "openreview" / "signatures.jsonl").open("rb"):
        s = orjson.loads(line)
        if s["paper_id"] in papers:
            by_paper[s["paper_id"]].append(s)
    out = LabelledSet([], {}, {})
    for pid, sigs in by_paper.items():
        p = orjson.loads(papers[pid])
        sigs.sort(key=lambda s: s["position"])
        year = re.search(r"(\d{4})", p.get("venue") or "")
        kw = p.get("keywords") or ""
        rec = SourceRecord(
            source="openreview",
            source_id=pid,
            raw=papers[pid],
            raw_format="openreview-paperlist",
            url=p.get("site"),
            title=p.get("title"),
            abstract=p.get("abstract"),
            venue=p.get("venue"),
            year=int(year.group(1)) if year else None,
            keywords=[k for k in (kw if isinstance(kw, list) else kw.split(";")) if k],
            authors=[
                Author(
                    name=s["name"],
                    affiliations=[a for a in (s.get("affiliation") or "").split("+") if a],
                )
                for s in sigs
            ],
        )
        finish(rec)
        out.records.append(rec)
        for pos, s in enumerate(sigs):
            out.truth[f"{rec.key}#{pos}"] = s["cluster"]
            out.names[f"{rec.key}#{pos}"] = s["name"]
    return out
