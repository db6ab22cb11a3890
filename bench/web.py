"""Web latency and throughput on a loaded database (issue: the web site and JSON API).

    .venv/bin/python bench/web.py --db var/paperdesk.db [--requests 200] [--seconds 20]

1. Server-side latency: each page type requested in-process N times over different days /
   papers / authors / queries; the time is the app's own `Server-Timing` (request in to
   response start), so client overhead is not counted; prints p50 and p95 in ms.
2. Load: `paperdesk serve` in its own process on 127.0.0.1, and a second process sending
   requests for the daily page from several connections for a bounded time; prints req/s
   and the error count. Traffic stays on loopback.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOAD = r"""
import sys, time, threading, httpx
url, seconds, conns = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
ok = err = 0
lock = threading.Lock()
stop = time.monotonic() + seconds
def run():
    global ok, err
    with httpx.Client(timeout=10) as c:
        while time.monotonic() < stop:
            try:
                r = c.get(url)
                good = r.status_code == 200
            except httpx.HTTPError:
                good = False
            with lock:
                if good: ok += 1
                else: err += 1
ts = [threading.Thread(target=run) for _ in range(conns)]
t0 = time.monotonic(); [t.start() for t in ts]; [t.join() for t in ts]
dt = time.monotonic() - t0
print(f"{ok} {err} {dt}")
"""


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(db: Path, n: int, cache: bool) -> None:
    from starlette.testclient import TestClient

    from paperdesk.web.app import WebSettings, create_app

    c = TestClient(create_app(db))
    days = []
    d = c.get("/index.json").json()
    while d["day"] and len(days) < 30:
        days.append(d["day"])
        if not d["prev_day"]:
            break
        d = c.get("/index.json", params={"day": d["prev_day"]}).json()
    works = [w["work_id"] for day in days[:5] for w in c.get("/index.json", params={"day": day}).json()["works"]]
    authors = [a["author_id"] for day in days[:3]
               for w in c.get("/index.json", params={"day": day}).json()["works"]
               for a in w["authors"] if a["author_id"]]
    queries = ["diffusion models", "graph neural network", "large language model reasoning",
               "quantum error correction", "reinforcement learning robot", "author:zhang",
               "cat:cs.CV segmentation", "title:transformer year:2025..2026", "contrastive learning",
               "speech recognition"]
    # Subject pages: the archives and the busiest categories of the store (an archive page
    # merges the newest records of all its codes).
    index = c.get("/subjects.json").json()
    archives = [a["code"] for g in index["groups"] for a in g["archives"] if len(a["categories"]) > 1]
    busiest = sorted(
        ((cat["count"], cat["code"]) for g in index["groups"] for a in g["archives"]
         for cat in a["categories"]), reverse=True)
    subjects = archives + [code for _, code in busiest[:30]]
    rng = random.Random(7)
    pages = {
        "subject": lambda: f"/subjects/{rng.choice(subjects)}",
        "daily": lambda: f"/?day={rng.choice(days)}",
        "paper": lambda: f"/papers/{rng.choice(works)}",
        "author": lambda: f"/authors/{rng.choice(authors)}",
        "search (hybrid)": lambda: f"/search?q={rng.choice(queries)}",
        "search (keyword)": lambda: f"/search?mode=keyword&q={rng.choice(queries)}",
    }
    settings = WebSettings(expensive_per_minute=1_000_000, page_cache_entries=1024 if cache else 0)
    c = TestClient(create_app(db, settings))
    print(f"-- {'with the page cache (warm)' if cache else 'page cache off: every page rendered'}")
    for name, make in pages.items():
        for _ in range(5):  # warm caches, models
            c.get(make())
        times = []
        for _ in range(n):
            url = make()
            r = c.get(url)
            assert r.status_code == 200, (url, r.status_code, r.text[:200])
            times.append(float(r.headers["server-timing"].split("dur=")[1]))
        print(f"{name:<18} p50 {statistics.median(times):7.1f} ms   p95 {pct(times, 95):7.1f} ms   (n={n})", flush=True)


def load(db: Path, seconds: float, conns: int) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PAPERDESK_PROGRESS": "0", "PAPERDESK_RATE_PER_MINUTE": "1000000"}
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/paperdesk"), "--db", str(db), "serve", "--port", str(port)],
        env=env, stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        for _ in range(200):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
        subprocess.run([sys.executable, "-c", LOAD, url, "2", "2"], check=True, capture_output=True)
        out = subprocess.run([sys.executable, "-c", LOAD, url, str(seconds), str(conns)],
                             check=True, capture_output=True, text=True).stdout.split()
        ok, err, dt = int(out[0]), int(out[1]), float(out[2])
        print(f"load: daily page, {conns} connections, {dt:.0f} s: {ok / dt:,.0f} req/s, {err} errors")
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", type=Path, default=ROOT / "var" / "paperdesk.db")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--connections", type=int, default=8)
    args = ap.parse_args()
    if not args.db.exists():
        sys.exit(f"no database at {args.db}: run `make demo` first")
    print(f"machine: {os.cpu_count()} cores; db {args.db} ({args.db.stat().st_size / 2**20:.0f} MiB)")
    latency(args.db, args.requests, cache=False)
    latency(args.db, args.requests, cache=True)
    load(args.db, args.seconds, args.connections)


if __name__ == "__main__":
    main()
