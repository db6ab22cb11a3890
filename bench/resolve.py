"""Performance of `paperdesk resolve --no-index` (works, then authors) at scale; prints
every figure.

    flock /tmp/paperdesk-timed.lock .venv/bin/python bench/resolve.py --records 1000000
    nice -n 19 .venv/bin/python bench/resolve.py --records 100000 --stages works \
        --snapshot /tmp/resolve-snap        # development: build once, reuse the store
    nice -n 19 .venv/bin/python bench/resolve.py --records 1000000 --snapshot S --keep-resolved R
    .venv/bin/python bench/resolve.py --records 1000000 --from-resolved R   # the day alone
    .venv/bin/python bench/resolve.py --records 1000000 --from-resolved R --author-full \
        [--no-author-stream]   # a full author run alone, with or without its stream workers
    nice -n 19 .venv/bin/python bench/resolve.py --from-resolved R --db D --stage-day
    .venv/bin/python bench/resolve.py --db D --run-day    # then time only the day on D
    .venv/bin/python bench/resolve.py --db D --run-day --pg URL   # the day on SQLite, then
        # on a `db copy` of D in the empty PostgreSQL store URL, side by side

Builds a store of N records: the real arXiv daily feed plus perturbed copies of its papers,
generated here with a fixed seed, shuffled together so copies often arrive before their
original:
- version: another source's record of the paper with a bumped version (`2503.11677v2`);
- published: a journal record with a DOI and the arXiv id, retitled in another case;
- doi-only: a second record of the published version carrying only the DOI;
- reworded: no identifier, abstract reworded (words dropped, swapped, replaced) and
  truncated, title punctuation/case changed, author names as initials or "Family, Given";
- title-only: a BibTeX-like entry, subtitle dropped, no abstract, no identifier;
- abstract-only: a profile-page entry, no title, no identifier.
Then it runs, in one child process, the two library functions `paperdesk resolve --no-index`
calls — `resolve_works`, then `resolve_authors` (the search index is timed by the search
benchmarks) — and prints per stage its wall time, CPU time (worker processes included) and
peak RSS, and for the whole child the same. It scores the works against the known origin of
every copy (pairwise precision/recall), then times an incremental day: 2,000 new records
(1,000 held-back feed papers + 1,000 copies of already-resolved papers), resolved as a user
does it, by `paperdesk resolve --no-index --json` in a child process: the whole process's
wall time (start-up, imports and opening the store included: the figure a user sees), CPU
time and peak RSS, beside each stage's own seconds from the command's report.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson

from paperdesk.model import Author, SourceRecord
from paperdesk.normalize import finish
from paperdesk.store import open_store

ROOT = Path(__file__).resolve().parent.parent
KINDS = [
    ("version", 0.30),
    ("published", 0.12),
    ("doi-only", 0.08),
    ("reworded", 0.30),
    ("title-only", 0.12),
    ("abstract-only", 0.08),
]
FILLER = "method approach novel results model data performance show propose framework".split()


def load_feed(data: Path) -> list[dict]:
    out: dict[str, dict] = {}
    with gzip.open(data / "arxiv" / "daily-feed-2025-03-to-2026-04.jsonl.gz", "rb") as f:
        for line in f:
            d = orjson.loads(line)
            if d.get("id") and d["id"] not in out:
                out[d["id"]] = d
    return list(out.values())


def _names(names: list[str], rng: random.Random, vary: bool) -> list[Author]:
    out = []
    for n in names:
        parts = n.split()
        if vary and len(parts) >= 2:
            r = rng.random()
            if r < 0.4:
                n = " ".join(p[0] + "." for p in parts[:-1]) + " " + parts[-1]
            elif r < 0.6:
                n = parts[-1] + ", " + " ".join(parts[:-1])
        out.append(Author(name=n))
    if vary and len(out) > 4 and rng.random() < 0.3:
        out = out[:3]  # "et al."
    return out


def _reword(text: str, rng: random.Random, truncate: bool) -> str:
    words = text.split()
    if truncate and len(words) > 40 and rng.random() < 0.5:
        words = words[: int(len(words) * rng.uniform(0.5, 0.9))]
    out = []
    i = 0
    while i < len(words):
        r = rng.random()
        if r < 0.04:
            pass  # drop
        elif r < 0.08 and i + 1 < len(words):
            out += [words[i + 1], words[i]]
            i += 1
        elif r < 0.12:
            out.append(rng.choice(FILLER))
        else:
            out.append(words[i])
        i += 1
    return " ".join(out)


def _title(t: str, rng: random.Random, shorten: bool) -> str:
    t = " ".join(t.split())
    if shorten and ":" in t:
        t = t.split(":", 1)[0]
    r = rng.random()
    if r < 0.3:
        t = t.lower()
    elif r < 0.5:
        t = t.replace(":", " -").replace(",", "")
    return t


def original(d: dict, n: int) -> SourceRecord:
    fd = d.get("feed_date") or ""
    return SourceRecord(
        source="arxiv",
        source_id=d["id"],
        raw=f"bench:{n}".encode(),
        arxiv_id=d["id"],
        url=d.get("abs"),
        title=d.get("title"),
        abstract=d.get("summary"),
        authors=_names(d.get("authors") or [], random.Random(0), False),
        feed_date=fd or None,
        year=int(fd[:4]) if fd[:4].isdigit() else None,
    )


def copy(d: dict, kind: str, n: int, idx: int, rng: random.Random) -> SourceRecord:
    fd = d.get("feed_date") or ""
    year = int(fd[:4]) if fd[:4].isdigit() else None
    r = SourceRecord(source=kind.replace("-", ""), source_id=str(n), raw=f"bench:{n}".encode())
    r.year = year
    title, abstract = d.get("title") or "", d.get("summary") or ""
    names = d.get("authors") or []
    if kind == "version":
        r.arxiv_id = f"{d['id']}v{rng.randint(2, 5)}"
        r.title, r.abstract = title, _reword(abstract, rng, False)
        r.authors = _names(names, rng, False)
    elif kind == "published":
        r.doi = f"10.5555/bench.{idx}"
        r.ids = {"arxiv": d["id"]}
        r.title, r.abstract = _title(title, rng, False), _reword(abstract, rng, False)
        r.authors = _names(names, rng, True)
        r.year = (year or 2025) + rng.randint(0, 1)
    elif kind == "doi-only":
        r.doi = f"10.5555/bench.{idx}"
        r.title = _title(title, rng, False)
        r.authors = _names(names, rng, True)
    elif kind == "reworded":
        r.title, r.abstract = _title(title, rng, False), _reword(abstract, rng, True)
        r.authors = _names(names, rng, True)
    elif kind == "title-only":
        r.title = _title(title, rng, True)
        r.authors = _names(names, rng, True)
    else:  # abstract-only
        r.abstract = _reword(abstract, rng, True)
        r.authors = _names(names, rng, True)
    return r


def plan(n_papers: int, total: int, seed: int) -> list[tuple[int, str]]:
    """(paper index, kind) for every record: each paper once as 'original', copies after."""
    rng = random.Random(seed)
    kinds = [k for k, _ in KINDS]
    weights = [w for _, w in KINDS]
    items = [(i, "original") for i in range(n_papers)]
    items += [
        (rng.randrange(n_papers), k)
        for k in rng.choices(kinds, weights, k=max(0, total - n_papers))
    ]
    rng.shuffle(items)
    return items


def build(db: Path | str, feed: list[dict], items: list[tuple[int, str]], start: int) -> dict[str, int]:
    """Write records to the store; returns record key -> paper index (the truth)."""
    truth: dict[str, int] = {}
    rng = random.Random(start)
    with open_store(db) as store:
        batch: list[SourceRecord] = []
        for n, (i, kind) in enumerate(items, start):
            d = feed[i]
            r = original(d, n) if kind == "original" else copy(d, kind, n, i, rng)
            finish(r)
            truth[r.key] = i
            batch.append(r)
            if len(batch) >= 5000:
                store.put_records(batch, origin="bench")
                batch = []
        if batch:
            store.put_records(batch, origin="bench")
    return truth


_CHILD = r"""
import os, resource, sys, time, orjson
from pathlib import Path

def peak_rss_gib():
    # VmHWM of this process (reset between stages) and the largest child so far.
    hwm = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(hwm, kids) / 2**20

def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

from paperdesk.store import open_store
from paperdesk.resolve import authors_stream
from paperdesk.resolve.works_run import resolve_works
from paperdesk.resolve.authors import resolve_authors

if "no-author-stream" in sys.argv[3:]:  # a full author run read in one process
    authors_stream.STREAM_MIN = 1 << 62
with open_store(sys.argv[1]) as store:
    for name, fn in (
        ("works", resolve_works),
        ("authors", resolve_authors),
        ("authors-full", lambda s: resolve_authors(s, full=True)),
    ):
        if name not in sys.argv[2].split(","):
            continue
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM: per-stage peak
        t0, c0 = time.perf_counter(), cpu()
        rep = fn(store)
        d = rep.to_dict() if hasattr(rep, "to_dict") else vars(rep)
        d.update(wall=time.perf_counter() - t0, cpu=cpu() - c0, peak_rss_gib=peak_rss_gib())
        print(orjson.dumps({name: d}, default=str).decode(), flush=True)
"""


def run_child(db: Path | str, stages: str, *flags: str) -> dict:
    """`resolve_works` then `resolve_authors` (what `paperdesk resolve --no-index` calls)
    in one child process: per stage its wall time, CPU time (incl. worker processes) and
    peak RSS (that stage's own high-water mark; workers' figure is the largest so far)."""
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(db), stages, *flags], stdout=subprocess.PIPE
    )
    assert proc.stdout is not None
    rep: dict = {}
    for line in proc.stdout:  # each stage's figures as soon as it ends
        rep.update(orjson.loads(line))
        show_stages(rep, list(orjson.loads(line)))
    rep["total"] = _wait_total(proc, t0, load0, "resolve")
    return rep


def run_cli(db: Path | str) -> dict:
    """`paperdesk --db DB resolve --no-index --json` as a user runs it, in a child process:
    its whole wall time from start to exit (interpreter start-up, imports, opening the
    store, both stages, closing the store), CPU time and peak RSS, and the stages' own
    seconds from its report (no per-stage CPU: the CLI does not measure it)."""
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    cmd = [sys.executable, "-m", "paperdesk", "--db", str(db), "resolve", "--no-index", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    total = _wait_total(proc, t0, load0, "paperdesk resolve")
    rep = orjson.loads(out)
    rep["total"] = total
    return rep


def _wait_total(proc: subprocess.Popen, t0: float, load0: float, what: str) -> dict:
    """Wait for a timed child; its whole wall time from `t0`, its CPU and peak RSS (its own
    children included, from wait4), and the load average when it started."""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{what} failed with status {status}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_rss_gib": usage.ru_maxrss / 2**20,
        "load_at_start": load0,
    }


def show_cli(rep: dict) -> None:
    """Print what `run_cli` measured: the whole process, then each stage and the rest."""
    t, w, a = rep["total"], rep["works"], rep["authors"]
    phases = a.get("seconds") or {}
    authors_wall = sum(phases.values())
    print(
        f"  works: {w['records']:,} records, wall {w['seconds']:.1f}s; {w['new_works']:,} new "
        f"works, {w['by_identity']:,} joined by identifier, {w['by_content']:,} by content, "
        f"{w['works_merged']:,} works merged",
        flush=True,
    )
    print(
        f"  authors: {a['signatures']:,} signatures of {a['records']:,} records, wall "
        f"{authors_wall:.1f}s; {a['profiles_total']:,} profiles; seconds by phase {phases}",
        flush=True,
    )
    print(
        f"  the rest of the process (start-up, imports, opening and closing the store, "
        f"loading the pair model): "
        f"{t['wall'] - w['seconds'] - authors_wall:.1f}s",
        flush=True,
    )


def show(rep: dict, what: str) -> None:
    """Print a run's totals (its stages were printed as they ended)."""
    t = rep["total"]
    print(
        f"{what}: wall {t['wall']:.1f}s, CPU {t['cpu']:.1f}s (process and its workers), "
        f"peak RSS {t['peak_rss_gib']:.2f} GiB, load at start {t['load_at_start']:.2f}",
        flush=True,
    )


def show_stages(rep: dict, stages: list[str]) -> None:
    """Print the figures of `stages`."""
    if "works" in stages:
        w = rep["works"]
        n = max(1, w["records"])
        print(
            f"  works: {w['records']:,} records, wall {w['wall']:.1f}s, CPU {w['cpu']:.1f}s "
            f"({1000 * w['cpu'] / n:.3f} ms/record), peak RSS {w['peak_rss_gib']:.2f} GiB; "
            f"{w['new_works']:,} new works, {w['by_identity']:,} joined by identifier, "
            f"{w['by_content']:,} by content, {w['works_merged']:,} works merged",
            flush=True,
        )
    for name in ("authors", "authors-full"):
        if name not in stages:
            continue
        a = rep[name]
        sigs = max(1, int(a.get("signatures", 0)))
        print(
            f"  {name}: {a.get('signatures', 0):,} signatures of {a.get('records', 0):,} "
            f"records, wall {a['wall']:.1f}s, CPU {a['cpu']:.1f}s "
            f"({1000 * a['cpu'] / sigs:.3f} ms/signature), peak RSS {a['peak_rss_gib']:.2f} GiB; "
            f"{a.get('profiles_total', 0):,} profiles; seconds by phase {a.get('seconds')}",
            flush=True,
        )


def score(db: Path | str, truth: dict[str, int]) -> tuple[float, float, int, int]:
    """Pairwise precision/recall of works against the known origin of every record."""
    with open_store(db) as store:
        rows = store.conn.execute("SELECT record_key, work_id FROM work_records").fetchall()
    by_work: dict[int, Counter[int]] = {}
    for k, w in rows:
        by_work.setdefault(int(w), Counter())[truth[k]] += 1
    tp = sum(c * (c - 1) // 2 for cnt in by_work.values() for c in cnt.values())
    pred = sum(s * (s - 1) // 2 for s in (sum(cnt.values()) for cnt in by_work.values()))
    per_paper = Counter(truth.values())
    true = sum(c * (c - 1) // 2 for c in per_paper.values())
    return tp / max(1, pred), tp / max(1, true), len(by_work), len(per_paper)


def _remove(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)


def _store(args: argparse.Namespace, feed: list[dict], base: list[dict]) -> dict[str, int]:
    """Build the store (or copy a snapshot of one built with the same arguments)."""
    snap = args.snapshot
    tag = f"{args.records}-{len(feed)}-{args.day}"
    if snap and Path(f"{snap}.{tag}").exists():
        t0 = time.perf_counter()
        shutil.copyfile(f"{snap}.{tag}", args.db)
        truth = orjson.loads(Path(f"{snap}.{tag}.truth").read_bytes())
        print(f"copied the built store from {snap}.{tag} in {time.perf_counter() - t0:.0f}s")
        _migrate(args.db)
        return truth
    t0 = time.perf_counter()
    items = plan(len(base), args.records, seed=1)
    print(
        f"plan: {len(items):,} records from {len(base):,} feed papers "
        f"({Counter(k for _, k in items).most_common()})"
    )
    truth = build(args.db, base, items, 0)
    with open_store(args.db) as store:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"built the store in {time.perf_counter() - t0:.0f}s")
    if snap:
        shutil.copyfile(args.db, f"{snap}.{tag}")
        Path(f"{snap}.{tag}.truth").write_bytes(orjson.dumps(truth))
    return truth


def _full(args: argparse.Namespace, truth: dict[str, int]) -> None:
    """The full resolve of the built store (and a copy of the result if asked)."""
    print(f"full resolve of {len(truth):,} records ({args.stages}):", flush=True)
    flags = ["no-author-stream"] if args.no_author_stream else []
    rep = run_child(_target(args), args.stages, *flags)
    show(rep, "  whole run")
    if "works" in rep:
        p, r, nw, npap = score(_target(args), truth)
        print(
            f"  works against the generator's truth: pairwise P {p:.4f} R {r:.4f}; "
            f"{nw:,} works for {npap:,} papers"
        )
    if args.keep_resolved:
        with open_store(args.db) as store:
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.copyfile(args.db, args.keep_resolved)
        Path(f"{args.keep_resolved}.truth").write_bytes(orjson.dumps(truth))
        print(f"kept the resolved store as {args.keep_resolved}", flush=True)


def _copy_resolved(src: Path, db: Path) -> dict[str, int]:
    """A store kept by --keep-resolved, copied to `db` (the day changes it), and its truth.
    With `db` the same file as `src` (a copy made beforehand), it is used as it is."""
    t0 = time.perf_counter()
    if src.resolve() != db.resolve():
        shutil.copyfile(src, db)
        print(f"copied the resolved store {src} in {time.perf_counter() - t0:.0f}s", flush=True)
    truth = orjson.loads(Path(f"{src}.truth").read_bytes())
    _migrate(db)
    return truth


def _target(args: argparse.Namespace) -> Path | str:
    """What is resolved: the SQLite file, or with `--pg` the PostgreSQL copy of it."""
    return str(args.pg) if args.pg else args.db


def _to_postgresql(args: argparse.Namespace) -> None:
    """`db copy` of the built (unresolved) store into the empty PostgreSQL store `--pg`,
    untimed: the resolve and the day are then timed there exactly as on SQLite (the
    server's CPU is not in the CPU figures: it is another process tree)."""
    from paperdesk.store.copy import copy_store

    t0 = time.perf_counter()
    with open_store(args.db) as src, open_store(args.pg) as dst:
        copy_store(src, dst)
    print(f"copied the built store into PostgreSQL in {time.perf_counter() - t0:.0f}s", flush=True)


def _migrate(db: Path) -> None:
    """Open a copied store once before anything is timed: a snapshot written by older code
    gets the store's pending migrations here (migration 003 rebuilds `payloads`, ~1 min per
    million records), not inside the timed resolve."""
    t0 = time.perf_counter()
    with open_store(db) as store:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    took = time.perf_counter() - t0
    if took >= 1:
        print(f"opened the copy (pending store migrations applied) in {took:.0f}s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--papers", type=int, default=0, help="feed papers used (0 = all)")
    ap.add_argument("--db", type=Path, default=Path("/tmp/paperdesk-bench-resolve.db"))
    ap.add_argument("--day", type=int, default=2000)
    ap.add_argument(
        "--stages", default="works,authors", help="works, authors or both (default: both)"
    )
    ap.add_argument(
        "--snapshot",
        type=Path,
        default=None,
        help="keep a copy of the built store under this path (plus a suffix naming the "
        "arguments) and reuse it on later runs with the same arguments",
    )
    ap.add_argument("--no-day", action="store_true", help="skip the incremental day")
    ap.add_argument(
        "--keep-resolved",
        type=Path,
        default=None,
        help="after the full resolve, keep a copy of the resolved store here (plus PATH.truth)",
    )
    ap.add_argument(
        "--from-resolved",
        type=Path,
        default=None,
        help="skip the build and the full resolve: copy this store (kept by --keep-resolved "
        "with the same --records/--papers/--day) and time only the incremental day; the same "
        "path as --db uses a copy made beforehand as it is (it needs its .truth beside it)",
    )
    ap.add_argument(
        "--pg",
        default=None,
        help="resolve (and run the day) on a copy of the built store in this empty "
        "PostgreSQL store (postgresql://…) instead of the SQLite file",
    )
    ap.add_argument(
        "--build-only", action="store_true", help="build the store (and snapshot), resolve nothing"
    )
    ap.add_argument(
        "--stage-day",
        action="store_true",
        help="with --from-resolved: copy and migrate the store, add the day's records, write "
        "DB.truth and stop, so that a later --run-day times the day alone (the copy, its "
        "migrations and the records' ingest are then outside the timed lock)",
    )
    ap.add_argument(
        "--author-full",
        action="store_true",
        help="with --from-resolved: time a full author run (`resolve_authors(full=True)`) on "
        "the copy instead of the day",
    )
    ap.add_argument(
        "--no-author-stream",
        action="store_true",
        help="a full author run reads the records in one process (no streaming workers and "
        "stage files): to see what the workers buy",
    )
    ap.add_argument(
        "--run-day",
        action="store_true",
        help="time the day on --db as --stage-day left it (no copy, nothing added); with "
        "--pg, on a copy of it and then on a `db copy` of it in that empty PostgreSQL store",
    )
    args = ap.parse_args()
    if args.pg and (args.from_resolved or args.stage_day or args.keep_resolved):
        raise SystemExit("--pg times a fresh build's resolve and day, or a staged day (--run-day)")
    if args.run_day:
        truth = orjson.loads(Path(f"{args.db}.truth").read_bytes())
        if args.pg:
            _day_side_by_side(args, truth)
        else:
            _time_day(args, truth, args.day)
        return
    in_place = args.from_resolved is not None and args.from_resolved.resolve() == args.db.resolve()
    if not in_place:
        _remove(args.db)
    feed = load_feed(args.data)
    if args.papers:
        feed = feed[: args.papers]
    held = feed[-args.day // 2 :]
    base = feed[: -args.day // 2]
    if args.from_resolved:
        truth = _copy_resolved(args.from_resolved, args.db)
        if args.author_full:
            print(f"full author run of {len(truth):,} records:", flush=True)
            flags = ["no-author-stream"] if args.no_author_stream else []
            show(run_child(args.db, "authors-full", *flags), "  whole run")
            return
    else:
        truth = _store(args, feed, base)
        if args.build_only:
            return
        if args.pg:
            if args.keep_resolved:
                raise SystemExit("--keep-resolved is for SQLite stores")
            _to_postgresql(args)
        _full(args, truth)
    if args.no_day:
        return

    # An incremental day: held-back papers + copies of papers already resolved.
    rng = random.Random(99)
    day_items = [(len(base) + i, "original") for i in range(len(held))]
    kinds = [k for k, _ in KINDS]
    weights = [w for _, w in KINDS]
    day_items += [
        (rng.randrange(len(base)), k) for k in rng.choices(kinds, weights, k=args.day - len(held))
    ]
    day_truth = build(_target(args), base + held, day_items, len(truth) + 10)
    truth.update(day_truth)
    if args.stage_day:
        with open_store(args.db) as store:
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        Path(f"{args.db}.truth").write_bytes(orjson.dumps(truth))
        print(f"staged the day's {len(day_items):,} records in {args.db} (time it: --run-day)")
        return
    _time_day(args, truth, len(day_items))


def compiled_package() -> int:
    """Compile paperdesk's modules to bytecode before a timed run, as an installation has
    them (pip compiles on install; a run writes them on first import), so the run does
    not time compiling its own source. Where PYTHONDONTWRITEBYTECODE is set (as in the
    developers' sandbox) nothing writes them, and every run compiled each module a day
    imports: ~0.15-0.3 s of a niced dev run. The number of modules compiled now."""
    import compileall
    import io
    from contextlib import redirect_stdout

    import paperdesk

    root = Path(paperdesk.__file__).parent
    before = sum(1 for _ in root.rglob("__pycache__/*.pyc"))
    with redirect_stdout(io.StringIO()):
        compileall.compile_dir(root, quiet=2)
    return sum(1 for _ in root.rglob("__pycache__/*.pyc")) - before


def _day_side_by_side(args: argparse.Namespace, truth: dict[str, int]) -> None:
    """The day staged in `--db` (`--stage-day`), timed on a copy of the SQLite file, then
    on a `db copy` of the same file in the PostgreSQL store `--pg` (copied and opened
    untimed): both start from the same resolved store and day, in one sitting."""
    work = Path(f"{args.db}.day")
    _remove(work)
    shutil.copyfile(args.db, work)
    _to_postgresql(args)  # opening the store there applied its migrations
    print("SQLite:", flush=True)
    lite = _time_day(argparse.Namespace(**{**vars(args), "db": work, "pg": None}), truth, args.day)
    print("PostgreSQL:", flush=True)
    pg = _time_day(args, truth, args.day)
    print(f"the day on PostgreSQL / on SQLite: {pg:.1f} s / {lite:.1f} s = {pg / lite:.2f}x")
    _remove(work)


def _time_day(args: argparse.Namespace, truth: dict[str, int], n_day: int) -> float:
    """Resolve the day's records already in the store, timed, and score the works; the
    whole run's wall seconds."""
    fresh = compiled_package()
    if fresh:
        print(f"(compiled {fresh} paperdesk modules to bytecode first, as an install has them)")
    if args.stages == "works,authors":  # the day as a user runs it
        print(
            f"incremental day of {n_day:,} new records "
            "(`paperdesk resolve --no-index`, one process):",
            flush=True,
        )
        rep = run_cli(_target(args))
        show_cli(rep)
        show(rep, "  whole process")
    else:
        print(f"incremental day of {n_day:,} new records:", flush=True)
        rep = run_child(_target(args), args.stages)
        show(rep, "  whole run")
    if "works" in rep:
        p, r, nw, npap = score(_target(args), truth)
        print(f"  after the day: pairwise P {p:.4f} R {r:.4f}; {nw:,} works for {npap:,} papers")
    return float(rep["total"]["wall"])


if __name__ == "__main__":
    main()
