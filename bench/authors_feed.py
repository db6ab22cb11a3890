"""The daily-feed part of bench/authors.py: the hand-checked lists of prolific people and of
common names, their per-person figures on a resolved store or in memory, the packaged name
prior's input, and a name's profiles printed for checking by hand.

    .venv/bin/python bench/authors.py --feed-blocks [--show "Wei Zhang"]

Common names must stay split, but not into fragments where the evidence is plain: for each
common name the report counts pairs of its profiles that share two or more co-authors
(other than people of the name's own block), which the clustering should have joined.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from paperdesk.resolve.authors_disambiguate import disambiguate
from paperdesk.resolve.authors_features import (
    Signature,
    name_form,
    set_people,
    signatures_from_record,
    text_vectors,
)
from paperdesk.resolve.authors_rarity import NameStats

ROOT = Path(__file__).resolve().parent.parent


def feed_forms(shared: Path) -> list[str]:
    """The name forms (see `name_form`) of every author of the shared daily feed, which
    the packaged name prior counts (cached under var/, keyed by the feed file's size)."""
    import gzip

    import orjson

    from paperdesk.model import Author
    from paperdesk.normalize.names import normalize_author
    from paperdesk.resolve.authors_names import fold as fold_name
    from paperdesk.resolve.authors_names import parse_given

    src = shared / "arxiv" / "daily-feed-2025-03-to-2026-04.jsonl.gz"
    cache = ROOT / "var" / f"bench-feed-forms-{src.stat().st_size}.txt"
    if cache.exists():
        return cache.read_text("utf-8").splitlines()
    forms: set[str] = set()
    with gzip.open(src, "rb") as fh:
        for line in fh:
            for name in orjson.loads(line).get("authors") or ():
                a = normalize_author(Author(name=name))
                forms.add(" ".join((*parse_given(a.given).tokens, fold_name(a.family or ""))).strip())
    cache.parent.mkdir(exist_ok=True)
    cache.write_text("\n".join(sorted(forms)), "utf-8")
    return sorted(forms)



PEOPLE_FILE = ROOT / "bench" / "authors_feed_people.tsv"
COMMON_FILE = ROOT / "bench" / "authors_feed_common.tsv"


def read_list(path: Path) -> list[list[str]]:
    """The rows of a tab-separated list (after its `#` comment lines and header)."""
    rows = [line.split("\t") for line in path.read_text("utf-8").splitlines() if line and not line.startswith("#")]
    return rows[1:]


def person_part(name: str) -> str:
    """`held-out` for a fixed third of the feed list (by a hash of the name), else `tuned`:
    development looked only at the tuned part's figures."""
    return "held-out" if int(hashlib.sha1(name.encode()).hexdigest(), 16) % 3 == 0 else "tuned"


def _form_and_key(name: str) -> tuple[str, str]:
    """(folded full name form, blocking key) of a name as the store would have them."""
    from paperdesk.model import Author
    from paperdesk.normalize.names import normalize_author
    from paperdesk.resolve.authors_names import fold as fold_name
    from paperdesk.resolve.authors_names import parse_given

    a = normalize_author(Author(name=name))
    return " ".join((*parse_given(a.given).tokens, fold_name(a.family or ""))).strip(), a.key or ""


def feed_people(db: Path) -> int:
    """Per person of the feed lists (`bench/authors_feed_*.tsv`), on a resolved store: the
    signatures carrying the person's folded full name, how many profiles hold them and the
    share of the largest; prolific people should have one profile (>= 90 %), common names
    should stay split."""
    from paperdesk.store import open_store

    with open_store(db) as store:

        def profiles(name: str) -> Counter[str]:
            form, key = _form_and_key(name)
            rows = store.authors.signatures_in_blocks([key])
            return Counter(r.author_id for r in rows if r.name_folded == form)

        return report_people(profiles)


def feed_blocks(shared: Path, show: list[str] | None = None) -> int:
    """The feed lists' figures without a store, in about a minute: every feed record with an
    author in a listed name's block, clustered in memory by the shipped model with the
    whole feed's name statistics, as a full resolve of the feed clusters those blocks
    (but for its units, a work's copies taken as one). For development; the figures to
    report are `--feed-people` on a resolved store. `show`: names whose profiles to print
    for checking by hand."""
    import gzip
    import io

    import orjson

    from paperdesk.model import SourceRecord
    from paperdesk.normalize import finish
    from paperdesk.sources import arxiv_feed

    names = [row[0] for row in (*read_list(PEOPLE_FILE), *read_list(COMMON_FILE))]
    blocks = {_form_and_key(n)[1] for n in [*names, *(show or ())]}
    key_of: dict[str, str] = {}
    lines = []
    with gzip.open(shared / "arxiv" / "daily-feed-2025-03-to-2026-04.jsonl.gz", "rb") as fh:
        for line in fh:
            authors = orjson.loads(line).get("authors") or ()
            for a in authors:
                if a not in key_of:
                    key_of[a] = _form_and_key(a)[1]
            if any(key_of[a] in blocks for a in authors):
                lines.append(line)
    records = [
        finish(r) for r in arxiv_feed.parse(io.BytesIO(b"".join(lines)), "feed")
        if isinstance(r, SourceRecord)
    ]
    sigs = [s for r in records for s in signatures_from_record(r) if s.block in blocks]
    set_people(sigs, NameStats(feed_forms(shared)))
    labels = disambiguate(sigs, vectors=text_vectors(sigs))
    by_form: dict[str, Counter[str]] = defaultdict(Counter)
    members: dict[str, dict[str, list[Signature]]] = defaultdict(lambda: defaultdict(list))
    for sig, label in zip(sigs, labels, strict=True):
        by_form[name_form(sig)][label] += 1
        members[name_form(sig)][label].append(sig)
    by_key = {r.key: r for r in records}
    rc = report_people(
        lambda name: by_form[_form_and_key(name)[0]],
        lambda name: plain_evidence(members[_form_and_key(name)[0]], by_key),
    )
    for name in show or ():
        show_profiles(name, members[_form_and_key(name)[0]], by_key)
    return rc


def _others(profile: list[Signature], records: dict) -> Counter[str]:
    """The co-authors (full names, folded) of a profile's records."""
    from paperdesk.resolve.authors_names import fold

    return Counter(
        " ".join(fold(a.name).split())
        for s in profile
        for pos, a in enumerate(records[s.record_key].authors)
        if pos != s.position
    )


def plain_evidence(profiles: dict[str, list[Signature]], records: dict) -> str:
    """Pairs of a name's profiles whose records share >= 2 co-authors (by full name): plain
    evidence of one person left split (or of one group with two people of the name, which
    the model cannot tell apart); and the profiles of one record."""
    keys = [set(_others(p, records)) for p in profiles.values()]
    pairs = sum(
        1 for i in range(len(keys)) for j in range(i + 1, len(keys)) if len(keys[i] & keys[j]) >= 2
    )
    singles = sum(1 for p in profiles.values() if len(p) == 1)
    return f"{pairs:5d} {singles:7d}"


def show_profiles(name: str, profiles: dict[str, list[Signature]], records: dict) -> None:
    """A name's profiles, largest first: size, years, categories, frequent co-authors, two
    titles; to check by hand that they are different people."""
    print(f"\n== {name}: {sum(map(len, profiles.values()))} records in {len(profiles)} profiles")
    for sigs in sorted(profiles.values(), key=len, reverse=True):
        recs = [records[s.record_key] for s in sigs]
        cats = Counter(c for r in recs for c in r.categories[:1]).most_common(3)
        years = sorted({r.year for r in recs if r.year})
        co = ", ".join(k for k, _ in _others(sigs, records).most_common(3))
        titles = " | ".join((r.title or "")[:60] for r in recs[:2])
        print(f"  {len(sigs):3d} {years[0] if years else ''}-{years[-1] if years else ''} "
              f"{' '.join(c for c, _ in cats):22s} co: {co[:60]:60s} :: {titles}")


def report_people(
    profiles: Callable[[str], Counter[str]], evidence: Callable[[str], str] | None = None
) -> int:
    """Print the feed lists' per-person figures, `profiles(name)` counting a name's
    signatures per profile; `evidence(name)`, when given, the common names' profile pairs
    that share co-authors (`plain_evidence`)."""
    ok: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    shares: dict[str, list[float]] = defaultdict(list)
    print(f"{'person':28s} {'part':8s} {'records':>7s} {'profiles':>8s} {'largest':>7s} share")
    for row in read_list(PEOPLE_FILE):
        name = row[0]
        part = person_part(name)
        by = profiles(name)
        n = sum(by.values())
        top = by.most_common(1)[0][1] if by else 0
        share = top / n if n else 0.0
        ok[part][0] += share >= 0.9
        ok[part][1] += 1
        shares[part].append(share)
        print(f"{name:28s} {part:8s} {n:7d} {len(by):8d} {top:7d} {share:.2f}{'' if share >= 0.9 else '  <-- split'}")
    for part in ("tuned", "held-out"):
        got, total = ok[part]
        print(f"feed people ({part}): {got}/{total} have one profile holding >= 90 % of their "
              f"records; mean largest share {sum(shares[part]) / max(1, len(shares[part])):.3f}")
    extra = " pairs>=2co singles" if evidence else ""
    print(f"\n{'common name':28s} {'part':8s} {'records':>7s} {'profiles':>8s} {'largest':>7s}{extra}")
    for row in read_list(COMMON_FILE):
        by = profiles(row[0])
        n = sum(by.values())
        top = by.most_common(1)[0][1] if by else 0
        print(f"{row[0]:28s} {person_part(row[0]):8s} {n:7d} {len(by):8d} {top:7d} "
              f"{evidence(row[0]) if evidence else ''}")
    return 0


