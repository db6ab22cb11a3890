"""The data shapes every stage shares.

A parser turns a payload into `SourceRecord`s; `paperdesk.normalize.finish` fills the
normalised fields; the store keeps them with the raw payload. Later stages (works,
authors, subjects, search) read records back in this same shape, so nothing downstream
depends on which format a record came from.

Dates are ISO 8601 strings (`2025-03-18` or `2025-03-18T17:59:59Z`), never datetime
objects: they go to JSON and SQL unchanged and compare correctly as text.

Why `msgspec.Struct` and not dataclasses: ingest builds ~7 of these objects per record
(the record, its authors, its versions) and encodes each record as JSON, at 10,000+
records a second on two cores. A Struct is built, read and encoded in C: on the daily
feed parsing fell from 23 to 17 µs a record and encoding from 15 to 12. They behave like
the dataclasses they replace (keyword or positional construction, mutable fields, `==`,
pickling); copies go through `msgspec.structs.replace`, the field names through
`__struct_fields__`. An empty `[]`/`{}` default is a new one per instance.

They are `omit_defaults`: encoded (the store's `data` column), a field that holds its
default is left out and decoding gives it back (the nulls and empty lists were ~14 % of
the feed's `data` bytes); `to_dict`, the `--json` shape, lists every field.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Author(msgspec.Struct, omit_defaults=True):
    """One author position on one record, as the source gives it."""

    name: str
    """The name as the source wrote it (kept for display and provenance)."""
    given: str | None = None
    family: str | None = None
    affiliations: list[str] = []
    orcid: str | None = None
    email: str | None = None
    # -- normalised (filled by paperdesk.normalize.finish) --
    display: str | None = None
    """Unicode "Given Family", LaTeX accents decoded, spacing collapsed."""
    key: str | None = None
    """Blocking key: folded family name + first initial, e.g. `zhang j`."""


class Version(msgspec.Struct, omit_defaults=True):
    """One version of a record (arXiv v1, v2 …), as the source lists it."""

    version: str
    """`v1`, `v2`, …"""
    date: str | None = None
    size: str | None = None


class SourceRecord(msgspec.Struct, omit_defaults=True):
    """One record as one source published it.

    `source` and `source_id` form the record key `SOURCE:ID` that users type
    (`arxiv:2503.11677`, `openreview:05T81ScPFb`, `doi:10.1145/…`, `mylist:42`).
    `raw` is the payload exactly as received (bytes), `raw_format` the parser's name.
    """

    source: str
    source_id: str
    raw: bytes = b""
    raw_format: str = ""
    url: str | None = None
    title: str | None = None
    abstract: str | None = None
    """Original text for display (LaTeX and Markdown kept)."""
    authors: list[Author] = []
    submitted: str | None = None
    """Date of the first version / submission."""
    updated: str | None = None
    """Date of the latest version / last change."""
    published: str | None = None
    """Publication date in a journal or proceedings."""
    year: int | None = None
    categories: list[str] = []
    """Subject codes as the source lists them, primary first (may hold ACM/MSC codes)."""
    doi: str | None = None
    arxiv_id: str | None = None
    """arXiv id without version (`2401.01234`, `hep-th/9709111`)."""
    journal_ref: str | None = None
    venue: str | None = None
    comments: str | None = None
    license: str | None = None
    versions: list[Version] = []
    ids: dict[str, str] = {}
    """Other identifiers of the same paper: `openreview`, `dblp`, `s2`, `pmid`, `openalex` …"""
    feed_date: str | None = None
    """The day the record appeared in a listing / daily feed."""
    keywords: list[str] = []
    extra: dict[str, Any] = {}
    """Source-specific fields worth keeping that have no column (pdf url, bibtex type …)."""
    # -- normalised (filled by paperdesk.normalize.finish) --
    title_text: str | None = None
    """Title reduced to plain text for indexing."""
    abstract_text: str | None = None
    """Abstract reduced to plain text: LaTeX/Markdown stripped, hard line breaks joined."""

    @property
    def key(self) -> str:
        return f"{self.source}:{self.source_id}"

    @property
    def latest_version(self) -> str | None:
        return self.versions[-1].version if self.versions else None

    def to_dict(self, raw: bool = False) -> dict[str, Any]:
        """A JSON-ready dict of every field (the `--json` shape: defaults included, unlike
        the encoded Struct); the raw payload only when asked (it can be large)."""
        d = msgspec.structs.asdict(self)
        del d["raw"]
        d["authors"] = [msgspec.structs.asdict(a) for a in self.authors]
        d["versions"] = [msgspec.structs.asdict(v) for v in self.versions]
        d = msgspec.to_builtins(d)  # copies of the lists and dicts, as JSON types
        d["key"] = self.key
        if raw:
            d["raw"] = self.raw.decode("utf-8", errors="replace")
        return d
