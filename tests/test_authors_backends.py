"""The author stage gives the same profiles on SQLite and on PostgreSQL.

The differential check of the author repository's two backends: the committed feed slice
through a full run (SQLite streaming it in worker processes with per-worker stage files,
PostgreSQL reading it in one process), an incremental day solved in forked workers, and a
merge and a split (the first folding the day's deltas), must leave the same signatures,
profile rows, member lists, name and block counts, samples and redirects, and answer the
same look-ups and pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import FEED_HEAD, FEED_SAMPLE, shared_file
from paperdesk import pipeline
from paperdesk.ingest import ingest_paths
from paperdesk.resolve import authors_context, authors_stream
from paperdesk.resolve.authors_curate import merge_authors, split_author
from paperdesk.resolve.authors_profiles import find_authors, profile, search_authors
from paperdesk.store import open_store
from paperdesk.store.base import Store
from paperdesk.store.rows import unpack_ids
from paperdesk.store.sql import authors_tables as tables


def _current(base: str, cols: str) -> str:
    """The rows of `base` as they are now: a day's delta rows stand for their base rows."""
    return (
        f"SELECT {cols} FROM {base}_delta UNION ALL SELECT {cols} FROM {base} b"  # noqa: S608
        f" WHERE NOT EXISTS (SELECT 1 FROM {base}_delta d WHERE d.author_id = b.author_id)"
    )


def _tables(store: Store) -> dict[str, Any]:
    """Every author table's content, by signature id rather than row id."""
    q = store.conn.execute  # type: ignore[attr-defined]  # a test reads the tables whole
    sigs = q(
        "SELECT id, sig_id, record_key, position, name, name_folded, block, author_id, given"
        " FROM author_signatures"
    ).fetchall()
    by_id = {r[0]: r[1] for r in sigs}
    return {
        "signatures": sorted(tuple(r[1:]) for r in sigs),
        "profiles": list(store.authors.profile_rows()),
        "members": sorted(
            (a, sorted(by_id[i] for i in unpack_ids(bytes(b))))
            for a, b in q(_current("author_members", "author_id, ids")).fetchall()
        ),
        "names": store.authors.counted_rows("author_names"),
        "blocks": store.authors.counted_rows("author_blocks"),
        "samples": sorted(
            (s, bytes(m), bytes(k), bytes(v))
            for s, m, k, v in q("SELECT sig_id, meta, keys, vec FROM author_samples").fetchall()
        ),
        "redirects": sorted(tuple(r) for r in q("SELECT old_id, new_id FROM author_redirects")),
        "curations": [(c.action, c.groups, c.apart, c.args) for c in store.authors.list_curations()],
    }


def _stats(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in ("seconds", "folded")}


@pytest.mark.postgres
def test_postgresql_gives_the_author_profiles_sqlite_gives(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    day_lines = shared_file(FEED_SAMPLE).read_bytes().splitlines(keepends=True)[:800]
    day_file = tmp_path / "day.jsonl"
    day_file.write_bytes(b"".join(day_lines))
    monkeypatch.setattr(authors_stream, "STREAM_MIN", 0)  # SQLite's full run in workers
    monkeypatch.setattr(authors_context, "DAY_MIN", 1)  # and both days in workers
    monkeypatch.setattr(tables, "FOLD_MIN", 0)  # the runs after the day fold its deltas
    monkeypatch.setattr(tables, "FOLD_SHARE", 10**6)
    seen: list[dict[str, Any]] = []
    for target in (str(tmp_path / "same.db"), pg_url):
        with open_store(target) as store:
            out: dict[str, Any] = {}
            ingest_paths(store, [shared_file(FEED_HEAD)])
            out["full"] = _stats(pipeline.run(store, ["works", "authors"])["authors"])
            out["after full"] = _tables(store)
            ingest_paths(store, [day_file])
            out["day"] = _stats(pipeline.run(store, ["works", "authors"])["authors"])
            out["after day"] = _tables(store)
            by_block: dict[str, list[Any]] = {}
            for p in store.authors.profile_rows():
                by_block.setdefault(p.block, []).append(p)
            block = max(by_block, key=lambda b: (len(by_block[b]), b))
            a, b = sorted(by_block[block], key=lambda p: (-p.n_records, p.author_id))[:2]
            assert store.authors.deltas_due()
            merged = merge_authors(store, a.author_id, b.author_id, who="carol")["author_id"]
            assert merged is not None
            keys = sorted({s.record_key for s in store.authors.signatures_of_author(merged)})
            out["split"] = split_author(store, merged, keys[:1], who="carol")
            out["after curations"] = _tables(store)
            page = profile(store, merged)
            for c in page["curations"]:
                c.pop("at")  # when it was made
            out["page"] = page
            out["find"] = find_authors(store, a.name)
            out["search"] = search_authors(store, block.split(" ")[0])
            seen.append(out)
    lite, pg = seen
    assert lite["day"]["signatures"] > 0 and lite["full"]["profiles_total"] > 1000
    for key in lite:
        assert pg[key] == lite[key], key

