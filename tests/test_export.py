"""Citation exports read back by real parsers, on real records and hostile text."""

from __future__ import annotations

import gzip
import json

import bibtexparser

from conftest import shared_file
from paperdesk.export import cite_key, to_bibtex, to_csl, to_ris


def feed_work(n: int = 0) -> dict:
    with gzip.open(shared_file("arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"), "rt") as f:
        for i, line in enumerate(f):
            if i == n:
                d = json.loads(line)
                return {
                    "id": "W1", "title": d["title"], "year": int(d["feed_date"][:4]),
                    "authors": [{"name": a} for a in d["authors"]], "arxiv_id": d["id"],
                    "url": d["abs"], "abstract": d["summary"], "categories": d["categories"],
                }
    raise AssertionError


def test_bibtex_round_trips_real_records() -> None:
    for n in (0, 1, 17, 123):
        work = feed_work(n)
        lib = bibtexparser.parse_string(to_bibtex(work))
        assert not lib.failed_blocks
        (entry,) = lib.entries
        assert entry.key == cite_key(work)
        assert entry["eprint"] == work["arxiv_id"]
        assert entry["author"].count(" and ") == len(work["authors"]) - 1
        assert " ".join(work["title"].split()) in entry["title"]


def test_bibtex_survives_hostile_text() -> None:
    work = {"title": "Unbalanced } brace { and 100% & # signs @misc{x,", "year": 2024,
            "authors": [{"name": "O'Brien {Jr"}], "doi": "10.1/x"}
    lib = bibtexparser.parse_string(to_bibtex(work))
    assert not lib.failed_blocks and len(lib.entries) == 1


def test_ris_and_csl() -> None:
    work = feed_work(1)
    ris = to_ris(work)
    assert ris.startswith("TY  - GEN\n") and ris.rstrip().endswith("ER  -")
    assert sum(line.startswith("AU  - ") for line in ris.splitlines()) == len(work["authors"])
    csl = to_csl(work)
    assert csl["title"] == " ".join(work["title"].split())
    assert csl["issued"]["date-parts"][0][0] == work["year"]
    assert json.loads(json.dumps(csl)) == csl
