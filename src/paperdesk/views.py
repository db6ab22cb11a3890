"""JSON shapes shared by the CLI and the web layer (one place, so both agree).

A record's JSON carries what later stages derived for it: its `work_id` (resolve), each
author's `author_id` (author profiles), its `subjects` marked given or predicted and its
other `classification_codes` (classify). Each is null / empty until that stage has run.
"""

from __future__ import annotations

import base64
from typing import Any

from paperdesk.model import SourceRecord
from paperdesk.resolve.works_curate import work_id_for
from paperdesk.store import authors as author_db
from paperdesk.store.sqlite import SQLiteStore


def record_json(store: SQLiteStore, rec: SourceRecord, payloads: bool = False) -> dict[str, Any]:
    """The documented `record --json` shape (docs/cli.md)."""
    conn = store.conn
    data = rec.to_dict()
    key = rec.key
    data["work_id"] = work_id_for(store, key)
    ids = {a["position"]: a["author_id"] for a in author_db.record_authors(conn, key)}
    for pos, author in enumerate(data["authors"]):
        author["author_id"] = ids.get(pos)
    data["subjects"] = store.subjects.of_records([key]).get(key, [])
    data["classification_codes"] = store.subjects.codes_of(key)
    if payloads:
        out = []
        for p in store.record_payloads(key):
            body: bytes = p.pop("body")
            try:
                p["body"] = body.decode("utf-8")
            except UnicodeDecodeError:
                p["body_base64"] = base64.b64encode(body).decode()
            out.append(p)
        data["payloads"] = out
    return data
