"""Ingest throughput, memory and re-ingest speed (issue 2's performance figures).

    .venv/bin/python bench/ingest.py [--snapshot-records 1000000] [--workdir /tmp/pd-bench]
                                     [--snapshot EXISTING.jsonl]

1. the shared daily feed (~102k real records, gzipped JSON lines) into a fresh database;
2. the same file again, unchanged (recognised by digest), and again with --force (every
   record parsed, then skipped by payload hash before normalisation and writing);
3. a bulk-snapshot-format stream of N records (default 1M) generated from the real feed
   records with new ids (`<yymm>.<5 digits>`), so text statistics stay real.

Each ingest runs in a child process so its peak RSS (ru_maxrss) is its own.
Prints one line per run: records, seconds, records/s, peak RSS MiB.

"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PAPERDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
FEED = SHARED / "arxiv" / "daily-feed-2025-03-to-2026-04.jsonl.gz"

CHILD = """
import resource, sys, time, json
from paperdesk.store import open_store
from paperdesk.ingest import ingest_paths
store = open_store(sys.argv[1])
t = time.perf_counter()
rep = ingest_paths(store, [sys.argv[2]], on_error="skip", force=sys.argv[3] == "1")
dt = time.perf_counter() - t
store.close()
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"records": rep.records, "inserted": rep.inserted, "unchanged": rep.unchanged,
  "rejected": rep.rejected, "skipped_files": rep.files_skipped, "seconds": dt,
  "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
  "cpu_main_s": me.ru_utime + me.ru_stime,
  "rss_mib": me.ru_maxrss / 1024, "workers_rss_mib": kids.ru_maxrss / 1024}))
"""


def run(db: Path, path: Path, force: bool = False) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), str(path), "1" if force else "0"],
        capture_output=True, text=True,
    )
    if out.returncode != 0:  # e.g. the disk filled up: say why, not just the exit status
        sys.exit(f"ingest of {path} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def show(label: str, r: dict, records: int | None = None) -> None:
    n = records if records is not None else r["records"]
    rate = n / r["seconds"] if r["seconds"] else float("inf")
    print(
        f"{label:<40} {n:>9,} records {r['seconds']:8.2f} s {rate:>9,.0f} rec/s "
        f"({n / r['cpu_s']:,.0f} per CPU-s; CPU {r['cpu_main_s']:.1f} s main + "
        f"{r['cpu_s'] - r['cpu_main_s']:.1f} s workers) peak RSS {r['rss_mib']:6.1f} MiB main, "
        f"{r['workers_rss_mib']:6.1f} MiB largest worker (inserted {r['inserted']:,}, "
        f"unchanged {r['unchanged']:,}, rejected {r['rejected']:,})",
        flush=True,
    )


def make_snapshot(n: int, out: Path) -> None:
    """Bulk-snapshot JSON lines from the real feed, with new ids, cycling the records."""
    with gzip.open(FEED, "rt") as f:
        feed = [json.loads(line) for line in f]
    with open(out, "w") as w:
        for i in range(n):
            src = feed[i % len(feed)]
            month = 1 + (i // 99_999) % 12
            year = 30 + (i // (99_999 * 12))
            new_id = f"{year:02d}{month:02d}.{i % 99_999 + 1:05d}"
            authors = src.get("authors") or []
            w.write(json.dumps({
                "id": new_id,
                "submitter": authors[0] if authors else None,
                "authors": ", ".join(authors),
                "authors_parsed": [[a.rsplit(" ", 1)[-1], a.rsplit(" ", 1)[0] if " " in a else "", ""]
                                   for a in authors],
                "title": src.get("title"),
                "comments": src.get("comment"),
                "journal-ref": None,
                "doi": None,
                "categories": " ".join(src.get("categories") or src.get("cate") or []),
                "license": None,
                "abstract": src.get("summary"),
                "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
                "update_date": src.get("feed_date"),
            }) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--snapshot-records", type=int, default=1_000_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/paperdesk-bench-ingest"))
    ap.add_argument(
        "--snapshot", type=Path, default=None,
        help="ingest this existing bulk-snapshot stream (e.g. an earlier run's snapshot.jsonl)"
        " instead of generating one: runs compared side by side then read the same bytes",
    )
    args = ap.parse_args()
    if not FEED.exists():
        sys.exit(f"shared daily feed not found at {FEED}")
    if args.snapshot is not None and args.snapshot.resolve().is_relative_to(args.workdir.resolve()):
        sys.exit("--snapshot must lie outside --workdir (the workdir is emptied first)")
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; "
          f"load average {os.getloadavg()[0]:.1f} at start")

    db = args.workdir / "feed.db"
    first = run(db, FEED)
    show("daily feed, first ingest", first)
    again = run(db, FEED)
    show("daily feed, unchanged file again", again, first["records"])
    forced = run(db, FEED, force=True)
    show("daily feed, --force (per-record skip)", forced)
    print(f"re-ingest speed-up: unchanged file {first['seconds'] / again['seconds']:.0f}x, "
          f"forced re-read {first['seconds'] / forced['seconds']:.1f}x")
    print(f"database size: {db.stat().st_size / 2**20:.0f} MiB")

    if args.snapshot is not None:
        snap = args.snapshot
        print(f"snapshot stream {snap} ({snap.stat().st_size / 2**20:.0f} MiB)")
    elif args.snapshot_records:
        snap = args.workdir / "snapshot.jsonl"
        t = time.perf_counter()
        make_snapshot(args.snapshot_records, snap)
        print(f"generated {args.snapshot_records:,} snapshot records "
              f"({snap.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t:.0f} s")
    if args.snapshot is not None or args.snapshot_records:
        big = run(args.workdir / "snap.db", snap)
        show("bulk snapshot stream, first ingest", big)
        print(f"database size: {(args.workdir / 'snap.db').stat().st_size / 2**20:.0f} MiB")
    print(f"bench harness peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
