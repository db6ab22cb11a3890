"""JSON shapes shared by the CLI and the web layer (one place, so both agree).

Later stages enrich a record with what they derived (its `work_id`, each author's
`author_id`); those stages register an enricher here instead of the views knowing them.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from paperdesk.model import SourceRecord
from paperdesk.store.sqlite import SQLiteStore

Enricher = Callable[[SQLiteStore, dict[str, Any]], None]
ENRICHERS: list[Enricher] = []


def record_json(store: SQLiteStore, rec: SourceRecord, payloads: bool = False) -> dict[str, Any]:
    """The documented `record --json` shape (docs/cli.md)."""
    data = rec.to_dict()
    data.setdefault("work_id", None)
    for author in data["authors"]:
        author.setdefault("author_id", None)
    for enrich in ENRICHERS:
        enrich(store, data)
    if payloads:
        out = []
        for p in store.record_payloads(rec.key):
            body: bytes = p.pop("body")
            try:
                p["body"] = body.decode("utf-8")
            except UnicodeDecodeError:
                p["body_base64"] = base64.b64encode(body).decode()
            out.append(p)
        data["payloads"] = out
    return data
