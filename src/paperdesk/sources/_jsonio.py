"""Reading JSON inputs that come either as one document or as JSON lines, and small
defensive accessors for the hostile, loosely typed dicts they contain.

Why one reader for both shapes: every JSON API we ingest (OpenReview, Crossref, OpenAlex,
Semantic Scholar) is saved by users both as a raw response (one document, often a page of
results) and as JSON lines (one object a line, the shape of dumps and our own exports).
JSON lines are streamed line by line, so a multi-GB dump never sits in memory; a single
document has to be read whole (that is how JSON works), which is fine for API responses.

Record numbers are 1-based: the line number for JSON lines, the item's position in the
document's list of items for a document (the parser decides what its items are).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from paperdesk.errors import ParseError

# A whole JSON document larger than this is refused: API responses are megabytes, so this
# only stops a runaway input from exhausting memory.
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
# A line longer than this is rejected while it is read, before it is parsed and without
# holding it: memory stays bounded whatever the input (a 300 MiB line in a 306 KB gzip
# took 1.28 GB before). A record is at most 2 MB (`normalize.LIMITS["raw"]`); a line holds
# one record, a page of them (an API response saved on one line) or a document's opening.
MAX_LINE_BYTES = 32 * 1024 * 1024
TOO_LONG = b"\x00paperdesk: line too long\n"
"""What `capped_lines` yields in place of a line over the limit (it cannot be JSON)."""
TOO_LONG_ERROR = f"line longer than {MAX_LINE_BYTES} bytes: rejected without reading it"

BOM = b"\xef\xbb\xbf"


@dataclass
class Line:
    """One JSON value read from an input: `value` is None when `error` says why it failed."""

    record_no: int
    raw: bytes
    value: Any = None
    error: str | None = None


def read_json(stream: BinaryIO, origin: str) -> tuple[str, Iterator[Line]]:
    """`("document", lines)` or `("lines", lines)` for a JSON input.

    A document yields one `Line` (record_no 1) holding the parsed value; JSON lines yield
    one `Line` per non-blank line, a bad line carrying its error instead of a value.
    Raises ParseError when the input is neither a JSON document nor JSON lines.

    The first line decides: a complete JSON value means JSON lines. A first line that
    opens or continues a structure (`[`, `{`, `"notes": [` …) means a document. Any other
    bad first line is a broken JSON line when the next line parses on its own — decided
    without reading further, so a multi-GB JSON-lines file with a bad first line streams.
    """
    first = read_line(stream)
    if first.startswith(BOM):
        first = first[len(BOM) :]
    no = 1
    while first and not first.strip():
        no += 1
        first = read_line(stream)
    if not first:
        raise ParseError("empty input: no JSON found", origin)
    error = _error_of(first)
    if error is None or first is TOO_LONG:
        return "lines", _lines(stream, [(no, first)])
    if not first.rstrip().endswith((b"[", b"{", b",", b":")):
        second, gap = read_line(stream), 1
        while second and not second.strip():
            first += second
            second, gap = read_line(stream), gap + 1
        if second is TOO_LONG or (second and _error_of(second) is None):
            return "lines", _lines(stream, [(no, first.strip()), (no + gap, second)])
        first += second
    parts, size = [first], len(first)
    for line in capped_lines(stream):  # a document's lines are capped too
        if line is TOO_LONG:
            raise ParseError(f"JSON document with a {TOO_LONG_ERROR}", origin)
        size += len(line)
        if size > MAX_DOCUMENT_BYTES:
            raise ParseError(f"JSON document larger than {MAX_DOCUMENT_BYTES} bytes", origin)
        parts.append(line)
    data = b"".join(parts)
    del parts
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ParseError(f"not valid JSON: {exc}", origin) from None
    return "document", iter([Line(1, data, doc)])


def read_line(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> bytes:
    """The next line (b"" at the end), or `TOO_LONG` for a line over `limit` bytes, whose
    rest is skipped a megabyte at a time: never more than `limit` bytes of it are held."""
    line = stream.readline(limit + 1)
    if len(line) <= limit or line.endswith(b"\n"):
        return line
    while True:
        rest = stream.readline(1 << 20)
        if not rest or rest.endswith(b"\n"):
            return TOO_LONG


def capped_lines(stream: BinaryIO, limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """`for line in stream` with each line capped (see `read_line`)."""
    while line := read_line(stream, limit):
        yield line


def _error_of(line: bytes) -> str | None:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    return None


def _lines(stream: BinaryIO, head: list[tuple[int, bytes]]) -> Iterator[Line]:
    """JSON lines numbered by their line in the file (blank lines are skipped but
    counted), so an error's record number is where an editor shows the culprit."""
    no = 0
    for no, line in head:
        yield _parse_line(no, line)
    for line in capped_lines(stream):
        no += 1
        if line.strip():
            yield _parse_line(no, line)


def _parse_line(no: int, line: bytes) -> Line:
    raw = line.rstrip(b"\r\n")
    try:
        return Line(no, raw, orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        if line is TOO_LONG or line == TOO_LONG:
            return Line(no, b"", None, TOO_LONG_ERROR)
        return Line(no, raw, None, f"not valid JSON: {exc}")


def dumps(value: Any) -> bytes:
    """Compact JSON bytes of one item cut out of a larger document (its `raw` payload)."""
    return orjson.dumps(value)


# -- defensive accessors: input fields may have any JSON type ------------------------------


def text(value: Any) -> str | None:
    """A non-empty string, or None (numbers become strings; lists/dicts are refused)."""
    if isinstance(value, str):
        s = value.strip()
        return s or None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    return None


def texts(value: Any) -> list[str]:
    """The non-empty strings of a list (a lone string becomes a one-item list)."""
    if isinstance(value, str):
        s = text(value)
        return [s] if s else []
    if not isinstance(value, list):
        return []
    return [s for s in (text(v) for v in value) if s]


def obj(value: Any) -> dict[str, Any]:
    """The value when it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def objs(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of a list."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def integer(value: Any) -> int | None:
    """An int from an int or a digit string, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 12:
        return int(value.strip())
    return None


def year_of(value: Any) -> int | None:
    """A plausible publication year (1000-2999) from an int or a string starting with one."""
    if isinstance(value, str):
        m = re.match(r"\s*(\d{4})(?!\d)", value)
        value = int(m.group(1)) if m else None
    y = integer(value)
    return y if y is not None and 1000 <= y <= 2999 else None


def epoch_ms_to_iso(value: Any) -> str | None:
    """`2018-10-20T11:44:03Z` from a millisecond Unix timestamp (OpenReview), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        when = dt.datetime.fromtimestamp(value / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


_ISO = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)?)?$")


def iso_date(value: Any) -> str | None:
    """The value when it is an ISO 8601 date / date-time string (`2024`, `2024-05-01` …)."""
    s = text(value)
    return s if s and _ISO.match(s) else None


@dataclass
class Item:
    """One candidate record: its number, raw payload and JSON value (or the error)."""

    record_no: int
    raw: bytes
    value: Any = None
    error: str | None = None


def items(stream: BinaryIO, origin: str, unwrap: Any) -> Iterator[Item]:
    """The records of a JSON input, whatever its shape.

    `unwrap(value)` returns the list of items a parsed value holds (a page, a list, a
    wrapper) or None when the value is itself one item. An item from a JSON line keeps the
    line as its raw payload and the line number as its record number (a line holding a list
    numbers all its items with that line); items cut out of a document are numbered by
    their position in it (1-based) and re-serialised compactly (same JSON value, not the
    same bytes: a document has no per-item bytes). Re-serialising even a page's only item
    keeps an item's payload — and so its digest — the same whatever page it came in, which
    is what lets a re-harvest recognise unchanged items.
    """
    kind, lines = read_json(stream, origin)
    position = 0
    for line in lines:
        if line.error is not None:
            position += 1
            yield Item(line.record_no, line.raw, None, line.error)
            continue
        inner = unwrap(line.value)
        if inner is None:
            position += 1
            no = line.record_no if kind == "lines" else position
            yield Item(no, line.raw, line.value)
            continue
        for value in inner:
            position += 1
            yield Item(line.record_no if kind == "lines" else position, dumps(value), value)


def objects(
    stream: BinaryIO, origin: str, unwrap: Any, what: str
) -> Iterator[tuple[Item, dict[str, Any]] | ParseError]:
    """`items()` narrowed to JSON objects: anything else (or a bad line) becomes a
    ParseError naming `what` the parser expected ("a work", "a note" …)."""
    for item in items(stream, origin, unwrap):
        if item.error is not None:
            yield ParseError(item.error, origin, item.record_no)
        elif not isinstance(item.value, dict):
            yield ParseError(f"{what} must be a JSON object", origin, item.record_no)
        else:
            yield item, item.value
