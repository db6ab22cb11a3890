"""`paperdesk recommend` on a real store: a month ranked for one user, timed as a user
runs it (a new process each time) and inside a running process (the web's case).

The user is made from the store: the author with the most papers (20-60) before the
month who also has at least 3 in it; their earlier works are the library (the name stays
on them: this times the call, it does not score it — bench/recommend.py does that).

Prints, for the month (`--since`..`--until`):
- first: a new process on a store without the month's stored features (they are computed
  and stored by this call; `desk_features` emptied first);
- cold: a new process once the features are stored (median and min of `--runs`);
- warm: the same call again in one process (median of `--runs`);
- the same cold call for one day (what the for-you page ranks);
- the split of a new process (`split`, median of `--runs`): importing what the CLI's
  `recommend` imports, reading the stored features (`desk.cache.candidates`), then
  `recommend()` (train + rank, with its own reads; the features' read again, now warm, is
  printed beside it).

Children run with bytecode cached (`child_env`), compiled before the first is timed.

    python bench/recommend_store.py --db var/paperdesk.db [--since 2026-03-01 --until 2026-03-31] [--runs 5]
        [--compare-src ../main/src]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from paperdesk.desk import library as lib  # noqa: E402
from paperdesk.desk.recommend import recommend  # noqa: E402
from paperdesk.store import curators, open_store  # noqa: E402
from paperdesk.store.codec import decode_record  # noqa: E402

USER = "bench-desk"


def make_user(db: str, since: str, until: str) -> tuple[str, int]:
    """(the author the user stands for, library size); made once, then reused."""
    with open_store(db) as store:
        if store.desk.user(USER) is not None:
            return "(existing)", len(store.desk.library(USER))
        before: Counter[str] = Counter()
        works: dict[str, set[str]] = {}
        for row in store.desk.candidates("0000-01-01", since):
            if row.appeared >= since or row.work_id is None:
                continue
            for a in decode_record(row.data).authors:
                name = a.display or a.name
                before[name] += 1
                works.setdefault(name, set()).add(f"W{row.work_id}")
        during: Counter[str] = Counter()
        for row in store.desk.candidates(since, until):
            for a in decode_record(row.data).authors:
                during[a.display or a.name] += 1
        name = max((n for n, c in before.items() if 20 <= c <= 60 and during[n] >= 3),
                   key=lambda n: (before[n], n))
        curators.add_user(store, USER, secrets.token_hex(16))
        lib.add(store, USER, sorted(works[name]))
        return name, len(works[name])


PYCACHE = Path(tempfile.gettempdir()) / "paperdesk-bench-pycache"


def child_env(src: Path) -> dict[str, str]:
    """The children's environment: `src` on the path and bytecode cached (in `PYCACHE`, as
    an installed package has it), even where PYTHONDONTWRITEBYTECODE is set: compiling
    every module from source took ~2.3 of a cold call's CPU-s on the dev VM."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(PYCACHE)}


def child(db: str, since: str, until: str, src: Path = ROOT / "src") -> float:
    cmd = [sys.executable, "-m", "paperdesk", "--db", db, "recommend", "--user", USER,
           "--since", since, "--until", until, "--limit", "50", "--json"]
    env = child_env(src)
    t = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return time.perf_counter() - t


CPU: list[float] = []
"""CPU seconds of each child, in call order (a loaded machine stretches the wall time)."""

SPLIT = """
import json, sys, time
t0 = time.perf_counter()
import paperdesk.cli, paperdesk.cli.desk, paperdesk.desk.recommend as R
from paperdesk.desk import cache as C
from paperdesk.store import open_store
t1 = time.perf_counter()
db, user, since, until = sys.argv[1:5]
store = open_store(db)
t2 = time.perf_counter()
C.candidates(store, since, until)
t3 = time.perf_counter()
c3 = time.process_time()
R.recommend(store, user, since=since, until=until, limit=50)
t4 = time.perf_counter()
c4 = time.process_time()
C.candidates(store, since, until)
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "load": t3 - t2, "recommend": t4 - t3,
                  "load_again": t5 - t4, "recommend_cpu": c4 - c3, "cpu": c4}))
"""
"""A new process, timed inside: imports, opening the store, the features' read, recommend()."""


def split(db: str, since: str, until: str) -> dict[str, float]:
    env = child_env(ROOT / "src")
    out = subprocess.run([sys.executable, "-c", SPLIT, db, USER, since, until], check=True,
                         capture_output=True, text=True, env=env)
    parts: dict[str, float] = json.loads(out.stdout)
    return parts


def _cpu(n: int) -> str:
    return f"(CPU median {statistics.median(CPU[-n:]):.2f} s)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--since", default="2026-03-01")
    ap.add_argument("--until", default="2026-03-31")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compare-src", type=Path, default=None,
                    help="also time this checkout's src/ (e.g. ../main/src: the code before)")
    args = ap.parse_args()

    name, n_lib = make_user(args.db, args.since, args.until)
    with open_store(args.db) as store:
        n_rec = len(store.desk.feature_rows(args.since, args.until, 0))
        with store.transaction():
            store.conn.execute("DELETE FROM desk_features")
    print(f"user {USER} for {name}: {n_lib} works saved; {args.since}..{args.until}: {n_rec} records", flush=True)
    for src in [ROOT / "src"] + ([args.compare_src] if args.compare_src else []):  # bytecode compiled
        subprocess.run([sys.executable, "-c", "import paperdesk.cli.desk, paperdesk.desk.recommend"],
                       check=True, env=child_env(src))
    first = child(args.db, args.since, args.until)
    first_cpu = _cpu(1)
    cold = [child(args.db, args.since, args.until) for _ in range(args.runs)]
    cold_cpu = _cpu(args.runs)
    day = [child(args.db, args.until, args.until) for _ in range(args.runs)]
    day_cpu = _cpu(args.runs)
    splits = [split(args.db, args.since, args.until) for _ in range(args.runs)]
    with open_store(args.db) as store:
        recommend(store, USER, since=args.since, until=args.until)
        warm = []
        for _ in range(args.runs):
            t = time.perf_counter()
            out = recommend(store, USER, since=args.since, until=args.until)
            warm.append(time.perf_counter() - t)
    print(f"first (features computed and stored): {first:.2f} s {first_cpu}")
    print(f"cold process, features stored: median {statistics.median(cold):.2f} s, min {min(cold):.2f} s {cold_cpu}")
    print(f"warm (in one process): median {statistics.median(warm) * 1000:.0f} ms; {len(out['hits'])} hits")
    print(f"one day ({args.until}), cold process: median {statistics.median(day):.2f} s {day_cpu}")
    med = {k: statistics.median(p[k] for p in splits) for k in splits[0]}
    print(f"split of a new process (median): imports {med['import']:.2f} s, open {med['open']:.2f} s, "
          f"stored features read {med['load']:.2f} s, recommend() {med['recommend']:.2f} s "
          f"({med['recommend_cpu']:.2f} CPU-s; its features' read, warm: {med['load_again']:.2f} s); "
          f"the process to there {med['cpu']:.2f} CPU-s; load {os.getloadavg()[0]:.1f}")
    if args.compare_src:
        other = [child(args.db, args.since, args.until, args.compare_src) for _ in range(args.runs)]
        print(f"{args.compare_src}: cold process, median {statistics.median(other):.2f} s, "
              f"min {min(other):.2f} s {_cpu(args.runs)}")


if __name__ == "__main__":
    main()
