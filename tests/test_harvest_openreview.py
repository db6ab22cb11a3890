"""`harvest openreview` against a real HTTP server on 127.0.0.1.

The shared OpenReview sample is a crawler's dump of real API v1 notes (two submissions of
`NIPS.cc/2018/Workshop/CDNNRIA`, each with its revisions and replies attached by the
crawler). The replay serves those two real submission notes as the API v1 did — pages of
`{"notes": [...], "count": 2}`, one note a page, at `/notes?invitation=…/-/Blind_Submission`
— without the crawler's added `revisions`/`notes` keys. API v2 answers an empty list for
the venue (what it says for a venue it does not host), which sends the harvester to v1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from conftest import shared_file
from paperdesk.errors import HarvestError
from paperdesk.harvest.http import PoliteClient, Politeness
from paperdesk.harvest.openreview import checkpoint_name, harvest_openreview
from paperdesk.store import SQLiteStore
from replay_server import ReplayServer, Reply

VENUE = "NIPS.cc/2018/Workshop/CDNNRIA"
INVITATION = f"{VENUE}/-/Blind_Submission"
JSON = [("Content-Type", "application/json; charset=utf-8")]


def real_notes() -> list[dict[str, Any]]:
    dump = json.loads(shared_file("openreview/api-v1-notes.json").read_text(encoding="utf-8"))
    notes = []
    for sub in dump[0]["submissions"]:
        note = {k: v for k, v in sub.items() if k not in ("revisions", "notes")}
        assert note["invitation"] == INVITATION
        notes.append(note)
    return notes


def v1_page(offset: int) -> str:
    return f"/v1/notes?invitation={quote(INVITATION)}&offset={offset}&limit=1"


def serve(replay: ReplayServer, notes: list[dict[str, Any]]) -> None:
    empty = json.dumps({"notes": [], "count": 0}).encode()
    replay.add(
        f"/v2/notes?content.venueid={quote(VENUE)}&offset=0&limit=1", Reply(200, empty, JSON)
    )
    for i, note in enumerate(notes):
        body = json.dumps({"notes": [note], "count": len(notes)}).encode()
        replay.add(v1_page(i), Reply(200, body, JSON))


def client(retries: int = 2) -> PoliteClient:
    p = Politeness(min_interval=0.0, timeout=5.0, retries=retries, backoff=0.0)
    return PoliteClient(agent="paperdesk-test/1", politeness=p)


def run(store: SQLiteStore, replay: ReplayServer, retries: int = 2) -> Any:
    with client(retries) as c:
        return harvest_openreview(
            store, c, VENUE, api2=replay.url + "/v2", api1=replay.url + "/v1", page_size=1
        )


def test_falls_back_to_v1_and_pages_by_offset(replay: ReplayServer, store: SQLiteStore) -> None:
    notes = real_notes()
    serve(replay, notes)
    report = run(store, replay)
    assert report.complete and report.pages == 2 and report.inserted == 2
    assert [(s.path, s.query.get("offset")) for s in replay.seen] == [
        ("/v2/notes", "0"),
        ("/v1/notes", "0"),
        ("/v1/notes", "1"),
    ]
    keys = {r.key for _, r in store.iter_records("openreview")}
    assert keys == {f"openreview:{n['forum']}" for n in notes}
    rec = store.get_record("openreview:HkghWScuoQ")
    assert rec.title == "Targeted Dropout"
    cp = store.get_checkpoint(checkpoint_name(VENUE)) or {}
    assert cp["api"] == "v1" and cp["offset"] == 2 and cp["done"] is True


def test_interrupted_venue_resumes_at_the_offset(replay: ReplayServer, store: SQLiteStore) -> None:
    notes = real_notes()
    serve(replay, notes)
    replay.replace(v1_page(1), Reply(500, b"oops"))
    with pytest.raises(HarvestError, match="HTTP 500"):
        run(store, replay, retries=1)
    assert store.count_records() == 1
    replay.replace(v1_page(1), Reply(200, json.dumps({"notes": [notes[1]], "count": 2}).encode()))
    before = len(replay.seen)
    report = run(store, replay)
    assert report.resumed == "offset" and report.complete and report.inserted == 1
    assert [(s.path, s.query.get("offset")) for s in replay.seen[before:]] == [("/v1/notes", "1")]
    assert store.count_records() == 2


def test_v2_venue_is_harvested_without_fallback(replay: ReplayServer, store: SQLiteStore) -> None:
    """API v2 shape: the hand-written v2 page of the parser tests (two papers and a review
    reply, `count: 3`), served whole at the v2 query; v1 is never asked."""
    page = (Path(__file__).parent / "data" / "openreview" / "api-v2-notes.json").read_bytes()
    venue = "3DV/2025/Conference"
    replay.add(
        f"/v2/notes?content.venueid={quote(venue)}&offset=0&limit=1000", Reply(200, page, JSON)
    )
    with client() as c:
        report = harvest_openreview(
            store, c, venue, api2=replay.url + "/v2", api1=replay.url + "/v1"
        )
    assert report.complete and report.pages == 1 and len(replay.seen) == 1
    assert {r.key for _, r in store.iter_records()} == {
        "openreview:05T81ScPFb",
        "openreview:k9QvT2mWbN",
    }
    cp = store.get_checkpoint(checkpoint_name(venue)) or {}
    assert cp["api"] == "v2" and cp["offset"] == 3 and cp["done"] is True
