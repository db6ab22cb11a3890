"""Against the real arXiv: never in CI. Run with `PAPERDESK_LIVE=1 pytest -m live`.

They exist to notice when arXiv changes its endpoints or formats under us; they make two
or three polite requests (3 s apart, as arXiv asks).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paperdesk.harvest.arxiv_api import harvest_arxiv_api
from paperdesk.harvest.http import PoliteClient
from paperdesk.harvest.oai import harvest_oai
from paperdesk.store import open_store

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        os.environ.get("PAPERDESK_LIVE") != "1", reason="live test: set PAPERDESK_LIVE=1"
    ),
]


def test_live_arxiv_api_id_list(tmp_path: Path) -> None:
    with open_store(tmp_path / "live.db") as store, PoliteClient() as client:
        report = harvest_arxiv_api(store, client, id_list="1412.8544", max_results=1)
        assert report.complete and report.inserted == 1
        rec = store.get_record("arxiv:1412.8544")
        assert rec.title and "Kochen-Specker" in rec.title


def test_live_oai_get_one_day_of_a_small_set(tmp_path: Path) -> None:
    with open_store(tmp_path / "live.db") as store, PoliteClient() as client:
        report = harvest_oai(
            store, client, set_spec="q-fin", from_date="2024-01-02", until="2024-01-02"
        )
        assert report.complete and report.pages >= 1
