"""Combining two payloads of one source record (same `SOURCE:ID`).

arXiv sends a paper many times — the daily feed, OAI-PMH in two formats, the API, an
`.abs` file, v1 then v3. The store keeps every raw payload; this decides what the record's
parsed fields are: the payload describing the newest version wins, empty fields are filled
from the other, and version lists are united so the history is never lost.
"""

from __future__ import annotations

import msgspec

from paperdesk.model import SourceRecord, Version


def _vnum(v: str | None) -> int:
    if v and v[:1] in "vV" and v[1:].isdigit():
        return int(v[1:])
    return 0


def _rank(r: SourceRecord) -> tuple[int, str, int]:
    """Order payloads: newest version first, then latest update date, then richness."""
    return (_vnum(r.latest_version), r.updated or r.submitted or "", len(r.versions))


def merge_versions(a: list[Version], b: list[Version]) -> list[Version]:
    """Union by version label; a later payload fills in missing dates and sizes."""
    by: dict[str, Version] = {}
    for v in [*a, *b]:
        have = by.get(v.version)
        if have is None:
            by[v.version] = v
        else:
            by[v.version] = Version(v.version, have.date or v.date, have.size or v.size)
    return sorted(by.values(), key=lambda v: (_vnum(v.version), v.version))


_SKIP = {"source", "source_id", "raw", "raw_format", "versions", "ids", "extra"}


def merge_records(old: SourceRecord, new: SourceRecord) -> SourceRecord:
    """The record's fields after `new` arrives for a key that already holds `old`."""
    primary, other = (new, old) if _rank(new) >= _rank(old) else (old, new)
    merged = msgspec.structs.replace(primary)
    for name in SourceRecord.__struct_fields__:
        if name in _SKIP:
            continue
        if getattr(merged, name) in (None, "", [], {}):
            setattr(merged, name, getattr(other, name))
    merged.versions = merge_versions(old.versions, new.versions)
    if merged.versions:
        merged.submitted = merged.versions[0].date or merged.submitted
        merged.updated = merged.versions[-1].date or merged.updated
    merged.ids = {**other.ids, **primary.ids}
    merged.extra = {**other.extra, **primary.extra}
    # The earliest day a record was seen in a feed is the day it "appeared".
    days = [d for d in (old.feed_date, new.feed_date) if d]
    merged.feed_date = min(days) if days else None
    merged.raw, merged.raw_format = new.raw, new.raw_format
    return merged
