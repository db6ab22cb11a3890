"""Works: real DBLP–ACM, arXiv-feed and OpenReview rows through the matcher and the store."""

from __future__ import annotations

import csv
import functools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import open_feed, shared_file
from paperdesk.cli import main
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize import finish
from paperdesk.resolve.pairs import MATCH_THRESHOLD, score
from paperdesk.resolve.works import cluster_records, identity_keys, make_doc
from paperdesk.resolve.works_curate import (
    get_work,
    merge_works,
    split_work,
    work_id_for,
    work_ids_for,
)
from paperdesk.resolve.works_run import resolve_works
from paperdesk.resolve.works_run import resolve_works as resolve_store
from paperdesk.store import open_store
from paperdesk.store.sqlite import SQLiteStore


def rec(source: str, sid: str, **kw: object) -> SourceRecord:
    """A finished record with a unique raw payload (the store dedups payloads by hash)."""
    authors = [Author(name=n) for n in kw.pop("authors", [])]  # type: ignore[attr-defined]
    r = SourceRecord(source=source, source_id=sid, authors=authors, **kw)  # type: ignore[arg-type]
    r.raw = json.dumps([source, sid, str(kw)]).encode()
    return finish(r)


def dblp_acm(ids: set[str]) -> list[SourceRecord]:
    out = []
    for fname, source in (("DBLP2.csv", "dblp"), ("ACM.csv", "acm")):
        path = shared_file(f"dblp-acm/{fname}")
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            for row in csv.DictReader(f):
                if row["id"] in ids:
                    out.append(
                        rec(
                            source,
                            row["id"],
                            title=row["title"],
                            authors=row["authors"].split(", "),
                            venue=row["venue"],
                            year=int(row["year"]),
                            ids={source: row["id"]},
                        )
                    )
    assert len(out) == len(ids)
    return out


def feed(ids: set[str]) -> dict[str, SourceRecord]:
    out: dict[str, SourceRecord] = {}
    with open_feed("rt") as f:
        for line in f:
            d = json.loads(line)
            if d["id"] in ids and d["id"] not in out:
                out[d["id"]] = rec(
                    "arxiv",
                    d["id"],
                    arxiv_id=d["id"],
                    title=d["title"],
                    abstract=d["summary"],
                    authors=d["authors"],
                    year=int(d["feed_date"][:4]),
                    url=d.get("abs"),
                )
                if len(out) == len(ids):
                    break
    return out


def openreview(ids: set[str]) -> dict[str, SourceRecord]:
    out = {}
    with open(shared_file("openreview/papers.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["openreview_id"] in ids:
                out[d["openreview_id"]] = rec(
                    "openreview",
                    d["openreview_id"],
                    title=d["title"],
                    abstract=d["abstract"],
                    authors=d["authors"],
                    year=int(d["venue"][-4:]),
                    venue=d["venue"],
                )
    return out


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = open_store(tmp_path / "works.db")
    yield s  # type: ignore[misc]
    s.close()


def _groups(records: list[SourceRecord]) -> set[frozenset[str]]:
    return {frozenset(records[i].key for i in g) for g in cluster_records(records)}


# -- the pure matcher ------------------------------------------------------------------
def test_dblp_acm_pairs_merge_and_conference_journal_versions_stay_apart() -> None:
    # The same authors published one title twice (VLDB 2001, VLDB J. 2002): the labels
    # hold two works, each listed by DBLP and by ACM.
    records = dblp_acm({"conf/vldb/ChirkovaHS01", "journals/vldb/ChirkovaHS02", "672216", "641272"})
    assert _groups(records) == {
        frozenset({"dblp:conf/vldb/ChirkovaHS01", "acm:672216"}),
        frozenset({"dblp:journals/vldb/ChirkovaHS02", "acm:641272"}),
    }


def test_distinct_papers_with_one_abstract_stay_apart() -> None:
    # Two arXiv papers uploaded with the same abstract (a real error in the feed): without
    # their arXiv ids (as a reading list would hold them) the different titles keep them apart.
    f = feed({"2510.22647", "2510.24456"})
    for r in f.values():
        r.source, r.arxiv_id = "mylist", None
    a, b = make_doc(f["2510.22647"]), make_doc(f["2510.24456"])
    assert a.abstract_shingles.tolist() == b.abstract_shingles.tolist()
    assert score(a, b) < MATCH_THRESHOLD


def test_arxiv_versions_are_one_work() -> None:
    records = [
        rec("arxiv", "2503.19551", arxiv_id="2503.19551", title="Scaling Laws of Synthetic Data"),
        rec("mylist", "7", arxiv_id="arXiv:2503.19551v2", title="Scaling laws (v2)"),
        rec("mylist", "8", ids={"arxiv": "https://arxiv.org/abs/2503.19551v3"}),
    ]
    assert identity_keys(records[1]) == [("arxiv", "2503.19551")]
    assert _groups(records) == {frozenset(r.key for r in records)}


def test_preprint_and_published_version_are_one_work_holding_both() -> None:
    records = [
        rec("arxiv", "2401.00001", arxiv_id="2401.00001", title="A preprint title"),
        rec("crossref", "x1", doi="https://doi.org/10.1000/J.ABC.1", ids={"arxiv": "2401.00001"}),
        rec("openalex", "W9", doi="10.1000/j.abc.1", title="The published title"),
        rec("mylist", "3", doi="10.48550/arXiv.2401.00001"),  # arXiv's own DOI = the arXiv id
        rec("crossref", "x2", doi="10.1000/j.abc.2", ids={"arxiv": "2401.00001"}),
    ]
    groups = _groups(records)
    # x2 claims the same arXiv id but another DOI: two DOIs are two papers, it stays out.
    assert groups == {
        frozenset({"arxiv:2401.00001", "crossref:x1", "openalex:W9", "mylist:3"}),
        frozenset({"crossref:x2"}),
    }


def test_openreview_copy_matches_its_arxiv_preprint_by_content() -> None:
    f = feed({"2503.19551", "2503.19168"})
    o = openreview({"UmUXPXHtdl", "QTrW2HWNXe"})
    records = [*f.values(), *o.values()]
    assert _groups(records) == {
        frozenset({"arxiv:2503.19551", "openreview:UmUXPXHtdl"}),
        frozenset({"arxiv:2503.19168", "openreview:QTrW2HWNXe"}),
    }


def test_records_without_title_or_authors_still_match() -> None:
    f = feed({"2503.11692", "2503.11792"})
    paper = f["2503.11692"]
    assert paper.title and paper.abstract
    names = [a.name for a in paper.authors]
    short = rec(
        "bibtex", "k1", title="FloPE", authors=[f"{n.split()[-1]}, {n.split()[0]}" for n in names]
    )
    no_title = rec(
        "profile", "p1", abstract=paper.abstract[: len(paper.abstract) * 2 // 3], authors=names[:1]
    )
    no_authors = rec("mylist", "m1", title=paper.title.lower(), abstract=paper.abstract)
    records = [*f.values(), short, no_title, no_authors]
    assert _groups(records) == {
        frozenset({"arxiv:2503.11692", "bibtex:k1", "profile:p1", "mylist:m1"}),
        frozenset({"arxiv:2503.11792"}),
    }
    # A main title alone is not enough without agreeing authors.
    stranger = rec("bibtex", "k2", title="FloPE", authors=["Ada Lovelace"])
    assert score(make_doc(stranger), make_doc(paper)) < MATCH_THRESHOLD


def test_hostile_text_is_just_text() -> None:
    evil = "'); DROP TABLE works; -- &amp; \x00 " + "\u202e" * 50 + "a" * 1500
    records = [rec("mylist", "1", title=evil, abstract=evil), rec("mylist", "2", title=evil)]
    assert len(cluster_records(records)) in (1, 2)


# -- the store: incremental, stable ids, redirects, curations -----------------------------
@pytest.mark.parametrize("in_memory", [False, True], ids=["sql-lookup", "in-memory-index"])
def test_incremental_resolve_keeps_ids_and_merges_leave_redirects(
    store: SQLiteStore, in_memory: bool
) -> None:
    resolve_works = functools.partial(resolve_store, in_memory=in_memory)
    f = feed({"2503.19551", "2503.19168"})
    store.put_records(list(f.values()), origin="feed")
    pre = rec("mylist", "p", doi="10.1000/pub.1", title="Published version of something")
    store.put_records([pre], origin="list")
    r1 = resolve_works(store)
    assert (r1.records, r1.new_works) == (3, 3)
    w_arxiv = work_id_for(store, "arxiv:2503.19551")
    w_pub = work_id_for(store, "mylist:p")
    w_other = work_id_for(store, "arxiv:2503.19168")
    assert len({w_arxiv, w_pub, w_other}) == 3

    # A second run with nothing new does nothing and changes no id.
    assert resolve_works(store).records == 0

    # New day: the OpenReview copy (content match) and a record carrying both the DOI and
    # the arXiv id (it bridges two existing works: they merge, the younger redirects).
    o = openreview({"UmUXPXHtdl"})
    bridge = rec("crossref", "b", doi="10.1000/pub.1", ids={"arxiv": "2503.19551"})
    store.put_records([*o.values(), bridge], origin="day2")
    r2 = resolve_works(store)
    assert (r2.records, r2.new_works, r2.by_content, r2.works_merged) == (2, 0, 1, 1)
    ids = work_ids_for(store, ["arxiv:2503.19551", "openreview:UmUXPXHtdl", "mylist:p"])
    assert set(ids.values()) == {w_arxiv}
    assert work_id_for(store, "arxiv:2503.19168") == w_other
    assert w_pub is not None
    moved = get_work(store, w_pub)  # the old id still finds the paper
    assert moved["work_id"] == w_arxiv and moved["redirected_from"] == w_pub
    assert {r["key"] for r in moved["records"]} == {
        "arxiv:2503.19551",
        "openreview:UmUXPXHtdl",
        "mylist:p",
        "crossref:b",
    }
    assert w_pub in moved["merged_from"]
    by_key = {r["key"]: r for r in moved["records"]}
    assert by_key["openreview:UmUXPXHtdl"]["matched_by"] == "content"
    assert by_key["arxiv:2503.19551"]["url"] == "https://arxiv.org/abs/2503.19551"

    # A full re-run re-clusters everything and gives every work its old id back.
    full = resolve_works(store, full=True)
    assert full.records == 5
    assert work_id_for(store, "openreview:UmUXPXHtdl") == w_arxiv
    assert work_id_for(store, "arxiv:2503.19168") == w_other
    assert get_work(store, w_pub)["work_id"] == w_arxiv


def test_curations_survive_incremental_and_full_runs(store: SQLiteStore) -> None:
    f = feed({"2503.19551", "2503.19168"})
    o = openreview({"UmUXPXHtdl"})
    store.put_records([*f.values(), *o.values()], origin="t")
    resolve_works(store)
    w = work_id_for(store, "arxiv:2503.19551")
    other = work_id_for(store, "arxiv:2503.19168")
    assert w and other and work_id_for(store, "openreview:UmUXPXHtdl") == w

    # A curator says the OpenReview record is another paper, and that the two arXiv
    # papers are one (contrived, but it must stick).
    new = split_work(store, w, ["openreview:UmUXPXHtdl"], who="ada", note="not the same")
    kept = merge_works(store, w, other, who="bob")
    assert kept == w
    for full in (False, True):
        # A later copy of the same OpenReview paper (another list) and a re-run.
        store.put_records(
            [
                rec(
                    "mylist",
                    f"copy{full}",
                    title=o["UmUXPXHtdl"].title,
                    ids={"openreview": "UmUXPXHtdl"},
                )
            ],
            origin=f"again{full}",
        )
        resolve_works(store, full=full)
        assert work_id_for(store, "openreview:UmUXPXHtdl") == new
        assert work_id_for(store, f"mylist:copy{full}") == new
        assert work_id_for(store, "arxiv:2503.19168") == w
        assert work_id_for(store, "arxiv:2503.19551") == w
    log = store.conn.execute("SELECT action, who FROM work_curations ORDER BY id").fetchall()
    assert log == [("split", "ada"), ("merge", "bob")]


def test_cli_resolve_work_and_record(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    with open_store(db) as s:
        s.put_records(
            [
                rec(
                    "arxiv",
                    "2401.00001",
                    arxiv_id="2401.00001",
                    title="T",
                    url="https://arxiv.org/abs/2401.00001",
                ),
                rec(
                    "crossref",
                    "x",
                    doi="10.1145/3292500.3330701",
                    ids={"arxiv": "2401.00001"},
                    title="T",
                ),
            ],
            origin="t",
        )
    run = CliRunner().invoke
    out = run(main, ["--db", str(db), "resolve", "--works-only", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["works"]["new_works"] == 1
    out = run(main, ["--db", str(db), "record", "crossref:x", "--json"])
    assert out.exit_code == 0, out.output
    wid = json.loads(out.output)["work_id"]
    out = run(main, ["--db", str(db), "work", wid, "--json"])
    assert out.exit_code == 0, out.output
    w = json.loads(out.output)
    assert [r["key"] for r in w["records"]] == ["arxiv:2401.00001", "crossref:x"]
    assert {"kind": "doi", "value": "10.1145/3292500.3330701"} in w["identifiers"]
    out = run(main, ["--db", str(db), "work", "W999"])
    assert out.exit_code == 3 and "no work W999" in out.output


@pytest.mark.parametrize("in_memory", [False, True], ids=["sql-lookup", "in-memory-index"])
def test_copies_in_separate_runs_join_when_the_original_bridges_them(
    store: SQLiteStore, in_memory: bool
) -> None:
    resolve_works = functools.partial(resolve_store, in_memory=in_memory)
    paper = feed({"2503.11692"})["2503.11692"]
    names = [a.name for a in paper.authors]
    assert paper.abstract
    short = rec("bibtex", "k1", title="FloPE", authors=names)
    no_title = rec("profile", "p1", abstract=paper.abstract, authors=names)
    ids = []
    for r in (short, no_title, paper):
        store.put_records([r], origin=r.key)
        resolve_works(store)
        ids.append(work_id_for(store, r.key))
    a, b, c = ids
    assert a != b  # nothing in common between a main title and an abstract
    assert c == a and work_id_for(store, "profile:p1") == a
    assert get_work(store, b)["work_id"] == a  # the absorbed work redirects
    resolve_works(store, full=True)
    assert {work_id_for(store, r.key) for r in (short, no_title, paper)} == {a}
    assert get_work(store, b)["work_id"] == a


def test_stored_rows_featurise_as_their_full_records(store: SQLiteStore) -> None:
    """The resolver reads stored JSON through a light view (`RecordLite`): its features
    must equal those of the fully decoded record, also where the store left derived
    plain-text fields out."""
    import numpy as np

    from paperdesk.resolve.works import make_docs
    from paperdesk.resolve.works_match import RecordLite
    from paperdesk.store.codec import decode_record

    f = feed({"2503.19551", "2503.19168", "2503.11692"})
    o = openreview({"UmUXPXHtdl"})
    odd = rec("crossref", "x", doi="10.1000/X", title="Café (extended) — a study", year=2020)
    store.put_records([*f.values(), *o.values(), odd], origin="t")
    rows = [bytes(d) for (d,) in store.conn.execute("SELECT data FROM records ORDER BY rowid")]
    lite = make_docs([RecordLite(d) for d in rows])
    full = [make_doc(decode_record(d)) for d in rows]
    assert len(lite) == 5
    for a, b in zip(lite, full, strict=True):
        for name in a.__dataclass_fields__:
            x, y = getattr(a, name), getattr(b, name)
            if isinstance(x, np.ndarray):
                assert np.array_equal(x, y) and len(x) == len(y), name
            else:
                assert x == y, name
    assert any(len(d.abstract_shingles) for d in lite)


def _first_feed(n: int) -> list[SourceRecord]:
    out: dict[str, SourceRecord] = {}
    with open_feed("rt") as f:
        for line in f:
            d = json.loads(line)
            if d["id"] not in out:
                out[d["id"]] = rec(
                    "arxiv", d["id"], title=d["title"], abstract=d["summary"],
                    authors=d["authors"], year=int(d["feed_date"][:4]),
                )
                if len(out) == n:
                    break
    return list(out.values())


@pytest.mark.parametrize("bucket", [64, 3])
def test_stored_candidates_as_counted_one_doc_at_a_time(
    store: SQLiteStore, bucket: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day's look-up of stored LSH candidates (keys asked in chunks, counted and
    ranked on arrays) gives what counting each doc's shared keys with a `Counter` gives,
    in the same order: ties to the candidate met first, keys taken in the order of their
    first stored row. With a small MAX_BUCKET, crowded keys are skipped; TOP_CANDIDATES
    is made small so that the cut (and ties at it) is met often."""
    from collections import Counter, defaultdict

    import numpy as np

    import paperdesk.resolve.works_match as works

    recs = _first_feed(1200)
    # Stored keys of a first run and of a later day's.
    store.put_records(recs[:600], origin="t")
    resolve_store(store)
    store.put_records(recs[600:1000], origin="t2")
    resolve_store(store)
    copies = [rec("bibtex", f"c{i}", title=r.title, authors=[a.name for a in r.authors][:2])
              for i, r in enumerate(recs[:150])]
    store.put_records([*copies, *recs[1000:]], origin="day")
    rows = [(int(r), int(q), bytes(d)) for r, q, d in store.conn.execute(
        "SELECT rowid, seq, data FROM records WHERE rowid > 1000 OR rowid % 7 = 0")]
    batch = works.prepare(rows, MATCH_THRESHOLD)
    monkeypatch.setattr(works, "MAX_BUCKET", bucket)
    monkeypatch.setattr(works, "TOP_CANDIDATES", 2)
    members = np.arange(len(batch.docs))

    want: dict[int, list[int]] = defaultdict(list)
    for i in members.tolist():
        for k in (*batch.tkeys[i].tolist(), *batch.akeys[i].tolist()):
            if k:
                want[k].append(i)
    by_key: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for k, rowid, work in store.conn.execute(
        "SELECT band_key, record_rowid, work_id FROM work_lsh ORDER BY rowid"
    ):
        if k in want:
            by_key[k].append((rowid, work))
    hits: dict[int, Counter[tuple[int, int]]] = defaultdict(Counter)
    for k, found in by_key.items():
        if len(found) <= bucket:
            for i in want[k]:
                hits[i].update(found)
    expected = {i: [rw for rw, _ in c.most_common(works.TOP_CANDIDATES)] for i, c in hits.items()}

    got = works.stored_candidates(store.works, members, batch.tkeys, batch.akeys)
    assert got == expected
    assert len(expected) > 300
    cut = [c for c in hits.values() if len(c) > 2]
    assert len(cut) > 15
    assert sum(len(set(c.values())) < len(c) for c in cut) > 5  # ties among them


def _work_tables(store: SQLiteStore) -> dict[str, list[tuple[object, ...]]]:
    """What the works stage decided, timestamps aside; the band keys in stored order,
    with their rowids."""
    c = store.conn
    return {
        "records": c.execute("SELECT * FROM work_records ORDER BY record_key").fetchall(),
        "keys": c.execute("SELECT * FROM work_keys ORDER BY kind, value").fetchall(),
        "works": c.execute(
            "SELECT id, indexed_title, indexed_abstract FROM works ORDER BY id"
        ).fetchall(),
        "redirects": c.execute(
            "SELECT old_id, new_id, reason FROM work_redirects ORDER BY old_id"
        ).fetchall(),
        "docs": c.execute("SELECT * FROM work_docs ORDER BY record_rowid").fetchall(),
        "lsh": c.execute(
            "SELECT rowid, band_key, record_rowid, work_id FROM work_lsh ORDER BY rowid"
        ).fetchall(),
    }


def _days(store: SQLiteStore, recs: list[SourceRecord]) -> None:
    """Three incremental days with copies of earlier papers, a curated merge and a split
    between them (so that moved records' stored keys change work)."""

    def copies(part: list[SourceRecord], tag: str) -> list[SourceRecord]:
        return [
            rec("bibtex", f"{tag}{i}", title=r.title, authors=[a.name for a in r.authors][:2])
            for i, r in enumerate(part)
        ]

    store.put_records(recs[:400], origin="d1")
    resolve_store(store)
    store.put_records([*recs[400:700], *copies(recs[:60], "a")], origin="d2")
    resolve_store(store)
    w0 = work_id_for(store, recs[0].key)
    w1 = work_id_for(store, recs[1].key)
    assert w0 and w1 and w0 != w1
    merge_works(store, w0, w1, who="ada")
    split_work(store, w0, [recs[1].key], who="bob")
    store.put_records([*recs[700:1000], *copies(recs[:120], "b")], origin="d3")
    report = resolve_store(store)
    assert report.by_content > 50


def test_store_with_a_day_table_folds_it_and_decides_as_before(tmp_path: Path) -> None:
    """A store whose last days' band keys sit in `work_lsh_day` (migration 042, dropped
    by 100 for buying < 10 % of the 1M day) gets them back into `work_lsh` in their order
    on open, with the rowids a store that never had the table holds, and its next days,
    through curated merges and splits, decide exactly as that store's."""
    recs = _first_feed(1100)
    old, new = open_store(tmp_path / "old.db"), open_store(tmp_path / "new.db")
    for s in (old, new):
        _days(s, recs)
    # The old layout: the rows of the days after the first run apart, as 042 kept them.
    c = old.conn
    cut = c.execute("SELECT MAX(rowid) FROM work_lsh").fetchone()[0] // 3
    c.execute(
        "CREATE TABLE work_lsh_day (band_key INTEGER NOT NULL, record_rowid INTEGER NOT NULL,"
        " work_id INTEGER NOT NULL)"
    )
    c.execute(
        "INSERT INTO work_lsh_day SELECT band_key, record_rowid, work_id FROM work_lsh"
        " WHERE rowid > ? ORDER BY rowid", (cut,)
    )
    c.execute("DELETE FROM work_lsh WHERE rowid > ?", (cut,))
    c.execute("DELETE FROM migrations WHERE name = '100_fold_work_lsh_day.sql'")
    moved = c.execute("SELECT COUNT(*) FROM work_lsh_day").fetchone()[0]
    assert moved > 100
    old.close()
    old = open_store(tmp_path / "old.db")
    assert not old.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'work_lsh_day'"
    ).fetchall()
    assert _work_tables(old) == _work_tables(new)
    for s in (old, new):
        s.put_records(recs[1000:], origin="again")
        resolve_store(s)
    assert _work_tables(old) == _work_tables(new)
    old.close()
    new.close()
