"""Pure parsers, one module per input format, and content-based format detection.

Every parser module exposes the same three names:

    NAME: str                                   e.g. "arxiv-oai"
    def sniff(head: bytes, filename: str) -> bool
        True when the first bytes (up to 64 KiB, already decompressed) look like this format.
    def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]
        Streams records from a binary stream. A bad *record* is yielded as a ParseError
        (with origin and 1-based record_no) so the caller can skip or stop; an unreadable
        *file* raises ParseError. Each SourceRecord carries `raw` (its payload bytes exactly
        as received) and `raw_format` = NAME. Parsers never touch the store or the network.

`detect()` picks the first parser in `PARSERS` whose `sniff` says yes — most specific first.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import BinaryIO, Protocol, cast

from paperdesk.errors import ParseError, UnknownFormatError
from paperdesk.model import SourceRecord


class Parser(Protocol):
    NAME: str

    def sniff(self, head: bytes, filename: str) -> bool: ...

    def parse(self, stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]: ...


# Most specific first: detection stops at the first module whose sniff() says yes.
_MODULES = [
    "arxiv_oai",
    "arxiv_atom",
    "openreview",
    "crossref",
    "openalex",
    "semanticscholar",
    "arxiv_snapshot",
    "arxiv_feed",
    "papercopilot",
    "arxiv_abs",
    "bibtex",
    "generic",
]


def _module(name: str) -> Parser | None:
    """The parser module `paperdesk.sources.<name>`, or None when it does not exist yet."""
    try:
        mod: ModuleType = importlib.import_module(f"paperdesk.sources.{name}")
    except ModuleNotFoundError as exc:  # a format still being written
        if exc.name == f"paperdesk.sources.{name}":
            return None
        raise
    return cast(Parser, mod)


_ALL: dict[str, Parser] = {}


def _load() -> dict[str, Parser]:
    """Every parser by NAME, in detection order (imported on first use: see `get`)."""
    if not _ALL:
        for name in _MODULES:
            parser = _module(name)
            if parser is not None:
                _ALL[parser.NAME] = parser
    return _ALL


def __getattr__(attr: str) -> dict[str, Parser]:
    # `PARSERS`, every parser by NAME, is built on first use: a process that only needs
    # one parser (an ingest worker) then imports only that one.
    if attr == "PARSERS":
        return _load()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def detect(head: bytes, filename: str) -> Parser:
    """The parser for an input, judged from its content (the filename only breaks ties)."""
    if not head.strip():
        raise UnknownFormatError("empty file: nothing to ingest", origin=filename)
    for parser in _load().values():
        if parser.sniff(head, filename):
            return parser
    raise UnknownFormatError(
        "unknown format: no parser recognises this content "
        f"(use --format with one of: {', '.join(sorted(_load()))})",
        origin=filename,
    )


def get(name: str) -> Parser:
    """The parser called `name` (for --format). Imports only that parser's module (its
    module is its NAME with `_` for `-`): each ingest worker process imports one parser,
    not all twelve with lxml and bibtexparser (~0.1 CPU-s a worker)."""
    module = name.replace("-", "_")
    if module in _MODULES:
        parser = _module(module)
        if parser is not None and parser.NAME == name:
            return parser
    parsers = _load()
    if name in parsers:
        return parsers[name]
    raise UnknownFormatError(f"unknown format {name!r} (known: {', '.join(sorted(parsers))})")
