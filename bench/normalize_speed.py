"""How long `paperdesk.normalize.finish` takes per real arXiv record.

The ingest target is >= 10,000 records/s on 2 cores for parse + normalise + store, so
normalisation must stay well under 30 µs a record. This reads the first N records of the
shared daily feed (title, ~1,200-character abstract with arXiv's line breaks and LaTeX,
~5 authors), builds `SourceRecord`s the way the daily-feed parser does, and times
`finish()` alone (and its parts), best of several rounds.

    nice -n 10 .venv/bin/python bench/normalize_speed.py [--n 20000] [--rounds 5] [--chunk 500]

Also times, on a sample, nameparser's HumanName and pylatexenc's full latex_to_text (why
neither runs per record). Prints µs/record for finish(), for plain_text() and the author step separately, and as a
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
from typing import TypeVar

from paperdesk.model import Author, SourceRecord
from paperdesk.normalize import finish
from paperdesk.normalize.names import clear_name_cache, normalize_author, parse_name_uncached
from paperdesk.normalize.text import plain_text

T = TypeVar("T")
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


def _yardstick() -> None:
    for _ in range(10):
        sum(range(1000))


def best_of(rounds: int, chunks: list[list[T]], fn: Callable[[list[T]], None]) -> float:
    """CPU seconds for `fn` over all chunks: each chunk's best round, summed.

    The machine is shared; a best-of per short chunk filters out the moments another
    process held the core, which a best-of over the whole run cannot. The name cache is
    emptied at the start of every round, so each round is a first pass over the data.
    Also keeps, in `YARDSTICK`, the best time of ten `sum(range(1000))` taken right before
    each chunk, so the two are measured under the same load.
    """
    best = [float("inf")] * len(chunks)
    yard = [float("inf")] * len(chunks)
    for _ in range(rounds):
        clear_name_cache()
        for i, chunk in enumerate(chunks):
            t = time.process_time()
            _yardstick()
            t2 = time.process_time()
            fn(chunk)
            t3 = time.process_time()
            yard[i] = min(yard[i], t2 - t)
            best[i] = min(best[i], t3 - t2)
    YARDSTICK.append(sum(yard) / (10 * len(chunks)))
    return sum(best)


YARDSTICK: list[float] = []


def chunked(items: list[T], size: int) -> list[list[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=500, help="records per timed chunk")
    ap.add_argument("--no-compare", action="store_true", help="skip nameparser/pylatexenc")
    ap.add_argument("--feed", type=Path, default=FEED)
    args = ap.parse_args()

    lines = load_lines(args.feed, args.n)
    rows = [json.loads(line) for line in lines]
    n = len(rows)
    n_auth = sum(len(d.get("authors") or []) for d in rows)
    abstract_chars = sum(len(d.get("summary") or "") for d in rows) / n
    print(f"{n} records, {n_auth / n:.1f} authors and {abstract_chars:.0f} abstract chars each")

    plain_text("warm up \\alpha")  # builds the macro table once, outside the timing

    def run_finish(chunk: list[dict]) -> None:
        for d in chunk:
            finish(to_record(d))

    def run_build(chunk: list[dict]) -> None:
        for d in chunk:
            to_record(d)

    def run_text(chunk: list[dict]) -> None:
        for d in chunk:
            plain_text(d.get("title"))
            plain_text(d.get("summary"))

    def run_authors(chunk: list[dict]) -> None:
        for d in chunk:
            for a in d.get("authors") or []:
                normalize_author(Author(name=a))

    def run_json(chunk: list[str]) -> None:
        for line in chunk:
            json.loads(line)

    row_chunks = chunked(rows, args.chunk)
    reference = best_of(args.rounds, chunked(lines, args.chunk), run_json)
    build = best_of(args.rounds, row_chunks, run_build)
    total = best_of(args.rounds, row_chunks, run_finish) - build
    text = best_of(args.rounds, row_chunks, run_text)
    authors = best_of(args.rounds, row_chunks, run_authors)
    print(f"finish():            {total / n * 1e6:6.2f} µs/record")
    print(f"  plain_text x2:     {text / n * 1e6:6.2f} µs/record")
    print(
        f"  authors:           {authors / n * 1e6:6.2f} µs/record "
        f"({authors / n_auth * 1e6:.2f} µs/name)"
    )
    print(f"(building SourceRecords, subtracted: {build / n * 1e6:.2f} µs/record)")
    # Yardsticks for a loaded or slow machine: the stdlib JSON parse of the same lines, and
    # pure bytecode speed: `sum(range(1000))` takes ~10 µs on an idle 3 GHz core with
    # CPython 3.11, so finish() scaled by 10/yardstick estimates an idle core.
    print(f"reference: json.loads of the line {reference / n * 1e6:.2f} µs/record")
    yardstick = YARDSTICK[2]  # the one taken beside the finish() chunks
    print(f"reference: sum(range(1000)) {yardstick * 1e6:.1f} µs (beside the finish() chunks)")
    scaled = total / n * 1e6 * 10 / (yardstick * 1e6)
    print(f"finish() scaled to an idle core: {scaled:.1f} µs/record")

    if not args.no_compare:
        compare_libraries(rows)


def compare_libraries(rows: list[dict]) -> None:
    """The libraries' own full parsers on a sample, to show why they are not the hot path."""
    from nameparser import HumanName
    from pylatexenc.latex2text import LatexNodes2Text

    names = [a for d in rows[:400] for a in d.get("authors") or []][:2000]
    t = time.process_time()
    for a in names:
        HumanName(a)
    human = (time.process_time() - t) / len(names)
    t = time.process_time()
    for a in names:
        parse_name_uncached(a)  # uncached, like a first sighting
    ours = (time.process_time() - t) / len(names)
    print(f"names: nameparser.HumanName {human * 1e6:.1f} µs/name, parse_name {ours * 1e6:.2f}")

    latex = [d["summary"] for d in rows if "\\" in (d.get("summary") or "")][:100]
    l2t = LatexNodes2Text()
    crashed = 0
    t = time.process_time()
    for text in latex:
        try:
            l2t.latex_to_text(text)
        except Exception:  # it raises on some real abstracts (an \href it cannot split)
            crashed += 1
    full = (time.process_time() - t) / len(latex)
    t = time.process_time()
    for text in latex:
        plain_text(text)
    fast = (time.process_time() - t) / len(latex)
    print(
        f"LaTeX abstracts: pylatexenc latex_to_text {full * 1e6:.0f} µs each, "
        f"plain_text {fast * 1e6:.1f} (pylatexenc raised on {crashed} of {len(latex)})"
    )


if __name__ == "__main__":
    main()
