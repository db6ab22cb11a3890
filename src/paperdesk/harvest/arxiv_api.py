"""Harvest the results of an arXiv API query (`export.arxiv.org/api/query`), page by page.

The API answers a `search_query` (and/or an `id_list`) with Atom feeds of `max_results`
entries from offset `start`; `opensearch:totalResults` says how many there are. Pages are
parsed by `paperdesk.sources.arxiv_atom.page_info`. arXiv asks for one request every 3 s
(the `PoliteClient` default) and caps a query at 30,000 results.

Checkpoint `arxiv-api:<url>:<query>:<id_list>:<sort>`: the next `start`, stored with each
page, so an interrupted run resumes at the first page not stored. A query answered to the
end is run again from the start next time (a query is not a change feed; use
`harvest arxiv` for incremental updates) — unchanged entries cost no writes.

The API is known to return an empty page now and then in the middle of a result list;
such a page is asked for again (up to `EMPTY_RETRIES` times) before the run gives up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paperdesk.errors import HarvestError, ParseError
from paperdesk.harvest import HarvestReport, store_page
from paperdesk.ingest import OnError
from paperdesk.progress import progress
from paperdesk.sources import arxiv_atom
from paperdesk.store.base import Store

if TYPE_CHECKING:  # httpx costs 0.5 s to import: only the CLI command that harvests pays it
    from paperdesk.harvest.http import PoliteClient

API_URL = "https://export.arxiv.org/api/query"
PAGE_SIZE = 200
MAX_TOTAL = 30_000  # the API refuses to page beyond this
EMPTY_RETRIES = 3
SORT_BY = ("submittedDate", "lastUpdatedDate", "relevance")


def checkpoint_name(url: str, query: str, id_list: str, sort_by: str, sort_order: str) -> str:
    return f"arxiv-api:{url}:{query}:{id_list}:{sort_by}:{sort_order}"


def harvest_arxiv_api(
    store: Store,
    client: PoliteClient,
    query: str = "",
    *,
    id_list: str = "",
    max_results: int | None = None,
    page_size: int = PAGE_SIZE,
    sort_by: str = "submittedDate",
    sort_order: str = "descending",
    url: str = API_URL,
    on_error: OnError = "stop",
) -> HarvestReport:
    """Store every entry the query returns (at most `max_results`, and the API's cap)."""
    if not query and not id_list:
        raise HarvestError("give a search query or an id list")
    limit = min(max_results, MAX_TOTAL) if max_results is not None else MAX_TOTAL
    name = checkpoint_name(url, query, id_list, sort_by, sort_order)
    report = HarvestReport(source="arxiv-api", checkpoint=name)
    cp: dict[str, Any] = store.get_checkpoint(name) or {}
    start = 0
    if cp and not cp.get("done"):
        start = int(cp.get("start", 0))
        report.resumed = "offset" if start else None
    start_requests = client.requests
    empty_tries = 0
    with progress(total=None, desc="arXiv API", unit="rec") as bar:
        bar.update(start)
        while start < limit:
            params: dict[str, str | int] = {
                "search_query": query,
                "id_list": id_list,
                "start": start,
                "max_results": min(page_size, limit - start),
                "sortBy": sort_by,
                "sortOrder": sort_order,
            }
            params = {k: v for k, v in params.items() if v != ""}
            got = client.get(url, params, accept=(400,))
            try:
                page = arxiv_atom.page_info(got.content, got.url)
            except ParseError as exc:
                raise HarvestError(f"{got.url}: unreadable API response: {exc.message}") from exc
            if page.error or got.status == 400:
                raise HarvestError(f"arXiv API refused the query: {page.error or 'HTTP 400'}")
            total = page.total_results
            if total is not None:
                bar.total = min(total, limit)
            n = len(page.records)
            if n == 0 and total is not None and start < total:
                if empty_tries < EMPTY_RETRIES:
                    empty_tries += 1  # the API's spurious empty page: ask again (politely)
                    continue
                raise HarvestError(
                    f"arXiv API returned only empty pages at start={start} of {total}; "
                    "run again later to resume there"
                )
            empty_tries = 0
            start += n
            done = n == 0 or start >= limit or (total is not None and start >= total)
            value = {"start": start, "total": total, "max": max_results, "done": done}
            store_page(
                store,
                page.records,
                origin=got.url,
                on_error=on_error,
                checkpoint=(name, value),
                report=report,
            )
            bar.update(n)
            if done:
                break
        report.complete = True
    report.requests = client.requests - start_requests
    return report
