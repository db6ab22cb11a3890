"""How long `paperdesk.normalize.finish` takes per real arXiv record.

The ingest target is >= 10,000 records/s on 2 cores for parse + normalise + store, so
normalisation must stay well under 30 µs a record. This reads the first N records of the
shared daily feed (title, ~1,200-character abstract with arXiv's line breaks and LaTeX,
~5 authors), builds `SourceRecord`s the way the daily-feed parser does, and times
`finish()` alone (and its parts), best of several rounds.

    nice -n 10 .venv/bin/python bench/normalize_speed.py [--n 20000] [--rounds 3]

Prints µs/record for finish(), for plain_text() and the author step separately, and as a
yardstick for the machine's speed the stdlib `json.loads` of the same lines (CPU time of
this process, best of the rounds, so other load on the machine inflates it less).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path

from paperdesk.model import Author, SourceRecord
from paperdesk.normalize import finish
from paperdesk.normalize.names import normalize_author
from paperdesk.normalize.text import plain_text

FEED = (
    Path(__file__).resolve().parent.parent.parent
    / "shared/data/arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"
)


def load_lines(path: Path, n: int) -> list[str]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            out.append(line)
            if len(out) >= n:
                break
    return out


def load(path: Path, n: int) -> list[dict]:
    return [json.loads(line) for line in load_lines(path, n)]


def to_record(d: dict) -> SourceRecord:
    return SourceRecord(
        source="arxiv",
        source_id=d["id"],
        title=d.get("title"),
        abstract=d.get("summary"),
        authors=[Author(name=a) for a in d.get("authors") or []],
        categories=d.get("categories") or d.get("cate") or [],
        arxiv_id=d["id"],
        comments=d.get("comment"),
        feed_date=d.get("feed_date"),
    )


def best_of(rounds: int, fn: Callable[[], None]) -> float:
    times = []
    for _ in range(rounds):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--feed", type=Path, default=FEED)
    args = ap.parse_args()

    lines = load_lines(args.feed, args.n)
    rows = [json.loads(line) for line in lines]
    n = len(rows)
    n_auth = sum(len(d.get("authors") or []) for d in rows)
    abstract_chars = sum(len(d.get("summary") or "") for d in rows) / n
    print(f"{n} records, {n_auth / n:.1f} authors and {abstract_chars:.0f} abstract chars each")

    plain_text("warm up \\alpha")  # builds the macro table once, outside the timing

    def run_finish() -> None:
        for d in rows:
            finish(to_record(d))

    def run_build() -> None:
        for d in rows:
            to_record(d)

    def run_text() -> None:
        for d in rows:
            plain_text(d.get("title"))
            plain_text(d.get("summary"))

    def run_authors() -> None:
        for d in rows:
            for a in d.get("authors") or []:
                normalize_author(Author(name=a))

    def run_json() -> None:
        for line in lines:
            json.loads(line)

    reference = best_of(args.rounds, run_json)
    build = best_of(args.rounds, run_build)
    total = best_of(args.rounds, run_finish) - build
    text = best_of(args.rounds, run_text)
    authors = best_of(args.rounds, run_authors)
    print(f"finish():            {total / n * 1e6:6.2f} µs/record")
    print(f"  plain_text x2:     {text / n * 1e6:6.2f} µs/record")
    print(
        f"  authors:           {authors / n * 1e6:6.2f} µs/record "
        f"({authors / n_auth * 1e6:.2f} µs/name)"
    )
    print(f"(building SourceRecords, subtracted: {build / n * 1e6:.2f} µs/record)")
    # A yardstick for a loaded or slow machine: the stdlib JSON parse of the same lines.
    print(f"reference: json.loads of the line {reference / n * 1e6:.2f} µs/record")


if __name__ == "__main__":
    main()
