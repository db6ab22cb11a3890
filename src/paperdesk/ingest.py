"""parse -> normalise -> store, for files and for harvested pages.

Guarantees (tested in tests/test_ingest*.py):
- idempotent: a payload its record already holds (same key, same sha256) is skipped before
  normalisation, and a file ingested to the end is recognised by its digest and skipped
  whole;
- durable: each batch (records + raw payloads + rejects + checkpoint) is one transaction;
  a killed run leaves whole batches only and the next run resumes without duplicates;
- honest about bad input: every rejected record is named (file, record number, reason);
  `on_error="stop"` stores the good records before the first bad one and raises,
  `on_error="skip"` stores the rest and reports each reject (also kept in the store).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from isal import igzip, isal_zlib

from paperdesk import ingest_pool, normalize, settings, sources
from paperdesk.errors import ParseError
from paperdesk.model import SourceRecord
from paperdesk.progress import progress
from paperdesk.store.base import PutResult, Reject, Store
from paperdesk.store.rows import Row, payload_hash, prepare_row

OnError = Literal["stop", "skip"]
# The batch size (settings.INGEST_BATCH): big enough to amortise commits, small enough to
# bound memory and the work a crash can lose. Batches per write transaction
# (settings.INGEST_TX_BATCHES): a commit writes every page its transaction touched, and the
# payload-digest index is written at random places (at a million records, about one page
# per record of a 2,000-record transaction); five batches a transaction share those pages.
# A crash still loses only whole transactions, and the next run redoes them. Starting
# worker processes costs about a second: only files at least settings.INGEST_PARALLEL_MIN
# bytes on disk use them.
HEAD = 64 * 1024


@dataclass
class IngestReport:
    """What an ingest did; `to_dict()` is the `--json` shape documented in docs/cli.md."""

    files: int = 0
    files_skipped: int = 0
    records: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    seconds: float = 0.0
    formats: dict[str, int] = field(default_factory=dict)
    rejects: list[Reject] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    """Keys inserted or updated (what later stages must process)."""

    def add(self, put: PutResult) -> None:
        self.inserted += put.inserted
        self.updated += put.updated
        self.unchanged += put.unchanged
        self.keys.extend(put.keys)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "files_skipped": self.files_skipped,
            "records": self.records,
            "inserted": self.inserted,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "rejected": self.rejected,
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.records / self.seconds) if self.seconds else None,
            "formats": self.formats,
            "rejects": [
                {"origin": r.origin, "record_no": r.record_no, "error": r.error}
                for r in self.rejects
            ],
        }


def prepare_batch(
    items: Sequence[SourceRecord | ParseError],
    known: Callable[[list[tuple[str, str]]], set[tuple[str, str]]],
    *,
    origin: str,
    first_record_no: int = 1,
) -> list[Row | Reject | str]:
    """Normalise and encode parser output, in order: each item becomes a store row or a
    Reject naming its record. A payload that `known((key, digest) pairs)` says its record
    already holds becomes just its digest: no normalising, encoding or shipping between
    processes — that is what makes re-ingesting fast. The parser's key is final (`finish`
    never changes source or id). Each payload is hashed once. Safe to run in a worker
    process (`known` then asks a read-only connection)."""
    digests = [payload_hash(x.raw) if isinstance(x, SourceRecord) else "" for x in items]
    stored = known(
        [(x.key, d) for x, d in zip(items, digests, strict=True) if isinstance(x, SourceRecord)]
    )
    out: list[Row | Reject | str] = []
    for i, item in enumerate(items):
        err: ParseError
        if isinstance(item, ParseError):
            err = item
        else:
            digest = digests[i]
            if (item.key, digest) in stored:
                out.append(digest)
                continue
            try:
                out.append(prepare_row(normalize.finish(item), digest))
                continue
            except ParseError as exc:
                err = exc
        out.append(
            Reject(
                err.origin or origin,
                err.record_no or first_record_no + i,
                err.message,
                _snippet(item),
            )
        )
    return out


def commit_batch(
    store: Store,
    prepared: Sequence[Row | Reject | str],
    *,
    origin: str,
    on_error: OnError = "stop",
    checkpoint: tuple[str, Any] | None = None,
) -> tuple[PutResult, list[Reject]]:
    """Store a prepared batch in one transaction. With `on_error="stop"` the rows before the
    first Reject are stored (without the checkpoint, which would claim the batch done) and
    a ParseError naming that record is raised; with "skip" the Rejects are stored too."""
    rows: list[Row] = []
    rejects: list[Reject] = []
    unchanged = 0
    for item in prepared:
        if isinstance(item, str):  # a payload already stored
            unchanged += 1
        elif isinstance(item, Reject):
            if on_error == "stop":
                store.put_rows(rows, origin=origin)
                raise ParseError(item.error, origin=item.origin, record_no=item.record_no)
            rejects.append(item)
        else:
            rows.append(item)
    put = store.put_rows(rows, origin=origin, checkpoint=checkpoint, rejects=rejects)
    put.unchanged += unchanged
    return put, rejects


def store_batch(
    store: Store,
    items: Sequence[SourceRecord | ParseError],
    *,
    origin: str,
    on_error: OnError = "stop",
    checkpoint: tuple[str, Any] | None = None,
    first_record_no: int = 1,
) -> tuple[PutResult, list[Reject]]:
    """Normalise and store one batch of parser output in one transaction (the harvesters'
    entry point): `prepare_batch` then `commit_batch`."""
    prepared = prepare_batch(
        items, store.known_payloads, origin=origin, first_record_no=first_record_no
    )
    return commit_batch(store, prepared, origin=origin, on_error=on_error, checkpoint=checkpoint)


def _snippet(item: SourceRecord | ParseError) -> str:
    if isinstance(item, SourceRecord):
        return item.raw[:300].decode("utf-8", errors="replace")
    return ""


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, and every non-hidden file under a directory, in name order."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(
                sorted(
                    f
                    for f in p.rglob("*")
                    if f.is_file() and not any(part.startswith(".") for part in f.parts)
                )
            )
        elif p.exists():
            out.append(p)
        else:
            raise ParseError("no such file or directory", origin=str(p))
    return out


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def open_decompressed(path: Path) -> tuple[BinaryIO, BinaryIO]:
    """(decompressed stream, underlying file) — compression judged by magic bytes."""
    raw = open(path, "rb")  # noqa: SIM115 - closed by the caller
    magic = raw.read(6)
    raw.seek(0)
    stream: Any
    if magic[:2] == b"\x1f\x8b":
        # ISA-L's inflate: the same gzip reader, ~3x less CPU than zlib's (daily feed: 1.37
        # -> 0.47 s), and it runs in the ingest's single writer process.
        stream = igzip.GzipFile(fileobj=raw, mode="rb")
    elif magic[:3] == b"BZh":
        stream = bz2.BZ2File(raw, mode="rb")
    elif magic[:6] == b"\xfd7zXZ\x00":
        stream = lzma.LZMAFile(raw, mode="rb")
    else:
        stream = raw
    return stream, raw


# isal's stubs declare its `error` as an instance; at run time it is the exception class.
_ISAL_ERROR: type[Exception] = isal_zlib.error  # type: ignore[assignment]
_DECOMPRESS_ERRORS = (
    EOFError, zlib.error, _ISAL_ERROR, gzip.BadGzipFile, lzma.LZMAError, OSError,
)


def _guarded(it: Iterator[SourceRecord | ParseError], origin: str) -> Iterator[Any]:
    """Turn a broken compressed stream (truncated gzip …) into a ParseError for the
    record where it broke, instead of a traceback."""
    n = 0
    while True:
        try:
            item = next(it)
        except StopIteration:
            return
        except ParseError as exc:
            exc.origin = exc.origin or origin
            raise
        except _DECOMPRESS_ERRORS as exc:
            raise ParseError(
                f"truncated or corrupt compressed data ({exc})", origin=origin, record_no=n + 1
            ) from exc
        except UnicodeDecodeError as exc:
            raise ParseError(f"wrong text encoding ({exc})", origin=origin, record_no=n + 1) from exc
        n += 1
        yield item


def _serial_batches(
    store: Store,
    items: Iterator[SourceRecord | ParseError],
    origin: str,
    batch_size: int,
) -> Iterator[tuple[int, list[Row | Reject | str]]]:
    """(records in batch, prepared batch) from a parser, in this process. When the input
    breaks (truncated gzip …) the records read before are still yielded, then it raises."""
    batch: list[SourceRecord | ParseError] = []
    seen = 0

    def prep() -> list[Row | Reject | str]:
        return prepare_batch(
            batch, store.known_payloads, origin=origin, first_record_no=seen - len(batch) + 1
        )

    try:
        for item in _guarded(items, origin):
            batch.append(item)
            seen += 1
            if len(batch) >= batch_size:
                yield len(batch), prep()
                batch = []
    except ParseError:
        if batch:
            yield len(batch), prep()
        raise
    if batch:
        yield len(batch), prep()


class _WriteGroup:
    """Consecutive batches written in one transaction (`TX_BATCHES` of them)."""

    def __init__(self, store: Store, batches: int):
        self.store = store
        self.batches = max(1, batches)
        self.count = 0
        self.tx: Any = None

    def begin(self) -> None:
        if self.tx is None:
            self.store.restart_wal_if_large()
            self.tx = self.store.rows_transaction()
            self.tx.__enter__()

    def batch_done(self) -> None:
        self.count += 1
        if self.count >= self.batches:
            self.end()

    def end(self, exc: BaseException | None = None) -> None:
        """Commit, or roll back when `exc` is given."""
        tx, self.tx, self.count = self.tx, None, 0
        if tx is not None:
            tx.__exit__(type(exc) if exc is not None else None, exc, None)


def ingest_file(
    store: Store,
    path: Path,
    report: IngestReport,
    *,
    fmt: str | None = None,
    on_error: OnError = "stop",
    force: bool = False,
    batch_size: int | None = None,
    workers: int | None = None,
) -> None:
    """Ingest one file (plain, .gz, .bz2 or .xz) into the store, adding to `report`.
    `batch_size` and `workers` default to their settings (INGEST_BATCH, WORKERS); one
    worker (or none) parses in this process."""
    batch_size = batch_size or settings.INGEST_BATCH.get()
    workers = settings.WORKERS.get() if workers is None else workers
    origin = str(path)
    digest = file_digest(path)
    report.files += 1
    if not force and store.file_done(digest):
        report.files_skipped += 1
        return
    stream, raw = open_decompressed(path)
    size = os.fstat(raw.fileno()).st_size
    try:
        try:
            head = stream.read(HEAD)
        except _DECOMPRESS_ERRORS as exc:
            raise ParseError(f"unreadable compressed file ({exc})", origin=origin) from exc
        parser = sources.get(fmt) if fmt else sources.detect(head, path.name)
        stream.seek(0)
        report.formats[parser.NAME] = report.formats.get(parser.NAME, 0) + 1
        seen = 0
        rejected = 0
        parallel = bool(
            workers > 1
            and size >= settings.INGEST_PARALLEL_MIN.get()
            and ingest_pool.usable(parser.NAME, head, store.target)
        )
        # A big file into an empty store: the workers do not ask the store for payloads
        # (it has none).
        fresh = parallel and not store.has_records()
        if parallel:
            batches = ingest_pool.parallel_batches(
                parser.NAME, stream, origin=origin, db_path=store.target,
                batch_size=batch_size, workers=workers, errors=_DECOMPRESS_ERRORS,
                look_up=not fresh,
            )
        else:
            batches = _serial_batches(store, parser.parse(stream, origin), origin, batch_size)
        group = _WriteGroup(store, settings.INGEST_TX_BATCHES.get())
        with progress(total=size, desc=path.name[:30], unit="B", unit_scale=True) as bar:
            try:
                for n, prepared in batches:
                    group.begin()
                    put, rej = commit_batch(store, prepared, origin=origin, on_error=on_error)
                    group.batch_done()
                    seen += n
                    report.add(put)
                    report.rejects.extend(rej)
                    report.rejected += len(rej)
                    rejected += len(rej)
                    bar.update(raw.tell() - bar.n)
            except ParseError:
                group.end()  # bad input: what came before it is kept (see on_error)
                report.records += seen  # … and counted
                raise
            except BaseException as exc:
                group.end(exc)
                raise
            group.end()
        report.records += seen
        store.mark_file_done(digest, origin, size, seen, rejected)
    finally:
        stream.close()
        raw.close()


def ingest_paths(
    store: Store,
    paths: Iterable[str | Path],
    *,
    fmt: str | None = None,
    on_error: OnError = "stop",
    force: bool = False,
    batch_size: int | None = None,
    workers: int | None = None,
) -> IngestReport:
    """Ingest files and directories; the library function behind `paperdesk ingest`."""
    report = IngestReport()
    start = time.perf_counter()
    try:
        for path in expand_paths(paths):
            try:
                ingest_file(
                    store, path, report, fmt=fmt, on_error=on_error, force=force,
                    batch_size=batch_size, workers=workers,
                )
            except ParseError as exc:
                if on_error == "stop":
                    raise
                # A whole file unreadable (unknown format, broken gzip header): skip it.
                rej = Reject(exc.origin or str(path), exc.record_no, exc.message)
                store.add_rejects([rej])
                report.rejects.append(rej)
                report.rejected += 1
    finally:
        report.seconds = time.perf_counter() - start
    return report
