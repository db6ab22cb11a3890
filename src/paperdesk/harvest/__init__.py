"""Live harvesters: arXiv OAI-PMH (`oai`), the arXiv API (`arxiv_api`), OpenReview.

Every harvester has the same shape, and this module holds what they share:

    fetch a page with `http.PoliteClient` (the ONE place for retries and politeness)
    -> parse it with the format's pure parser (`paperdesk.sources.*`)
    -> `store_page`: records, rejects and the harvest's checkpoint in ONE transaction.

Because the checkpoint that says "the next page is X" is committed together with the
records of the page before X, a harvest killed at any point (SIGKILL included) resumes at
the first page not stored, and never stores a page twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from paperdesk.errors import ParseError
from paperdesk.ingest import OnError, store_batch
from paperdesk.model import SourceRecord
from paperdesk.store.base import Reject, Store

__all__ = ["HarvestReport", "store_page"]


@dataclass
class HarvestReport:
    """What one harvest run did; `to_dict()` is the `--json` shape (docs/cli.md)."""

    source: str
    checkpoint: str
    resumed: str | None = None
    """How the run started: None (fresh), "token"/"offset" (an interrupted run resumed),
    "datestamp" (an incremental re-run from the last datestamp harvested)."""
    pages: int = 0
    records: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    requests: int = 0
    complete: bool = False
    rejects: list[Reject] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "checkpoint": self.checkpoint,
            "resumed": self.resumed,
            "complete": self.complete,
            "pages": self.pages,
            "requests": self.requests,
            "records": self.records,
            "inserted": self.inserted,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "rejected": self.rejected,
            "rejects": [
                {"origin": r.origin, "record_no": r.record_no, "error": r.error}
                for r in self.rejects
            ],
        }


def store_page(
    store: Store,
    items: list[SourceRecord | ParseError],
    *,
    origin: str,
    on_error: OnError,
    checkpoint: tuple[str, Any],
    report: HarvestReport,
) -> None:
    """Store one page's parser output and the checkpoint that follows it, atomically.

    With `on_error="stop"` a bad record raises before the checkpoint moves, so the next
    run fetches this page again (and stops again, until the input or the option changes).
    """
    put, rejects = store_batch(
        store, items, origin=origin, on_error=on_error, checkpoint=checkpoint
    )
    report.pages += 1
    report.records += len(items)
    report.inserted += put.inserted
    report.updated += put.updated
    report.unchanged += put.unchanged
    report.rejected += len(rejects)
    report.rejects.extend(rejects)
    report.keys.extend(put.keys)
