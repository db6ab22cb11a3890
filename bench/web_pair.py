"""Page latency of two versions side by side, request by request (issue #16: "page
latencies within 20 % of today's figures").

    .venv/bin/python bench/web_pair.py --db A.db --other-db B.db --other-src ../anchor/src \
        [--other-env NAME=VALUE] [--requests 300]   # e.g. the other version's own build switch

Why paired: on a shared 2-core VM the speed of the machine drifts by 20-40 % from one
minute to the next, more than the difference being measured, so two benchmark runs one
after the other compare the minutes as much as the code. Here both versions run at once as
`paperdesk serve` processes on 127.0.0.1 (this checkout on `--db`, the other one's code,
`--other-src` on PYTHONPATH, on `--other-db`, each store built by its own version), page
cache off, and each sampled URL goes to both, in a random order, one request at a time.
Printed per page type: each version's p50 and p95 of the app's own `Server-Timing`, and
the median of the per-request ratios (this one / the other).

The URLs are the same for both: days, subjects and queries, papers by work id (taken from
the first version's daily pages; both versions number works the same way on the same
feed). An author page is the same person in both: the author at the same position of the
same paper, whose id each version gives in its own daily page; the printed mean records a
profile shows how much each version's author page holds.
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
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ["diffusion models", "graph neural network", "large language model reasoning",
           "quantum error correction", "reinforcement learning robot", "author:zhang",
           "cat:cs.CV segmentation", "title:transformer year:2025..2026", "contrastive learning",
           "speech recognition"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start(db: Path, src: Path | None, extra_env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """`paperdesk serve` on a free loopback port, page cache off; returns (process, base URL)."""
    port = free_port()
    env = {**os.environ, "PAPERDESK_PROGRESS": "0", "PAPERDESK_RATE_PER_MINUTE": "1000000",
           "PAPERDESK_PAGE_CACHE": "0", **extra_env}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    proc = subprocess.Popen([sys.executable, "-m", "paperdesk", "--db", str(db), "serve", "--port", str(port)],
                            env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"the server on {db} exited with {proc.returncode}")
            time.sleep(0.1)
    proc.terminate()
    sys.exit(f"the server on {db} did not start")


def daily_works(c: httpx.Client, days: int) -> tuple[list[str], list[dict[str, Any]]]:
    """The newest `days` days of the store and their works, as the daily JSON gives them."""
    out_days: list[str] = []
    works: list[dict[str, Any]] = []
    d = c.get("/index.json").json()
    while d["day"] and len(out_days) < days:
        out_days.append(d["day"])
        works += c.get("/index.json", params={"day": d["day"]}).json()["works"]
        if not d["prev_day"]:
            break
        d = c.get("/index.json", params={"day": d["prev_day"]}).json()
    return out_days, works


def plan(a: httpx.Client, b: httpx.Client, n: int) -> dict[str, list[tuple[str, str]]]:
    """Per page type, `n` (URL on the first version, URL on the other) pairs."""
    days, works_a = daily_works(a, 5)
    _, works_b = daily_works(b, 5)
    by_id_b = {w["work_id"]: w for w in works_b}
    people: list[tuple[str, str]] = []
    for w in works_a[: len(works_a) * 3 // 5]:
        other = by_id_b.get(w["work_id"])
        if other is None or len(other["authors"]) != len(w["authors"]):
            continue
        for x, y in zip(w["authors"], other["authors"], strict=True):
            if x["author_id"] and y["author_id"] and x["name"] == y["name"]:
                people.append((f"/authors/{x['author_id']}", f"/authors/{y['author_id']}"))
    index = a.get("/subjects.json").json()
    archives = [x["code"] for g in index["groups"] for x in g["archives"] if len(x["categories"]) > 1]
    busiest = sorted(((cat["count"], cat["code"]) for g in index["groups"] for x in g["archives"]
                      for cat in x["categories"]), reverse=True)
    subjects = archives + [code for _, code in busiest[:30]]
    papers = [f"/papers/{w['work_id']}" for w in works_a if w["work_id"] in by_id_b]
    rng = random.Random(7)

    def same(urls: list[str]) -> list[tuple[str, str]]:
        return [(u, u) for u in (rng.choice(urls) for _ in range(n))]

    return {
        "subject": same([f"/subjects/{s}" for s in subjects]),
        "daily": same([f"/?day={d}" for d in days]),
        "paper": same(papers),
        "author": [rng.choice(people) for _ in range(n)],
        "search (hybrid)": same([f"/search?q={q}" for q in QUERIES]),
        "search (keyword)": same([f"/search?mode=keyword&q={q}" for q in QUERIES]),
    }


def timed(c: httpx.Client, url: str) -> float:
    r = c.get(url)
    if r.status_code != 200:
        sys.exit(f"{c.base_url}{url}: HTTP {r.status_code}")
    return float(r.headers["server-timing"].split("dur=")[1])


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True, help="this checkout's store")
    ap.add_argument("--other-db", type=Path, required=True, help="the other version's store")
    ap.add_argument("--other-src", type=Path, required=True, help="the other version's src/ (PYTHONPATH)")
    ap.add_argument("--other-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--requests", type=int, default=300)
    args = ap.parse_args()
    other_env = dict(kv.split("=", 1) for kv in args.other_env)
    pa, url_a = start(args.db, ROOT / "src", {})
    pb, url_b = start(args.other_db, args.other_src, other_env)
    try:
        with httpx.Client(base_url=url_a, timeout=60) as a, httpx.Client(base_url=url_b, timeout=60) as b:
            pages = plan(a, b, args.requests)
            profile_sizes: dict[str, list[int]] = {"this": [], "other": []}
            for ua, ub in pages["author"]:
                profile_sizes["this"].append(a.get(f"/api{ua}").json()["records_count"])
                profile_sizes["other"].append(b.get(f"/api{ub}").json()["records_count"])
            # The same person with as many records in both: the code's speed, not the
            # author model's (one that merges a person's profiles shows more on the page).
            pages["author, same size"] = [
                p for p, x, y in zip(pages["author"], profile_sizes["this"], profile_sizes["other"], strict=True)
                if x == y
            ]
            rng = random.Random(11)
            print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}; "
                  f"this {args.db}, other {args.other_db} ({args.other_src})")
            print(f"{'page (cache off)':<18} {'this p50':>9} {'p95':>7} {'other p50':>10} {'p95':>7} "
                  f"{'ratio of p50s':>14} {'median ratio':>13}  n")
            for name, pairs in pages.items():
                for ua, ub in pairs[:10]:  # warm both
                    timed(a, ua)
                    timed(b, ub)
                ta: list[float] = []
                tb: list[float] = []
                for ua, ub in pairs:
                    if rng.random() < 0.5:
                        ta.append(timed(a, ua))
                        tb.append(timed(b, ub))
                    else:
                        tb.append(timed(b, ub))
                        ta.append(timed(a, ua))
                ratios = [x / y for x, y in zip(ta, tb, strict=True) if y > 0]
                print(f"{name:<18.18} {statistics.median(ta):8.1f}  {pct(ta, 95):6.1f}  {statistics.median(tb):9.1f}  "
                      f"{pct(tb, 95):6.1f}  {statistics.median(ta) / statistics.median(tb):13.2f}× "
                      f"{statistics.median(ratios):11.2f}×  {len(pairs)}", flush=True)
            print(f"author pages: mean records a profile, this {statistics.mean(profile_sizes['this']):.1f}, "
                  f"other {statistics.mean(profile_sizes['other']):.1f}")
    finally:
        for p in (pa, pb):
            p.terminate()
            p.wait(10)


if __name__ == "__main__":
    main()
