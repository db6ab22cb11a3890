"""Cut the small real slices under tests/data/shapes/ from ../shared/data (run once; the
output is committed, so tests never need shared/). See tests/data/README.md for sources.

    python3 scripts/make_shape_slices.py ../shared/data tests/data/shapes
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import sys
from pathlib import Path

import yaml

FEATURES = [r"\\textbf\{", r"\\emph\{", r"\\textit\{", r"\\href\{", r"\\url\{", r"\\texttt\{",
            r"\\textsc\{", r"\\[\'\"`^]", r"~", r"--", r"\{\\(?:it|em|bf) ", r"\$"]


def feed(shared: Path, out: Path) -> None:
    """Two feed days: records showing each text macro first, then plain ones. A third
    day's abstracts, titles removed, become the abstract-only generic list."""
    days: dict[str, list[dict]] = {}
    with gzip.open(shared / "arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz", "rt") as f:
        for line in f:
            d = json.loads(line)
            if d.get("feed_date") in ("2026-04-28", "2026-04-29", "2026-04-30"):
                days.setdefault(d["feed_date"], []).append(d)
    chosen: list[dict] = []
    for day in ("2026-04-29", "2026-04-30"):
        recs = days[day]
        picked: list[dict] = []
        for pat in FEATURES:
            for d in recs:
                if d not in picked and re.search(pat, d["summary"]):
                    picked.append(d)
                    break
        picked += [d for d in recs if d not in picked][: 20 - len(picked)]
        chosen += picked
    with open(out / "feed.jsonl", "w") as f:
        for d in chosen:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    # abstract-only: real abstracts, no title; some with authors and a year, some bare
    with open(out / "abstracts.jsonl", "w") as f:
        for i, d in enumerate(days["2026-04-28"][:24]):
            rec = {"source": "digest", "id": f"d{i + 1}", "abstract": d["summary"]}
            if i % 3 == 0:
                rec["authors"] = d["authors"][:4]
            if i % 4 == 1:
                rec["year"] = int(d["feed_date"][:4])
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def openreview(shared: Path, out: Path) -> None:
    """OpenReview papers (papercopilot list shape) whose abstracts carry Markdown or LaTeX."""
    pat = re.compile(r"\*\*[^*\n]+\*\*|(?<![\w*])\*[^*\s][^*\n]*\*(?![\w*])|\\(?:emph|textbf|textit)\{|\]\(http")
    keep: list[dict] = []
    per: dict[str, int] = {}
    for line in open(shared / "openreview/papers.jsonl"):
        d = json.loads(line)
        if d["venue"] in ("3dv2025", "aistats2025", "colm2025") and pat.search(d["abstract"] or ""):
            if per.get(d["venue"], 0) < 5:
                per[d["venue"]] = per.get(d["venue"], 0) + 1
                keep.append(d)
    with open(out / "openreview.jsonl", "w") as f:
        for d in keep:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")


def crossref(shared: Path, out: Path) -> None:
    """Works from the recorded Crossref sessions: journal articles, proceedings papers,
    chapters — each once."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
    from cassettes import bodies  # gzip-recorded bodies, decompressed

    items: dict[str, dict] = {}
    for path in sorted((shared / "crossref").glob("test-works*/*.yaml")):
        for body in bodies(path):
            try:
                data = json.loads(body)
            except (ValueError, TypeError):
                continue
            msg = data.get("message") if isinstance(data, dict) else None
            works = msg.get("items") if isinstance(msg, dict) and "items" in msg else [msg]
            for w in works or []:
                if isinstance(w, dict) and w.get("DOI") and w.get("title") and w.get("author"):
                    items.setdefault(w["DOI"].lower(), w)
    by_type: dict[str, list[dict]] = {}
    for w in items.values():
        by_type.setdefault(w.get("type", "?"), []).append(w)
    keep = [w for t in sorted(by_type, key=str) for w in by_type[t][:4]][:14]
    for w in keep:  # publishers' abstracts are not Crossref's CC0 metadata; reference lists are bulk
        for key in ("abstract", "reference", "relation"):
            w.pop(key, None)
    page = {"status": "ok", "message-type": "work-list",
            "message": {"items": keep, "total-results": len(keep)}}
    (out / "crossref.json").write_text(json.dumps(page, ensure_ascii=False, indent=1) + "\n")


def bibtex(shared: Path, out: Path) -> None:
    """DBLP records (the DBLP half of the Leipzig DBLP-ACM benchmark) written as the BibTeX
    DBLP serves, and the BibTeX Crossref's content negotiation returned in a recorded
    session."""
    lines = ["% DBLP records (CC0) from the Leipzig DBLP-ACM benchmark, as DBLP writes BibTeX;",
             "% the last entry is Crossref content negotiation's own BibTeX (habanero cassette).", ""]
    with open(shared / "dblp-acm/DBLP2.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))[:12]
    for r in rows:
        kind = "article" if r["id"].startswith("journals/") else "inproceedings"
        venue = "journal" if kind == "article" else "booktitle"
        authors = " and ".join(a.strip() for a in r["authors"].split(",") if a.strip())
        lines += [f"@{kind}{{DBLP:{r['id']},", f"  author    = {{{authors}}},",
                  f"  title     = {{{r['title']}}},", f"  {venue:<9} = {{{r['venue']}}},",
                  f"  year      = {{{r['year']}}}", "}", ""]
    cassette = shared / "crossref/test-content_negotation/test_content_negotiation.yaml"
    for ex in yaml.safe_load(cassette.read_text())["interactions"]:
        body = ex["response"]["body"].get("string", "")
        if body.strip().startswith("@"):
            lines.append(body.strip())
            break
    (out / "dblp.bib").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    shared, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    feed(shared, out)
    openreview(shared, out)
    crossref(shared, out)
    bibtex(shared, out)
