"""The one exception tree of paperdesk.

    PaperdeskError
    ├── ParseError          a record or file could not be read (names file and record number)
    │   └── UnknownFormatError   no parser recognises the input
    ├── StoreError          the database refused or is inconsistent
    ├── NotFoundError       a key / id that does not exist
    ├── HarvestError        a remote source failed after all retries
    ├── QueryError          a search query is malformed (becomes an HTTP 400)
    └── SettingError        a `PAPERDESK_*` variable holds a value that does not parse

The CLI maps every `PaperdeskError` to a one-line message and a non-zero exit; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations


class PaperdeskError(Exception):
    """Base of every error paperdesk raises on purpose."""


class ParseError(PaperdeskError):
    """A record (or a whole file) could not be parsed.

    `origin` is the file name or URL, `record_no` the 1-based number of the record inside
    it (None when the whole input is unreadable), so users can find the culprit.
    """

    def __init__(self, message: str, origin: str | None = None, record_no: int | None = None):
        self.message = message
        self.origin = origin
        self.record_no = record_no
        super().__init__(str(self))

    def __reduce__(self) -> tuple[type[ParseError], tuple[str, str | None, int | None]]:
        # Rebuilt whole when it crosses processes (paperdesk.parallel), not from str(self).
        return (type(self), (self.message, self.origin, self.record_no))

    def __str__(self) -> str:
        where = self.origin or "<input>"
        if self.record_no is not None:
            where += f", record {self.record_no}"
        return f"{where}: {self.message}"


class UnknownFormatError(ParseError):
    """No parser recognises the input's content."""


class StoreError(PaperdeskError):
    """The store could not complete an operation."""


class NotFoundError(PaperdeskError):
    """A record key, work id or author id that the store does not hold."""


class HarvestError(PaperdeskError):
    """A remote source kept failing after every retry."""


class QueryError(PaperdeskError):
    """A search query is malformed; the message says what is wrong and where."""


class SettingError(PaperdeskError):
    """A setting's environment variable holds a value that does not parse (see settings)."""
