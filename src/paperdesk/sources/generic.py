"""Generic paper lists: JSON lines (or a JSON list) and CSV with any subset of the columns
`source, id, title, abstract, authors, year | date, categories, doi, arxiv_id, url, venue`.

The record key is `<source>:<id>` from the record's own fields. When a record has no
`source`, the file's name decides: the lower-cased stem without `.csv/.jsonl/.json/.gz`
suffixes, characters other than letters, digits, `.`, `_`, `-` replaced by `-`
(`DBLP2.csv` → `dblp2`). When it has no `id`, the record's 1-based row number in the file
is its id (stable as long as the file is not reordered). A `source` containing `:` is
refused (it would make the key ambiguous).

Everything else is optional: a record may lack a title or authors (abstract-only records
exist in the wild) and is still kept. `authors` is a list (of names, or of objects with
`name`), or one string separated by `;`, else by `, ` and ` and `. `categories` is a list
or a space/comma separated string. `year` may be an int or text; `date` (ISO) becomes the
publication date. Columns we do not know go to `extra`.

HTML character references (`J&#246;rg`, `&mdash;`), which some exports (ACM's) write
instead of characters, are decoded in title, abstract, authors and venue — before the
author string is split, since their `;` is no separator. `raw` keeps them as written.

Encodings: JSON must be UTF-8 (a bad line is reported with its line number). CSV is read
as UTF-8; a CSV field that is not valid UTF-8 is decoded as Windows-1252/Latin-1 instead
(the encoding such exports nearly always use), and the record says so in
`extra["encoding_fallback"]` — nothing is dropped. `raw` holds the record's line(s) exactly
as in the file (for CSV, behind the header line, so the payload is self-describing).
"""

from __future__ import annotations

import csv
import html
import io
import re
import sys
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize.ids import arxiv_id, normalize_doi
from paperdesk.sources._jsonio import (
    MAX_LINE_BYTES,
    TOO_LONG_ERROR,
    iso_date,
    objects,
    text,
    texts,
    year_of,
)

NAME = "generic"

KNOWN = (
    "source", "id", "title", "abstract", "authors", "year", "date",
    "categories", "doi", "arxiv_id", "url", "venue",
)  # fmt: skip

# One CSV field may be large (an abstract, a full author list), never unbounded.
CSV_FIELD_LIMIT = 16 * 1024 * 1024
# Heuristic fallback for undecodable CSV fields.
FALLBACK_ENCODING = "cp1252"

_JSON_KEY = re.compile(rb'"(source|id|title|abstract|authors|doi|arxiv_id)"\s*:')


def sniff(head: bytes, filename: str) -> bool:
    """JSON objects or a CSV header that name at least one of our columns (the
    `title`/`abstract` field, or `id` plus another known column)."""
    s = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if s[:1] in (b"{", b"["):
        return bool(_JSON_KEY.search(s))
    first = s.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    try:
        header = next(csv.reader([first]))
    except (csv.Error, StopIteration):
        return False
    cols = {c.strip().lower() for c in header}
    known = cols & set(KNOWN)
    return bool({"title", "abstract"} & known) or len(known) >= 2


def default_source(origin: str) -> str:
    """The source name a file gives its records when they carry none (`DBLP2.csv` → `dblp2`)."""
    name = PurePath(origin).name.lower()
    for suffix in (".gz", ".bz2", ".xz", ".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".txt"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    name = re.sub(r"[^a-z0-9._-]+", "-", name).strip("-.")
    return name or "generic"


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    head = stream.read(4096)
    while head.isspace() and len(head) < 1 << 20:
        more = stream.read(4096)
        if not more:
            break
        head += more
    whole = io.BufferedReader(_Prefixed(head, stream))
    if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["):
        yield from _parse_json(whole, origin)
    else:
        yield from _parse_csv(whole, origin)


class _Prefixed(io.RawIOBase):
    """The bytes already read for format detection, then the rest of the stream (works
    for pipes and gzip streams, which cannot seek back)."""

    def __init__(self, head: bytes, rest: BinaryIO):
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)


def _parse_json(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    fallback = default_source(origin)
    # A list of records is unpacked; any other list is one bad record, reported once.
    unwrap = lambda v: v if isinstance(v, list) and all(isinstance(x, dict) for x in v) else None  # noqa: E731
    for got in objects(stream, origin, unwrap, "a record"):
        if isinstance(got, ParseError):
            yield got
        else:
            item, d = got
            yield _record(d, item.raw, item.record_no, fallback, origin)


class _LineTap:
    """Feeds text lines to csv.reader and remembers the ones the current row used, so each
    row's raw payload is its exact text."""

    def __init__(self, text_in: io.TextIOWrapper):
        self._text_in = text_in
        self.taken: list[str] = []

    def __iter__(self) -> _LineTap:
        return self

    def __next__(self) -> str:
        # Capped like every line reader (`_jsonio.MAX_LINE_BYTES`): a longer line is
        # skipped unread and rejected as a malformed row, memory stays bounded.
        line = self._text_in.readline(MAX_LINE_BYTES + 1)
        if len(line) > MAX_LINE_BYTES and not line.endswith(("\n", "\r")):
            while (rest := self._text_in.readline(1 << 20)) and not rest.endswith(("\n", "\r")):
                pass
            raise csv.Error(TOO_LONG_ERROR.replace("bytes", "characters"))
        if not line:
            raise StopIteration
        self.taken.append(line)
        return line


def _fix(value: str) -> tuple[str, bool]:
    """Undo surrogateescape: a field that was not UTF-8 is decoded with the fallback."""
    try:
        value.encode("utf-8")
        return value, False
    except UnicodeEncodeError:
        data = value.encode("utf-8", errors="surrogateescape")
        try:
            return data.decode(FALLBACK_ENCODING), True
        except UnicodeDecodeError:
            return data.decode("latin-1"), True


def _parse_csv(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    csv.field_size_limit(max(csv.field_size_limit(), min(CSV_FIELD_LIMIT, sys.maxsize)))
    # newline="": split lines only at \r, \n, \r\n and hand them over untranslated, as
    # the csv module requires (quoted fields may hold line breaks of any kind).
    text_in = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="surrogateescape", newline="")
    try:
        yield from _csv_rows(text_in, origin)
    finally:
        text_in.detach()  # leave the caller's stream open


def _csv_rows(text_in: io.TextIOWrapper, origin: str) -> Iterator[SourceRecord | ParseError]:
    tap = _LineTap(text_in)
    # strict: a quote left open must be an error, not a field that silently swallows
    # every following row up to the end of the file.
    reader = csv.reader(tap, strict=True)
    try:
        header_row = next(reader)
    except StopIteration:
        raise ParseError("empty CSV file: no header line", origin) from None
    except csv.Error as exc:
        raise ParseError(f"unreadable CSV header: {exc}", origin) from None
    header = [_fix(h)[0].strip().lower() for h in header_row]
    header_raw = "".join(tap.taken)
    if not any(h in KNOWN for h in header):
        raise ParseError(f"CSV header names none of the known columns ({', '.join(KNOWN)})", origin)
    fallback = default_source(origin)
    row_no = 0
    while True:
        tap.taken = []
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            row_no += 1
            lines = len(tap.taken)
            more = f" (the row ran over {lines} lines)" if lines > 1 else ""
            yield ParseError(f"malformed CSV row: {exc}{more}", origin, row_no)
            continue
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        row_no += 1
        raw_text = header_raw + "".join(tap.taken)
        raw = raw_text.encode("utf-8", errors="surrogateescape")
        if len(row) > len(header):
            yield ParseError(f"row has {len(row)} fields, the header {len(header)}", origin, row_no)
            continue
        values: dict[str, Any] = {}
        fell_back = False
        for name, cell in zip(header, row, strict=False):
            fixed, fb = _fix(cell)
            fell_back = fell_back or fb
            if name and fixed.strip():
                values[name] = fixed
        rec = _record(values, raw, row_no, fallback, origin)
        if isinstance(rec, SourceRecord) and fell_back:
            rec.extra["encoding_fallback"] = FALLBACK_ENCODING
        yield rec


_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def unescape(value: Any) -> str | None:
    """`text(value)` with HTML character references decoded (only when there are any)."""
    s = text(value)
    if s and "&" in s and _ENTITY.search(s):
        s = html.unescape(s).strip() or None
    return s


def split_authors(value: Any) -> list[Author]:
    """Authors from a list (names or {"name": ...} objects) or one separated string."""
    if isinstance(value, list):
        out = []
        for v in value:
            if isinstance(v, dict):
                name = text(v.get("name"))
                if name:
                    out.append(
                        Author(
                            name=name,
                            given=text(v.get("given")),
                            family=text(v.get("family")),
                            affiliations=texts(v.get("affiliations")),
                            orcid=text(v.get("orcid")),
                        )
                    )
            elif text(v):
                out.append(Author(name=str(text(v))))
        return out
    s = unescape(value)
    if not s:
        return []
    parts = s.split(";") if ";" in s else re.split(r",\s+|\s+and\s+", s)
    return [Author(name=p.strip()) for p in parts if p.strip()]


def split_categories(value: Any) -> list[str]:
    if isinstance(value, list):
        return texts(value)
    s = text(value)
    return [c for c in re.split(r"[\s,;]+", s) if c] if s else []


def _record(
    d: dict[str, Any], raw: bytes, row_no: int, fallback: str, origin: str
) -> SourceRecord | ParseError:
    source = text(d.get("source")) or fallback
    if ":" in source or any(c.isspace() for c in source):
        return ParseError(f"source {source[:80]!r} must not contain ':' or spaces", origin, row_no)
    source_id = text(d.get("id")) or str(row_no)
    date = iso_date(d.get("date"))
    year = year_of(d.get("year")) or year_of(date)
    doi_in = text(d.get("doi"))
    ax_in = text(d.get("arxiv_id"))
    extra = {
        k: v
        for k, v in d.items()
        if k not in KNOWN and isinstance(k, str) and v not in (None, "", [], {})
    }
    if d.get("date") is not None and not date:
        extra["date"] = d.get("date")
    return SourceRecord(
        source=source,
        source_id=source_id,
        raw=raw,
        raw_format=NAME,
        url=text(d.get("url")),
        title=unescape(d.get("title")),
        abstract=unescape(d.get("abstract")),
        authors=split_authors(d.get("authors")),
        published=date,
        year=year,
        categories=split_categories(d.get("categories")),
        doi=normalize_doi(doi_in) or doi_in,
        arxiv_id=arxiv_id(ax_in) or ax_in,
        venue=unescape(d.get("venue")),
        extra=extra,
    )
