"""OpenReview notes, API v1 and v2, as a JSON document or JSON lines.

Shapes accepted (all real ones): an API response `{"notes": [...], "count": N}`, a bare
list of notes, one note a line, and crawler dumps that nest notes as
`[{"venue", "year", "submissions": [note + "revisions"/"notes"]}]` (the shape of the shared
sample). API v1 gives content fields plainly (`content.title = "..."`); API v2 wraps each
one as `{"value": ...}` — both are read by the same code through `_field`.

Only papers become records: a note is a paper when `forum == id` (the forum's root note).
Replies, reviews, decisions and revisions (which have their own ids in the same forum) are
skipped silently: they are not papers and not errors. The key is `openreview:<forum id>`,
the same key `papercopilot` gives the same paper, so both inputs land on one record.
Author profile ids (`~Jane_Doe1`, or e-mails in old v1 notes) go to `extra["authorids"]`,
aligned with `authors` (None where a position has no id).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.sources._jsonio import epoch_ms_to_iso, obj, objects, objs, text, texts

NAME = "openreview"

FORUM_URL = "https://openreview.net/forum?id="
SITE = "https://openreview.net"

_SNIFF_FORUM = re.compile(rb'"forum"\s*:\s*"')
_SNIFF_INVITATION = re.compile(rb'"(?:invitation|invitations|replyto|domain)"\s*:')


def sniff(head: bytes, filename: str) -> bool:
    """Notes always carry `forum` next to `invitation(s)`/`replyto`/`domain`: no other
    format we read has that pair."""
    return bool(_SNIFF_FORUM.search(head) and _SNIFF_INVITATION.search(head))


def _unwrap(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        out: list[Any] = []
        for v in value:
            inner = _unwrap(v) if isinstance(v, dict) and "id" not in v else None
            out.extend(inner if inner is not None else [v])
        return out
    if isinstance(value, dict) and "id" not in value:
        for key in ("notes", "submissions"):
            if isinstance(value.get(key), list):
                return _unwrap(value[key])
    return None


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    for got in objects(stream, origin, _unwrap, "a note"):
        if isinstance(got, ParseError):
            yield got
            continue
        item, note = got
        note_id, forum = text(note.get("id")), text(note.get("forum"))
        if not note_id:
            yield ParseError("note has no id", origin, item.record_no)
            continue
        if forum and forum != note_id:
            continue  # a reply, review or revision: not a paper
        yield _record(note, note_id, item.raw)


def _field(content: dict[str, Any], key: str) -> Any:
    """A content field in either API version (v2 wraps values as {"value": ...})."""
    v = content.get(key)
    if isinstance(v, dict) and "value" in v:
        return v["value"]
    return v


def _record(note: dict[str, Any], forum: str, raw: bytes) -> SourceRecord:
    content = obj(note.get("content"))
    names = texts(_field(content, "authors"))
    raw_ids = _field(content, "authorids")
    ids_list = raw_ids if isinstance(raw_ids, list) else []
    authorids = [text(ids_list[i]) if i < len(ids_list) else None for i in range(len(names))]
    invitations = texts(note.get("invitations")) or texts(note.get("invitation"))
    venueid = text(_field(content, "venueid")) or text(note.get("domain"))
    if not venueid and invitations:
        venueid = invitations[0].split("/-/")[0]
    keywords = _field(content, "keywords")
    extra: dict[str, Any] = {}
    if any(authorids):
        extra["authorids"] = authorids
    if venueid:
        extra["venueid"] = venueid
    if invitations:
        extra["invitations"] = invitations
    pdf = text(_field(content, "pdf"))
    if pdf:
        extra["pdf"] = SITE + pdf if pdf.startswith("/") else pdf
    for key, name in (("TL;DR", "tldr"), ("primary_area", "primary_area")):
        v = text(_field(content, key))
        if v:
            extra[name] = v
    number = text(note.get("number"))
    if number:
        extra["number"] = number
    revisions = [
        {"id": text(r.get("id")), "date": epoch_ms_to_iso(r.get("tcdate") or r.get("cdate"))}
        for r in objs(note.get("revisions"))
    ]
    if revisions:
        extra["revisions"] = sorted(revisions, key=lambda r: r["date"] or "")
    return SourceRecord(
        source="openreview",
        source_id=forum,
        raw=raw,
        raw_format=NAME,
        url=FORUM_URL + forum,
        title=text(_field(content, "title")),
        abstract=text(_field(content, "abstract")),
        authors=[Author(name=n) for n in names],
        submitted=epoch_ms_to_iso(note.get("cdate")) or epoch_ms_to_iso(note.get("tcdate")),
        updated=epoch_ms_to_iso(note.get("tmdate")) or epoch_ms_to_iso(note.get("mdate")),
        published=epoch_ms_to_iso(note.get("pdate")),
        venue=text(_field(content, "venue")),
        license=text(note.get("license")),
        keywords=texts(keywords) if isinstance(keywords, list) else _split_keywords(keywords),
        ids={"openreview": forum},
        extra=extra,
    )


def _split_keywords(value: Any) -> list[str]:
    s = text(value)
    if not s:
        return []
    return [k.strip() for k in re.split(r"[;,]", s) if k.strip()]
