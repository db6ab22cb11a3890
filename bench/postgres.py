"""PostgreSQL beside SQLite, in one run (issue 17's performance figures).

    flock /tmp/paperdesk-heavy.lock .venv/bin/python bench/postgres.py \\
        [--workdir /tmp/pd-pg-bench] [--url postgresql://…] [--requests 200] [--seconds 15]

Without `--url` it starts a PostgreSQL 15 cluster of its own in the workdir
(scripts/pg-cluster.sh with fsync on and `synchronous_commit=off`: like SQLite's
`synchronous=NORMAL` in WAL mode, a crash keeps a consistent store and may lose the last
commits) and stops it at the end. For each backend, in this order:

1. ingest of the shared daily feed (~102k records) into an empty store, less its last
   feed day — wall seconds, records/s, CPU-seconds of paperdesk (and of the server);
2. the works stage (`resolve_works`) over those records;
3. the last feed day (~2,000 records): ingest + the incremental works stage;
4. page latency: `serve --workers 4`, each of the daily, paper and subject pages
   requested N times over HTTP from one client (the app's own `Server-Timing`: request
   in to response start), page cache off; p50 / p95 ms;
5. load: the daily page from 8 connections for S seconds while an ingest of another
   file (the feed's records again under new ids) runs: req/s and errors, with the page
   cache off and then on (as served by default; every commit of the ingest invalidates).

Everything stays on 127.0.0.1. Prints one line per figure; `uptime` before and after.
Status: steps 1-3 on both backends and 4-5 on SQLite ran in a smoke run (3,548 records);
no full run yet, and steps 4-5 have not run on PostgreSQL (docs/postgresql.md).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PAPERDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
FEED = Path(os.environ.get(
    "PAPERDESK_BENCH_FEED", SHARED / "arxiv" / "daily-feed-2025-03-to-2026-04.jsonl.gz"))
PY = sys.executable
sys.path.insert(0, str(ROOT / "bench"))
from web import LOAD, pct  # noqa: E402  (bench/web.py: the same load client and percentile)

CHILD = """
import json, resource, sys, time
from paperdesk.store import open_store
store = open_store(sys.argv[1])
t = time.perf_counter()
if sys.argv[2] == "ingest":
    from paperdesk.ingest import ingest_paths
    rep = ingest_paths(store, [sys.argv[3]], on_error="skip")
    n = rep.inserted
else:
    from paperdesk.resolve.works_run import resolve_works
    n = resolve_works(store).records
dt = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"n": n, "seconds": dt,
  "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime}))
"""


def server_cpu(pgdir: Path | None) -> float:
    """CPU-seconds of the cluster's processes so far (live backends + reaped ones)."""
    if pgdir is None:
        return 0.0
    pid = int((pgdir / "data" / "postmaster.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            f = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(proc.name) == pid:
            total += sum(int(x) for x in f[11:15]) / tick  # its own + reaped children
        elif int(f[1]) == pid:
            total += (int(f[11]) + int(f[12])) / tick
    return total


def child(target: str, *args: str, pgdir: Path | None) -> dict[str, Any]:
    before = server_cpu(pgdir)
    env = {**os.environ, "PAPERDESK_PROGRESS": "0"}
    out = subprocess.run([PY, "-c", CHILD, target, *args], capture_output=True, text=True,
                         env=env)
    if out.returncode != 0:
        sys.exit(f"{args[0]} on {target.split('@')[-1]} failed:\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["server_cpu_s"] = server_cpu(pgdir) - before
    return res


def split_feed(work: Path) -> tuple[Path, Path, Path, int]:
    """The feed less its last day, the last day, and the feed's records under new ids (an
    ingest to run during the load test)."""
    lines = gzip.open(FEED, "rb").read().splitlines()
    last = max(json.loads(line).get("feed_date") or "" for line in lines)
    head = [ln for ln in lines if (json.loads(ln).get("feed_date") or "") != last]
    day = [ln for ln in lines if (json.loads(ln).get("feed_date") or "") == last]
    again = []
    for i, ln in enumerate(lines[:20000]):
        d = json.loads(ln)
        d["id"] = f"9901.{i:05d}"
        again.append(json.dumps(d).encode())
    paths = work / "head.jsonl.gz", work / "day.jsonl", work / "again.jsonl"
    with gzip.open(paths[0], "wb", compresslevel=1) as f:
        f.write(b"\n".join(head) + b"\n")
    paths[1].write_bytes(b"\n".join(day) + b"\n")
    paths[2].write_bytes(b"\n".join(again) + b"\n")
    second = [ln.replace(b'"9901.', b'"9902.', 1) for ln in again]  # the cache-on run's
    paths[2].with_suffix(".2.jsonl").write_bytes(b"\n".join(second) + b"\n")
    return paths[0], paths[1], paths[2], len(day)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(target: str, port: int, *, cache: bool = False) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PAPERDESK_PROGRESS": "0", "PAPERDESK_RATE_PER_MINUTE": "1000000"}
    if not cache:
        env["PAPERDESK_PAGE_CACHE"] = "0"
    proc = subprocess.Popen(
        [PY, "-m", "paperdesk", "--db", target, "serve", "--port", str(port), "--workers", "4"],
        env=env, stderr=subprocess.DEVNULL,
    )
    import httpx

    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/status", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.terminate()
    sys.exit("the server did not start")


def latency(port: int, n: int) -> dict[str, tuple[float, float]]:
    import random

    import httpx

    base = f"http://127.0.0.1:{port}"
    out: dict[str, tuple[float, float]] = {}
    with httpx.Client(base_url=base, timeout=30) as c:
        days: list[str] = []
        d = c.get("/index.json").json()
        while d["day"] and len(days) < 20:
            days.append(d["day"])
            if not d["prev_day"]:
                break
            d = c.get("/index.json", params={"day": d["prev_day"]}).json()
        works = [w["work_id"] for day in days[:5]
                 for w in c.get("/index.json", params={"day": day}).json()["works"]]
        subjects = ["cs.LG", "cs.CV", "cs.CL", "cs.AI", "math.OC", "stat.ML", "quant-ph", "cs"]
        rng = random.Random(7)
        pages = {
            "daily": lambda: f"/?day={rng.choice(days)}",
            "paper": lambda: f"/papers/{rng.choice(works)}",
            "subject": lambda: f"/subjects/{rng.choice(subjects)}",
        }
        for name, make in pages.items():
            for _ in range(10):
                c.get(make())
            times = []
            for _ in range(n):
                r = c.get(make())
                assert r.status_code == 200, (r.url, r.status_code)
                times.append(float(r.headers["server-timing"].split("dur=")[1]))
            out[name] = (statistics.median(times), pct(times, 95))
    return out


def load_during_ingest(target: str, port: int, again: Path, seconds: float) -> str:
    env = {**os.environ, "PAPERDESK_PROGRESS": "0"}
    ingest = subprocess.Popen([PY, "-m", "paperdesk", "--db", target, "ingest", str(again)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    out = subprocess.run([PY, "-c", LOAD, f"http://127.0.0.1:{port}/", str(seconds), "8"],
                         capture_output=True, text=True, check=True).stdout.split()
    running = ingest.poll() is None
    ingest.wait()
    ok, err, dt = int(out[0]), int(out[1]), float(out[2])
    state = "ingest running throughout" if running else "ingest finished before the end"
    return f"{ok / dt:,.0f} req/s, {err} errors ({state})"


def bench(name: str, target: str, files: tuple[Path, Path, Path, int], pgdir: Path | None,
          n: int, seconds: float) -> None:
    head, day, again, day_n = files
    r = child(target, "ingest", str(head), pgdir=pgdir)
    print(f"{name:<10} ingest      {r['n']:>7,} rec  {r['seconds']:6.1f} s  "
          f"{r['n'] / r['seconds']:8,.0f} rec/s  cpu {r['cpu_s']:6.1f} s"
          f"  server cpu {r['server_cpu_s']:5.1f} s", flush=True)
    r = child(target, "resolve", pgdir=pgdir)
    print(f"{name:<10} resolve     {r['n']:>7,} rec  {r['seconds']:6.1f} s  "
          f"cpu {r['cpu_s']:6.1f} s  server cpu {r['server_cpu_s']:5.1f} s", flush=True)
    a = child(target, "ingest", str(day), pgdir=pgdir)
    b = child(target, "resolve", pgdir=pgdir)
    print(f"{name:<10} day         {day_n:>7,} rec  {a['seconds'] + b['seconds']:6.1f} s  "
          f"(ingest {a['seconds']:.1f} + works {b['seconds']:.1f})  cpu "
          f"{a['cpu_s'] + b['cpu_s']:6.1f} s  server cpu "
          f"{a['server_cpu_s'] + b['server_cpu_s']:5.1f} s", flush=True)
    port = free_port()
    server = serve(target, port)
    try:
        for page, (p50, p95) in latency(port, n).items():
            print(f"{name:<10} {page:<8} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
                  f"(serve --workers 4, n={n}, page cache off)", flush=True)
        print(f"{name:<10} load      daily page, 8 connections, {seconds:.0f} s, cache off: "
              f"{load_during_ingest(target, port, again, seconds)}", flush=True)
    finally:
        server.terminate()
        server.wait(30)
    # As deployed: the page cache on (invalidated by every commit of the ingest's batches).
    port = free_port()
    server = serve(target, port, cache=True)
    try:
        print(f"{name:<10} load      daily page, 8 connections, {seconds:.0f} s, cache on: "
              f"{load_during_ingest(target, port, again.with_suffix('.2.jsonl'), seconds)}",
              flush=True)
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/pd-pg-bench"))
    ap.add_argument("--url", help="an empty PostgreSQL database (default: a cluster of its own)")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--only", choices=["sqlite", "postgresql"])
    args = ap.parse_args()
    # A SIGTERM (a `timeout`) still stops the cluster and the server (the `finally`s).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not FEED.exists():
        sys.exit(f"no feed at {FEED}")
    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ["PAPERDESK_DATA_DIR"] = str(work / "files")
    print(f"machine: {os.cpu_count()} cores; {subprocess.getoutput('uptime').strip()}")
    files = split_feed(work)
    pgdir = None
    url = args.url
    if url is None:
        pgdir = work / "pg"
        env = {**os.environ, "PG_FSYNC": "on", "PG_SYNC_COMMIT": "off"}
        url = subprocess.run(["bash", str(ROOT / "scripts" / "pg-cluster.sh"), "start", str(pgdir)],
                             check=True, capture_output=True, text=True, env=env).stdout.strip()
    try:
        if args.only != "postgresql":
            bench("sqlite", str(work / "bench.db"), files, None, args.requests, args.seconds)
        if args.only != "sqlite":
            bench("postgresql", url, files, pgdir, args.requests, args.seconds)
    finally:
        if pgdir is not None:
            subprocess.run(["bash", str(ROOT / "scripts" / "pg-cluster.sh"), "stop", str(pgdir)],
                           check=False)
    print(f"after: {subprocess.getoutput('uptime').strip()}")


if __name__ == "__main__":
    main()
