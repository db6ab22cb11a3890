"""Readers for the labelled data search is evaluated on (SciFact, paperscape citations).

They live in the package, not in bench/, because both the benchmarks and the tests read
them and the SciFact corpus has a format that is easy to get wrong (see `_sentences`).
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def _sentences(field_text: str) -> list[str]:
    """SciFact stores an abstract as numpy printed a string array: quoted sentences
    separated by newlines, *no commas*, so `ast.literal_eval` would glue adjacent strings
    without spaces. Take each quoted string instead."""
    out = []
    for m in _QUOTED.finditer(field_text):
        s = m.group(1) if m.group(1) is not None else m.group(2)
        out.append(s.replace("\\'", "'").replace('\\"', '"').strip())
    return [s for s in out if s]


@dataclass
class SciFactDoc:
    doc_id: str
    title: str
    abstract: str


@dataclass
class SciFactClaim:
    claim_id: str
    text: str
    relevant: set[str] = field(default_factory=set)


def load_scifact(root: Path) -> tuple[list[SciFactDoc], list[SciFactClaim]]:
    """The corpus and the training claims that have evidence (claim → relevant doc ids)."""
    csv.field_size_limit(sys.maxsize)
    docs = []
    with open(root / "corpus_train.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            docs.append(
                SciFactDoc(row["doc_id"], row["title"].strip(), " ".join(_sentences(row["abstract"])))
            )
    claims: dict[str, SciFactClaim] = {}
    with open(root / "claims_train.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if not row["evidence_doc_id"]:
                continue
            c = claims.setdefault(row["id"], SciFactClaim(row["id"], row["claim"]))
            c.relevant.add(row["evidence_doc_id"])
    return docs, list(claims.values())


@dataclass
class PaperscapeEntry:
    arxiv_id: str
    categories: list[str]
    refs: list[str]
    authors: list[str]
    title: str


def iter_paperscape(path: Path) -> Iterator[PaperscapeEntry]:
    """`arxiv-id;cats;found;total;refs;authors;title` lines, comments skipped."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split(";", 6)
            if len(parts) < 7:
                continue
            aid, cats, _found, _total, refs, authors, title = parts
            yield PaperscapeEntry(
                aid,
                [c for c in cats.split(",") if c],
                [r for r in refs.split(",") if r],
                [a for a in authors.split(",") if a],
                title.strip(),
            )
