"""The ingest's parallel parse + normalise of big JSON-lines inputs (the bulk arXiv snapshot,
the daily feed, paper lists) on `paperdesk.parallel`'s pool: worker processes turn chunks
of lines into store rows while the ingest's own process only writes them.

Why rows and not records: pickling a `SourceRecord` costs more than parsing it, while a
row (`paperdesk.store.rows.Row`) is a tuple of str/bytes that crosses processes cheaply.
Order is kept and memory bounded by `parallel.map_batches`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk import parallel, sources
from paperdesk.errors import ParseError
from paperdesk.model import SourceRecord
from paperdesk.sources._jsonio import capped_lines
from paperdesk.store import payload_lookup
from paperdesk.store.base import Reject
from paperdesk.store.rows import Row

# Formats whose every line is an independent record (a chunk of lines parses alone, and a
# record's number is its line number).
LINE_FORMATS = {"arxiv-feed", "arxiv-snapshot", "papercopilot"}

_ro: Any = None
"""The worker's `paperdesk.store.payload_lookup` (None: no look-ups)."""


def usable(parser_name: str, head: bytes, db_path: str) -> bool:
    """Parallel only for line formats in JSON-lines shape (not a JSON array) on a store
    other processes can open (a file or a server), from a program whose workers can start
    (`parallel.can_spawn`)."""
    return (
        parser_name in LINE_FORMATS
        and head.lstrip()[:1] == b"{"
        and db_path != ":memory:"
        and parallel.can_spawn()
    )


def _init(db_path: str, look_up: bool = True) -> None:
    """Open the worker's read-only connection; `look_up=False` (the bulk load of an empty
    store) opens none: every payload is new to the store, and the single writer finds a
    payload repeated within the input itself."""
    global _ro
    if not look_up:
        _ro = None
        return
    _ro = payload_lookup(db_path)


def _known(pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    return set() if _ro is None else _ro.known(pairs)


def _work(job: tuple[str, str, int, int, bytes]) -> tuple[int, list[Row | Reject | str]]:
    """(records, prepared batch) of one chunk of `records` lines starting at line `first_no`."""
    from paperdesk.ingest import prepare_batch

    parser_name, origin, first_no, records, data = job
    parser = sources.get(parser_name)
    items: list[SourceRecord | ParseError] = []
    for item in parser.parse(io.BytesIO(data), origin):
        if isinstance(item, ParseError) and item.record_no is not None:
            item.record_no += first_no - 1
        items.append(item)
    out = prepare_batch(items, _known, origin=origin, first_record_no=first_no)
    return records, out


def line_chunks(
    stream: BinaryIO, lines: int, origin: str, errors: tuple[type[BaseException], ...]
) -> Iterator[tuple[int, int, bytes]]:
    """(first line number, line count, bytes) for every `lines` lines; a broken stream
    (truncated gzip …) raises ParseError naming the line where it broke."""
    buf: list[bytes] = []
    first = 1
    try:
        for line in capped_lines(stream):  # a line over the cap is a marker, never held
            buf.append(line)
            if len(buf) >= lines:
                yield first, len(buf), b"".join(buf)
                first += len(buf)
                buf = []
    except errors as exc:
        if buf:
            yield first, len(buf), b"".join(buf)
        raise ParseError(
            f"truncated or corrupt compressed data ({exc})",
            origin=origin,
            record_no=first + len(buf),
        ) from exc
    if buf:
        yield first, len(buf), b"".join(buf)


def parallel_batches(
    parser_name: str,
    stream: BinaryIO,
    *,
    origin: str,
    db_path: str,
    batch_size: int,
    workers: int,
    errors: tuple[type[BaseException], ...],
    look_up: bool = True,
) -> Iterator[tuple[int, list[Row | Reject | str]]]:
    """(records in batch, prepared batch) in input order, prepared by `workers` processes
    (which ask the store for payloads it holds unless `look_up` is false). A broken stream
    raises its ParseError after the batches read before it."""
    jobs = (
        (parser_name, origin, first, n, data)
        for first, n, data in line_chunks(stream, batch_size, origin, errors)
    )
    try:
        yield from parallel.map_batches(
            _work, jobs, processes=workers, initializer=_init, initargs=(db_path, look_up)
        )
    finally:
        _close()  # the connection `_init` opened here if the map ran in this process


def _close() -> None:
    global _ro
    if _ro is not None:
        _ro.close()
        _ro = None
