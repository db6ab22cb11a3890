"""Parse-only throughput of the arXiv parsers: the parsing share of the ingest budget.

    nice -n 10 .venv/bin/python bench/parse_arxiv.py [--snapshot-records 200000]

The issue's target is >= 10,000 records/s for parse -> normalise -> store on 2 cores
(`bench/ingest.py` measures that end to end); this shows how much of it parsing alone
takes, per format, on real inputs:

- arxiv-feed: the shared daily feed (~102k real records, gunzipped in memory first, so
  the figure is the parser's, not zlib's);
- arxiv-snapshot: N bulk-snapshot lines generated from the real feed records with new ids
  (the generator of `bench/ingest.py`, so both benchmarks read the same shape);
- arxiv-abs: all 1,132 real `.abs` files, and the 28 real listing files;
- arxiv-oai / arxiv-atom: the real captures, repeated to get measurable times;
- arxiv-oai streaming: a child process parses one big ListRecords file (the real records
  repeated, ~400 MiB by default) and reports its peak RSS, which must stay flat.

Prints records, seconds and records/s per format, both by wall clock and per CPU-second
(the shared 2-core machine is often oversubscribed, which wall-clock figures hide), and the
process's peak RSS (dominated by the harness holding the gunzipped feed and the snapshot
generator's list of feed records, not by the streaming parsers).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from ingest import FEED, SHARED, make_snapshot  # same directory: the ingest benchmark
from paperdesk.errors import ParseError
from paperdesk.sources import arxiv_abs, arxiv_atom, arxiv_feed, arxiv_oai, arxiv_snapshot


def timed(label: str, runs: Iterable[tuple[object, bytes | Path]]) -> None:
    n = errors = 0
    t, cpu = time.perf_counter(), time.process_time()
    for parser, src in runs:
        stream = src.open("rb") if isinstance(src, Path) else io.BytesIO(src)
        with stream:
            for item in parser.parse(stream, str(label)):  # type: ignore[attr-defined]
                if isinstance(item, ParseError):
                    errors += 1
                else:
                    n += 1
    dt, dcpu = time.perf_counter() - t, time.process_time() - cpu
    print(
        f"{label:<38} {n:>9,} records {dt:7.2f} s {n / dt:>8,.0f} rec/s wall, "
        f"{n / dcpu:>8,.0f} rec/s per CPU-second  ({errors} errors)",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--snapshot-records", type=int, default=200_000)
    ap.add_argument("--oai-records", type=int, default=200_000, help="streaming-memory file")
    args = ap.parse_args()
    if not FEED.exists():
        sys.exit(f"shared daily feed not found at {FEED}")

    feed = gzip.decompress(FEED.read_bytes())
    timed("arxiv-feed (daily feed, in memory)", [(arxiv_feed, feed)])
    del feed

    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "snapshot.jsonl"
        make_snapshot(args.snapshot_records, snap)
        timed(f"arxiv-snapshot ({args.snapshot_records:,} lines, file)", [(arxiv_snapshot, snap)])

    abs_files = sorted((SHARED / "arxiv" / "abs").rglob("*.abs"))
    timed("arxiv-abs (1,132 .abs files)", [(arxiv_abs, p) for p in abs_files])
    listings = [p for p in (SHARED / "arxiv" / "listings").rglob("*") if p.is_file()]
    timed("arxiv-abs (28 listing files)", [(arxiv_abs, p) for p in listings])

    oai = [
        e["response"].encode()
        for p in sorted((SHARED / "arxiv" / "oai-pmh").glob("*listrecords*.json"))
        for e in json.loads(p.read_text())
        if e["status"] == 200
    ]
    timed("arxiv-oai (ListRecords x 2000)", [(arxiv_oai, b) for b in oai * 2000])
    atom = (SHARED / "arxiv" / "api-atom" / "q_testing_s0_m100_cfe7536492ca.json").read_text()
    body = json.loads(atom)["body"].encode("latin-1")
    timed("arxiv-atom (100-entry page x 50)", [(arxiv_atom, body)] * 50)

    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    streaming_memory(oai[0].decode(), args.oai_records)


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec from the parent (this
# harness), while VmHWM belongs to the child's own address space.
CHILD = """
import sys
from paperdesk.sources import arxiv_oai
n = sum(1 for _ in arxiv_oai.parse(open(sys.argv[1], "rb"), sys.argv[1]))
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
print(n, int(hwm) / 1024)
"""


def streaming_memory(body: str, n: int) -> None:
    """Peak RSS of a child parsing one big OAI-PMH file: flat when the parser streams."""
    records = re.findall(r"(?s)<record>.*?</record>\n", body)
    head = body[: body.index("<record>")]
    tail = body[body.rindex("</record>") + len("</record>\n") :]
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "listrecords.xml"
        with big.open("w") as out:
            out.write(head)
            for i in range(n):
                out.write(records[i % len(records)])
            out.write(tail)
        size = big.stat().st_size / 2**20
        got = subprocess.run(
            [sys.executable, "-c", CHILD, str(big)], check=True, capture_output=True, text=True
        ).stdout.split()
    print(
        f"arxiv-oai streaming: {int(got[0]):,} records from one {size:.0f} MiB file, "
        f"child peak RSS {float(got[1]):.0f} MiB"
    )


if __name__ == "__main__":
    main()
