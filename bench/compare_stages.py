"""Every stage's output on real data, dumped so two checkouts can be compared exactly.

    nice -n 10 .venv/bin/python bench/compare_stages.py --src /path/to/checkout-a --out a.json
    nice -n 10 .venv/bin/python bench/compare_stages.py --src . --out b.json
    .venv/bin/python bench/compare_stages.py --diff a.json b.json

For each data set (the shared arXiv feed, DBLP–ACM, OpenReview accepted papers, the SciFact
corpus) it builds a fresh store with the command line of the checkout under `--src` (its
`src/` first on `sys.path`): `ingest`, `resolve` (works, authors, search index), `classify`;
then dumps what users see: every work's records (with how each joined and its score), its
identifiers and redirects, every signature's author profile, every record's subjects, and
the ranked hits of keyword, semantic and hybrid searches (feed titles, SciFact claims). The
dump names no row ids or timestamps, so two runs of one checkout give the same file.
`--diff` prints the first differences of each part and exits 1 when any part differs.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PAPERDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
SETS = ("feed", "dblp-acm", "openreview", "scifact")
MODES = ("keyword", "semantic", "hybrid")

# The search part, run by the checkout's own interpreter (its `SearchIndex` API).
_SEARCH = """
import json, sys
from paperdesk.store import open_store
from paperdesk.search.engine import SearchIndex
store = open_store(sys.argv[1])
ix = SearchIndex(store)
out = []
for q in json.loads(sys.argv[2]):
    for mode in json.loads(sys.argv[3]):
        try:
            r = ix.search(q, mode=mode, limit=10, snippets=False)
        except Exception as exc:  # a claim that is not a valid query: its error is the output
            out.append([q, mode, None, repr(exc)])
            continue
        out.append([q, mode, r.total, [[h.work_id, sorted(h.keys)] for h in r.hits]])
print(json.dumps(out))
"""


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src / "src"), PAPERDESK_PROGRESS="0")
    env.pop("PAPERDESK_DB", None)
    return env


def _run(src: Path, *args: str) -> str:
    cmd = [sys.executable, *args]
    done = subprocess.run(cmd, env=_env(src), capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd[:6])} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def _cli(src: Path, db: Path, *args: str) -> str:
    return _run(src, "-m", "paperdesk", "--db", str(db), *args)


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def _inputs(name: str, tmp: Path, feed_lines: int = 0) -> tuple[list[Path], list[str]]:
    """The files to ingest for a data set and the search queries to dump."""
    if name == "feed":
        feed = SHARED / "arxiv" / "daily-feed-2025-03-to-2026-04.jsonl.gz"
        if feed_lines:  # the first lines only (a quicker check)
            part = tmp / f"feed-{feed_lines}.jsonl.gz"
            with gzip.open(feed, "rb") as f, gzip.open(part, "wb") as out:
                for i, line in enumerate(f):
                    if i >= feed_lines:
                        break
                    out.write(line)
            feed = part
        rng = random.Random(16)
        titles = []
        step = 997 if not feed_lines else max(1, feed_lines // 40)
        with gzip.open(feed, "rt", encoding="utf-8") as f:
            for i, line in enumerate(f):
                if i % step == 0:
                    titles.append(json.loads(line).get("title") or "")
        queries = [re.sub(r"[^\w\s-]", " ", t)[:80] for t in rng.sample(titles, 20)]
        return [feed], [*queries, "cat:cs.CL retrieval", "author:zhang diffusion"]
    if name == "dblp-acm":
        rows = []
        for fname, source in (("DBLP2.csv", "dblp"), ("ACM.csv", "acm")):
            with open(SHARED / "dblp-acm" / fname, encoding="utf-8", errors="replace") as f:
                for r in csv.DictReader(f):
                    rows.append({"source": source, "id": r["id"], "title": r["title"],
                                 "authors": r["authors"], "venue": r["venue"], "year": r["year"]})
        return [_jsonl(tmp / "dblp-acm.jsonl", rows)], ["query optimization", "xml indexing"]
    if name == "openreview":
        rows = []
        with open(SHARED / "openreview" / "papers.jsonl", encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                rows.append({"source": "openreview", "id": d["openreview_id"], "title": d.get("title"),
                             "abstract": d.get("abstract"), "authors": d.get("authors"),
                             "venue": d.get("venue")})
        return [_jsonl(tmp / "openreview.jsonl", rows)], ["robot manipulation", "graph neural network"]
    from paperdesk.search.evaldata import load_scifact  # the reader of this checkout

    docs, claims = load_scifact(SHARED / "scifact")
    rows = [{"source": "scifact", "id": d.doc_id, "title": d.title, "abstract": d.abstract} for d in docs]
    return [_jsonl(tmp / "scifact.jsonl", rows)], [c.text for c in claims[:40]]


def _dump_db(db: Path) -> dict[str, Any]:
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    members: dict[int, list[list[Any]]] = defaultdict(list)
    for key, w, how, score in c.execute("SELECT record_key, work_id, how, score FROM work_records"):
        members[int(w)].append([key, how, None if score is None else round(score, 6)])
    keys: dict[int, list[list[str]]] = defaultdict(list)
    for w, k, v in c.execute("SELECT work_id, kind, value FROM work_keys"):
        keys[int(w)].append([k, v])
    works = {f"W{w}": [sorted(m), sorted(keys.get(w, []))] for w, m in sorted(members.items())}
    redirects = sorted(c.execute("SELECT old_id, new_id FROM work_redirects").fetchall())
    authors = dict(sorted(c.execute("SELECT sig_id, author_id FROM author_signatures")))
    subjects: dict[str, list[Any]] = defaultdict(list)
    for row in c.execute(
        "SELECT record_key, subject, predicted, probability, primary_probability"
        " FROM record_subjects ORDER BY record_key, rank"
    ):
        subjects[row[0]].append([row[1], row[2], *(None if p is None else round(p, 5) for p in row[3:])])
    codes = sorted(c.execute("SELECT record_key, position, scheme, code FROM record_codes").fetchall())
    c.close()
    return {"works": works, "redirects": redirects, "authors": authors,
            "subjects": dict(sorted(subjects.items())), "codes": codes}


def build(src: Path, name: str, work: Path, feed_lines: int = 0, reuse: bool = False) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    db = work / f"{name}.db"
    for p in [] if reuse else work.glob(f"{name}.db*"):
        if p.is_dir():
            import shutil

            shutil.rmtree(p)
        else:
            p.unlink()
    files, queries = _inputs(name, work, feed_lines)
    if not db.exists() or not reuse:
        _cli(src, db, "ingest", "--on-error", "skip", *map(str, files))
        _cli(src, db, "resolve", "--json")
        _cli(src, db, "classify", "--json")
    out = _dump_db(db)
    out["search"] = json.loads(_run(src, "-c", _SEARCH, str(db), json.dumps(queries), json.dumps(MODES)))
    return out


def diff(a: dict[str, Any], b: dict[str, Any]) -> int:
    bad = 0
    for name in sorted(set(a) | set(b)):
        for part in sorted(set(a.get(name, {})) | set(b.get(name, {}))):
            x, y = a.get(name, {}).get(part), b.get(name, {}).get(part)
            if x == y:
                print(f"{name}/{part}: identical ({len(x or ())} entries)")
                continue
            bad += 1
            print(f"{name}/{part}: DIFFERENT")
            if isinstance(x, dict) and isinstance(y, dict):
                ks = [k for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)]
                print(f"  {len(ks)} of {len(set(x) | set(y))} entries differ; first: ")
                for k in ks[:5]:
                    print(f"    {k}: {x.get(k)!r}\n    {' ' * len(k)}  {y.get(k)!r}")
            elif isinstance(x, list) and isinstance(y, list):
                n = [i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q]
                print(f"  lengths {len(x)} / {len(y)}; {len(n)} positions differ; first:")
                for i in n[:5]:
                    print(f"    {x[i]!r}\n    {y[i]!r}")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--work", type=Path, default=None, help="where the stores go (default: a temp dir)")
    ap.add_argument("--diff", nargs=2, type=Path, metavar=("A", "B"))
    ap.add_argument("--feed-lines", type=int, default=0, help="only the feed's first N lines")
    ap.add_argument("--reuse", action="store_true", help="dump the stores an earlier run built")
    args = ap.parse_args()
    if args.diff:
        a, b = (json.loads(p.read_text()) for p in args.diff)
        return diff(a, b)
    if args.out is None:
        ap.error("--out is needed (or --diff A B)")
    work = args.work or Path(tempfile.mkdtemp(prefix="paperdesk-compare-"))
    result = {}
    for name in args.sets.split(","):
        result[name] = build(args.src.resolve(), name, work, args.feed_lines, args.reuse)
        print(f"{name}: {len(result[name]['works'])} works, {len(result[name]['authors'])} signatures",
              file=sys.stderr)
        args.out.write_text(json.dumps(result, sort_keys=True))  # after each set: kept if one fails
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
