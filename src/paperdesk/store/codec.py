"""The stored form of a source record: the JSON document every backend keeps in its
records table (`data`), and its decoding. Backend-neutral: no SQL here."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from paperdesk.model import Author, SourceRecord, Version


def _joined(text: str) -> str:
    """An abstract with its line breaks made spaces: what `abstract_text` is for most
    arXiv abstracts (those without markup), so then it is not stored a second time."""
    return text.replace("\n", " ").strip(" ")


# Stands in the `data` JSON for a plain-text field that a fixed rule gives back from its
# original (`title_text` = `title`, `abstract_text` = `_joined(abstract)`): a JSON `true`,
# which no text field can otherwise hold.
_DERIVED = True


_ENCODER = msgspec.json.Encoder()


def encode_record(record: SourceRecord) -> bytes:
    """The `data` column: every parsed field as JSON, encoded from the Structs in C.

    Left out: the raw payload (it lives in `payloads`), the plain-text forms of the title
    and abstract when a fixed rule gives them back (83 % of the feed's abstracts, ~1.2 KB a
    record, a quarter of the row), and every field (of the record, its authors and
    versions) that holds its default: the Structs are `omit_defaults`, so the nulls and
    empty lists — mostly each author's `affiliations`/`orcid`/`email` — cost nothing
    (feed: 2,971 -> 2,554 bytes a record, and msgspec encodes them in 10 % fewer
    instructions). The writer and the disk pay per byte. Every reader takes a missing key
    as its default (`decode_record` builds the Structs, whose defaults fill it; the
    readers of the raw JSON use `.get`). The fields are blanked for the call and restored.
    """
    raw, title_text, abstract_text = record.raw, record.title_text, record.abstract_text
    abstract = record.abstract
    record.raw = b""
    if title_text is not None and title_text == record.title:
        record.title_text = _DERIVED  # type: ignore[assignment]
    if abstract_text is not None and abstract is not None and abstract_text == _joined(abstract):
        record.abstract_text = _DERIVED  # type: ignore[assignment]
    try:
        return _ENCODER.encode(record)
    finally:
        record.raw, record.title_text, record.abstract_text = raw, title_text, abstract_text


_RECORD_FIELDS = frozenset(SourceRecord.__struct_fields__) - {"raw", "authors", "versions"}


def restore_derived_text(d: dict[str, Any]) -> dict[str, Any]:
    """Put back, in a `data` document as loaded, the plain-text fields `encode_record`
    left out; for readers that take fields from the JSON without building a record."""
    if d.get("title_text") is _DERIVED:
        d["title_text"] = d["title"]
    if d.get("abstract_text") is _DERIVED:
        d["abstract_text"] = _joined(d["abstract"])
    return d


def decode_record(data: bytes, raw: bytes = b"") -> SourceRecord:
    """Inverse of `encode_record` (rows written before it left anything out included)."""
    d = restore_derived_text(orjson.loads(data))
    authors = [Author(**a) for a in d.pop("authors", ())]
    versions = [Version(**v) for v in d.pop("versions", ())]
    if not _RECORD_FIELDS.issuperset(d):  # `raw: null`, or a field since retired
        d = {k: v for k, v in d.items() if k in _RECORD_FIELDS}
    return SourceRecord(raw=raw, authors=authors, versions=versions, **d)
