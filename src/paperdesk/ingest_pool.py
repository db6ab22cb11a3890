"""Parallel parse + normalise for big JSON-lines inputs (the bulk arXiv snapshot, the daily
feed, paper lists), so ingest uses both cores: worker processes turn chunks of lines into
store rows while the main process only writes them.

Why rows and not records: pickling a `SourceRecord` costs more than parsing it, while a
row (`paperdesk.store.sqlite.Row`) is a tuple of str/bytes that crosses processes cheaply.
Order is kept (results are consumed in submission order) and at most `IN_FLIGHT × workers` chunks
are in flight, so memory stays bounded whatever the input size.
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import sqlite3
import sys
from collections import deque
from collections.abc import Iterator
from multiprocessing.pool import AsyncResult, Pool
from typing import BinaryIO

from paperdesk import sources
from paperdesk.errors import PaperdeskError, ParseError
from paperdesk.gcpause import gc_paused
from paperdesk.model import SourceRecord
from paperdesk.sources._jsonio import capped_lines
from paperdesk.store.base import Reject
from paperdesk.store.sqlite import Row, known_payloads

# Formats whose every line is an independent record (a chunk of lines parses alone, and a
# record's number is its line number).
LINE_FORMATS = {"arxiv-feed", "arxiv-snapshot", "papercopilot"}

# Chunks queued or in work per worker. The writer's cost comes in lumps (a commit every few
# batches, a WAL checkpoint with its fsync every ~80 MB): with only two chunks a worker the
# workers ran dry during them; four keep them busy, for ~10 MB more per chunk in memory.
IN_FLIGHT = 4
# Buffer size asked for the pool's pipes (see `_widen_pipes`).
PIPE_BYTES = 1 << 20

_ro: sqlite3.Connection | None = None


class _Pool(Pool):
    """`multiprocessing.Pool` whose worker-handler thread does not spin while results arrive.

    CPython's Pool (3.8+, bpo-35493) wakes its worker-handler thread when the results pipe
    is readable as well as when a worker exits. A chunk's result (~10 MB) crosses the pipe
    64 KiB at a time, so while one is in transit the handler thread looped — checked every
    worker's exit status, built a selector, polled, found the pipe readable again — in this,
    the writer's process, competing for its GIL and CPU: 7-18 µs of the main process's CPU
    a record of the daily feed (measured with writing turned off: 28-39 -> 20-21 µs). The
    results pipe tells the handler only about workers that exit after `maxtasksperchild`
    tasks, which this pool never sets; a worker that dies still wakes it by its own sentinel.
    """

    def _get_sentinels(self) -> list[object]:
        return [self._change_notifier._reader]  # type: ignore[attr-defined]


def _widen_pipes(pool: Pool) -> None:
    """Give the pool's task and result pipes 1 MiB buffers (Linux; 64 KiB by default): a
    chunk's ~10 MB of rows then crosses in up to 16 times fewer reads and wake-ups. Measured with
    writing turned off: the result thread's CPU for the feed 0.65-0.68 -> 0.55 s."""
    try:
        import fcntl  # POSIX only
    except ImportError:
        return
    size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if size is None:
        return
    for conn in (pool._outqueue._reader, pool._inqueue._writer):  # type: ignore[attr-defined]
        try:
            fcntl.fcntl(conn.fileno(), size, PIPE_BYTES)
        except OSError:  # above /proc/sys/fs/pipe-max-size: keep the default
            pass


def usable(parser_name: str, head: bytes, db_path: str) -> bool:
    """Parallel only for line formats in JSON-lines shape (not a JSON array) on a file db,
    from a program whose workers can start (spawned workers re-import `__main__`: a
    script read from stdin cannot be)."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return (
        parser_name in LINE_FORMATS
        and head.lstrip()[:1] == b"{"
        and db_path != ":memory:"
        and (main_file is None or os.path.exists(main_file))
    )


def _init(db_path: str, look_up: bool = True) -> None:
    """Open the worker's read-only connection; `look_up=False` (the bulk load of an empty
    store) opens none: every payload is new to the store, and the single writer finds a
    payload repeated within the input itself."""
    global _ro
    if not look_up:
        _ro = None
        return
    _ro = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, check_same_thread=False)
    # Each chunk looks up ~2,000 record keys and their payloads: keep the index pages it
    # reads cached instead of re-reading them with the default 2 MB cache.
    _ro.execute("PRAGMA cache_size=-32768")


def _known(pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
    return set() if _ro is None else known_payloads(_ro, pairs)


def _work(parser_name: str, origin: str, first_no: int, data: bytes) -> list[Row | Reject | str]:
    from paperdesk.ingest import prepare_batch

    with gc_paused():
        parser = sources.get(parser_name)
        # The line formats' own loop over a chunk when they have one (same items, fewer
        # layers); None means the chunk needs the general reader.
        parse_chunk = getattr(parser, "parse_chunk", None)
        chunk = parse_chunk(data, origin, first_no) if parse_chunk is not None else None
        if chunk is not None:
            items: list[SourceRecord | ParseError] = chunk
        else:
            items = []
            for item in parser.parse(io.BytesIO(data), origin):
                if isinstance(item, ParseError) and item.record_no is not None:
                    item.record_no += first_no - 1
                items.append(item)
        out = prepare_batch(items, _known, origin=origin, first_record_no=first_no)
        # Free the batch's records before the collector is back: it counts live objects
        # allocated since its last pass, and would otherwise walk all ~100k of them once
        # (measured: 14 % of a worker's time).
        del items
    return out


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
    (which ask the store for payloads it holds unless `look_up` is false)."""
    ctx = mp.get_context("spawn")  # no fork: the parent holds SQLite handles and threads
    with _Pool(workers, initializer=_init, initargs=(db_path, look_up), context=ctx) as pool:
        _widen_pipes(pool)
        try:  # a pool whose workers die at start-up would respawn them forever
            pool.apply_async(os.getpid).get(timeout=120)
        except Exception as exc:  # noqa: BLE001 - any failure means the same to the user
            raise PaperdeskError(
                f"ingest worker processes did not start ({exc!r}); "
                "set PAPERDESK_WORKERS=1 to ingest in one process"
            ) from exc
        pending: deque[tuple[int, AsyncResult[list[Row | Reject | str]]]] = deque()
        chunks = line_chunks(stream, batch_size, origin, errors)
        broken: ParseError | None = None
        exhausted = False
        while True:
            while not exhausted and broken is None and len(pending) < IN_FLIGHT * workers:
                try:
                    first, n, data = next(chunks)
                except StopIteration:
                    exhausted = True
                    break
                except ParseError as exc:
                    broken = exc
                    break
                pending.append((n, pool.apply_async(_work, (parser_name, origin, first, data))))
            if not pending:
                break
            n, result = pending.popleft()
            with gc_paused():  # unpickling a batch allocates ~10 objects a record
                prepared = result.get()
            yield n, prepared
        if broken is not None:
            raise broken
