"""Harvest arXiv over OAI-PMH `ListRecords`, following resumption tokens, resumably.

OAI-PMH is arXiv's bulk metadata interface: a `ListRecords` request selects records by
set and datestamp range, and answers page by page, each page ending with a
`resumptionToken` to ask for the next one. Pages are parsed by
`paperdesk.sources.arxiv_oai.page_info` (records, token, OAI error, datestamps).

The checkpoint `oai:<base url>:<set>:<format>` holds the token for the next page, the
harvest's `from`/`until`, and `last_datestamp` — the latest datestamp harvested so far. It
is written in the same transaction as each page's records (`harvest.store_page`), so:

* an interrupted harvest resumes at the stored token, never re-storing a page;
* if that token has expired (`badResumptionToken`; arXiv's tokens live for hours, not
  days), the harvest restarts its datestamp range from its original `from`. It does NOT
  restart from `last_datestamp`: arXiv's lists are not sorted by datestamp (the captured
  ListIdentifiers response goes 01, 01, 02, 02, 01 …), so records older than the latest
  datestamp seen may still be unlisted. Pages already stored are recognised by their
  payload digest and cost no writes;
* a re-run of a completed harvest without `--from` asks only for records changed since
  `last_datestamp` (inclusive: OAI's `from` is, and the day may have grown since).

`noRecordsMatch` is an empty result, not an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paperdesk.errors import HarvestError, ParseError
from paperdesk.harvest import HarvestReport, store_page
from paperdesk.ingest import OnError
from paperdesk.progress import progress
from paperdesk.sources import arxiv_oai
from paperdesk.store.base import Store

if TYPE_CHECKING:  # httpx costs 0.5 s to import: only the CLI command that harvests pays it
    from paperdesk.harvest.http import PoliteClient

OAI_URL = "https://oaipmh.arxiv.org/oai"
"""arXiv's OAI-PMH endpoint since 2025 (the old `export.arxiv.org/oai2` redirects there)."""

FORMATS = ("arXiv", "arXivRaw")
NO_RECORDS = "noRecordsMatch"
BAD_TOKEN = "badResumptionToken"
MAX_RESTARTS = 2
"""Expired tokens tolerated per run; beyond that the server is not keeping them long
enough for this harvest and going round again would never end."""


def checkpoint_name(base_url: str, set_spec: str | None, metadata_prefix: str) -> str:
    return f"oai:{base_url}:{set_spec or '*'}:{metadata_prefix}"


def _later(a: str | None, b: str | None) -> str | None:
    """The later of two datestamps (ISO text compares correctly); None-safe."""
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def harvest_oai(
    store: Store,
    client: PoliteClient,
    *,
    base_url: str = OAI_URL,
    set_spec: str | None = None,
    metadata_prefix: str = "arXiv",
    from_date: str | None = None,
    until: str | None = None,
    on_error: OnError = "stop",
) -> HarvestReport:
    """Harvest `ListRecords` into `store`; resume or continue from the stored checkpoint.

    An explicit `from_date`/`until` that differs from an unfinished harvest's starts a new
    harvest of that range (the old token belongs to another query).
    """
    name = checkpoint_name(base_url, set_spec, metadata_prefix)
    report = HarvestReport(source="arxiv-oai", checkpoint=name)
    cp: dict[str, Any] = store.get_checkpoint(name) or {}
    token: str | None = None
    last = cp.get("last_datestamp")
    if cp.get("token") and from_date in (None, cp.get("from")) and until in (None, cp.get("until")):
        token, from_date, until = cp["token"], cp.get("from"), cp.get("until")
        report.resumed = "token"
    elif cp and from_date is None:
        # After a finished harvest: only what changed since its high-water mark. After an
        # unfinished one (asked now with another `until`): its range from the start.
        from_date = (last if cp.get("done") else None) or cp.get("from")
        report.resumed = "datestamp" if cp.get("done") and from_date else None
    if report.resumed is None:
        last = None  # a new range: the old high-water mark says nothing about it

    def fresh_query() -> dict[str, str]:
        q = {"verb": "ListRecords", "metadataPrefix": metadata_prefix}
        if set_spec:
            q["set"] = set_spec
        if from_date:
            q["from"] = from_date
        if until:
            q["until"] = until
        return q

    start_requests = client.requests
    restarts = 0
    with progress(desc=f"arXiv OAI {set_spec or ''}".strip(), unit="rec") as bar:
        while True:
            params = {"verb": "ListRecords", "resumptionToken": token} if token else fresh_query()
            got = client.get(base_url, params)
            try:
                page = arxiv_oai.page_info(got.content, got.url)
            except ParseError as exc:
                raise HarvestError(
                    f"{got.url}: unreadable OAI-PMH response: {exc.message}"
                ) from exc
            if page.error_code == BAD_TOKEN and token and restarts < MAX_RESTARTS:
                # The token expired while we were away: redo the range from its start.
                token, restarts = None, restarts + 1
                report.resumed = "datestamp"
                continue
            if page.error_code and page.error_code != NO_RECORDS:
                raise HarvestError(
                    f"{got.url}: OAI-PMH error {page.error_code}: {page.error_message or ''}"
                )
            if page.complete_list_size is not None:
                bar.total = page.complete_list_size
            if page.cursor is not None and bar.n < page.cursor:
                bar.update(page.cursor - bar.n)  # a resumed run starts part-way
            last = _later(last, page.max_datestamp)
            token = page.token
            value = {
                "token": token,
                "from": from_date,
                "until": until,
                "last_datestamp": last,
                "done": token is None,
            }
            store_page(
                store,
                page.records,
                origin=got.url,
                on_error=on_error,
                checkpoint=(name, value),
                report=report,
            )
            bar.update(len(page.records))
            if token is None:
                report.complete = True
                break
    report.requests = client.requests - start_requests
    return report
