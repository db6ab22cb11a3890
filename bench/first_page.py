"""Time to the first page: `git clone` + `make demo`, until `/` answers 200 with papers.

    python3 bench/first_page.py [--repo /work/main] [--ref main] [--dest /tmp/fp-clone]
                                [--data FILE...] [--port 8765] [--full]

Clones REPO at REF into DEST (removed first), runs `make demo` there with the shared feed
as `PAPERDESK_DEMO_DATA` (a clone under /tmp has no `../shared` beside it), and polls
`http://127.0.0.1:PORT/api/daily` every 0.5 s from the moment the clone starts. It prints
the seconds from the start of the clone to the first daily page listing papers and, with
`--full`, to the moment `/api/status` says every stage has run (a main without
`/api/status` serves only once every stage has run: then the two are the same). Every
line `make demo` prints is kept in DEST.log with the second it came at, which shows what
each step (venv, KaTeX, native build, names, ingest, stages) cost. The demo is stopped
at the end (its process group). Uses only the standard library.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 (loopback)
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), b""
    except OSError:
        return 0, b""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default="/work/main")
    ap.add_argument("--ref", default=None, help="branch or commit (default: the repo's HEAD)")
    ap.add_argument("--dest", default="/tmp/fp-clone")
    ap.add_argument("--data", nargs="*", default=None,
                    help="demo input files (default: the shared daily feed)")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--full", action="store_true", help="also wait for every stage to finish")
    ap.add_argument("--timeout", type=float, default=3600.0)
    args = ap.parse_args()

    data = args.data or sorted(glob.glob("/work/shared/data/arxiv/daily-feed-*.jsonl.gz"))
    dest = Path(args.dest)
    shutil.rmtree(dest, ignore_errors=True)
    log = open(f"{dest}.log", "w", encoding="utf-8")  # noqa: SIM115
    t0 = time.monotonic()

    def stamp(line: str) -> None:
        log.write(f"{time.monotonic() - t0:8.1f}  {line.rstrip()}\n")
        log.flush()

    subprocess.run(["git", "clone", "-q", args.repo, str(dest)], check=True)
    if args.ref:
        subprocess.run(["git", "-C", str(dest), "checkout", "-q", args.ref], check=True)
    stamp(f"cloned {args.repo} {args.ref or 'HEAD'}")
    env = {**os.environ, "PAPERDESK_DEMO_DATA": " ".join(data),
           "PAPERDESK_PORT": str(args.port), "PAPERDESK_PROGRESS": "0"}
    demo = subprocess.Popen(
        ["make", "demo"], cwd=dest, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )

    def pump() -> None:
        assert demo.stdout is not None
        for line in demo.stdout:
            stamp(line)

    threading.Thread(target=pump, daemon=True).start()
    base = f"http://127.0.0.1:{args.port}"
    first: float | None = None
    full: float | None = None
    try:
        while time.monotonic() - t0 < args.timeout:
            if demo.poll() is not None:
                print(f"make demo exited with {demo.returncode}; see {dest}.log", file=sys.stderr)
                return 1
            if first is None:
                status, body = _get(f"{base}/api/daily")
                if status == 200 and json.loads(body).get("total", 0) > 0:
                    code, html = _get(f"{base}/")
                    if code == 200:
                        first = time.monotonic() - t0
                        stamp(f"first page with papers: {first:.1f} s")
                        print(f"first page with papers: {first:.1f} s after the clone started")
                        if not args.full:
                            break
            else:
                status, body = _get(f"{base}/api/status")
                if status == 404 or (status == 200 and json.loads(body).get("state") == "ready"):
                    full = first if status == 404 else time.monotonic() - t0
                    stamp(f"every stage done: {full:.1f} s")
                    print(f"every stage done: {full:.1f} s after the clone started")
                    break
            time.sleep(0.5)
        else:
            print("timed out", file=sys.stderr)
            return 1
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(demo.pid, signal.SIGKILL)
        log.close()
    print(f"log: {dest}.log")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
