"""`harvest arxiv-api` against a real HTTP server on 127.0.0.1 replaying real API captures.

The shared captures include a real paged query (`search_query=testing`, ten results a
page at start 0, 10, … 50), an empty result and a refused id (HTTP 400 with an Atom error
entry); each is served at the path and query it was recorded with.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest

from conftest import shared_file
from paperdesk.errors import HarvestError
from paperdesk.harvest.arxiv_api import harvest_arxiv_api
from paperdesk.harvest.http import PoliteClient, Politeness
from paperdesk.store import SQLiteStore
from replay_server import ReplayServer, Reply

PAGES = [f"q_testing_s{s}_m10" for s in (0, 10, 20, 30, 40, 50)]


def capture(stem: str) -> tuple[str, Reply, str]:
    """(path?query as recorded, the reply, the body) for an api-atom capture."""
    folder = shared_file("arxiv/api-atom")
    (path,) = folder.glob(f"{stem}_*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    url = urlsplit(data["url"])
    body = data["body"]
    headers = [("Content-Type", "application/atom+xml; charset=utf-8")]
    return f"{url.path}?{url.query}", Reply(data["status_code"], body.encode(), headers), body


def entry_ids(body: str) -> set[str]:
    """arXiv ids of a feed's entries, read independently of the parser under test."""
    return {
        re.sub(r"v\d+$", "", m)
        for m in re.findall(r"<entry>\s*<id>https?://arxiv\.org/abs/([^<]+)</id>", body)
    }


def client(retries: int = 2) -> PoliteClient:
    p = Politeness(min_interval=0.0, timeout=5.0, retries=retries, backoff=0.0)
    return PoliteClient(agent="paperdesk-test/1", politeness=p)


def test_pages_through_a_real_query(replay: ReplayServer, store: SQLiteStore) -> None:
    expected: set[str] = set()
    for stem in PAGES:
        where, reply, body = capture(stem)
        replay.add(where, reply)
        expected |= entry_ids(body)
    assert len(expected) > 50  # six real pages of ten
    with client() as c:
        report = harvest_arxiv_api(
            store,
            c,
            "testing",
            max_results=60,
            page_size=10,
            sort_by="relevance",
            url=replay.url + "/api/query",
        )
    assert report.complete and report.pages == 6 and report.requests == 6
    assert [s.query["start"] for s in replay.seen] == ["0", "10", "20", "30", "40", "50"]
    assert {r.source_id for _, r in store.iter_records("arxiv")} == expected


def test_interrupted_query_resumes_at_the_stored_offset(
    replay: ReplayServer, store: SQLiteStore
) -> None:
    bodies = {}
    for stem in PAGES:
        where, reply, body = capture(stem)
        bodies[stem] = body
        if stem == "q_testing_s30_m10":
            replay.add(where, Reply(502, b"bad gateway"))
        else:
            replay.add(where, reply)
    url = replay.url + "/api/query"
    with client(retries=1) as c, pytest.raises(HarvestError, match="HTTP 502"):
        harvest_arxiv_api(
            store, c, "testing", max_results=60, page_size=10, sort_by="relevance", url=url
        )
    first_three = set().union(*(entry_ids(bodies[s]) for s in PAGES[:3]))
    assert {r.source_id for _, r in store.iter_records()} == first_three

    where, reply, _ = capture("q_testing_s30_m10")
    replay.replace(where, reply)
    before = len(replay.seen)
    with client() as c:
        report = harvest_arxiv_api(
            store, c, "testing", max_results=60, page_size=10, sort_by="relevance", url=url
        )
    assert report.resumed == "offset" and report.complete
    assert [s.query["start"] for s in replay.seen[before:]] == ["30", "40", "50"]
    everything = set().union(*(entry_ids(b) for b in bodies.values()))
    assert {r.source_id for _, r in store.iter_records()} == everything


def test_refused_query_names_the_api_error(replay: ReplayServer, store: SQLiteStore) -> None:
    where, reply, _ = capture("id_abc_s0_m100")
    assert reply.status == 400
    replay.add(where, reply)
    with client() as c, pytest.raises(HarvestError, match="incorrect id format for abc"):
        harvest_arxiv_api(
            store,
            c,
            id_list="abc",
            max_results=100,
            page_size=100,
            sort_by="relevance",
            url=replay.url + "/api/query",
        )
    assert store.count_records() == 0 and len(replay.seen) == 1  # a 400 is not retried


def test_empty_result_is_complete(replay: ReplayServer, store: SQLiteStore) -> None:
    where, reply, _ = capture("id_0000.0000_s0_m100")
    replay.add(where, reply)
    with client() as c:
        report = harvest_arxiv_api(
            store,
            c,
            id_list="0000.0000",
            max_results=100,
            page_size=100,
            sort_by="relevance",
            url=replay.url + "/api/query",
        )
    assert report.complete and report.records == 0 and store.count_records() == 0
