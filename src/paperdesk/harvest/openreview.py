"""Harvest one OpenReview venue: API v2 `/notes?content.venueid=…`, v1 fallback.

Venues run since 2023 live on API v2 (`api2.openreview.net`), where accepted papers carry
`content.venueid`; older venues only answer on API v1 (`api.openreview.net`) by
submission invitation (`<venue>/-/Blind_Submission`, else `<venue>/-/Submission`). The
harvester asks v2 first and falls back to v1 when v2 knows no notes for the venue, pages
with `offset`/`limit`, and parses each page with `paperdesk.sources.openreview` (which keeps
only papers, whichever API shape they come in).

Checkpoint `openreview:<venue>`: the API and query chosen and the next offset, stored with
each page, so an interrupted harvest resumes at the first page not stored. A venue
harvested to the end is fetched again from offset 0 on the next run (OpenReview has no
"changed since" query for public notes); unchanged notes are recognised by their payload
digest and cost no writes.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import orjson

from paperdesk.errors import HarvestError
from paperdesk.harvest import HarvestReport, store_page
from paperdesk.ingest import OnError
from paperdesk.progress import progress
from paperdesk.sources import openreview as parser
from paperdesk.store.base import Store

if TYPE_CHECKING:  # httpx costs 0.5 s to import: only the CLI command that harvests pays it
    from paperdesk.harvest.http import PoliteClient

API2_URL = "https://api2.openreview.net"
API1_URL = "https://api.openreview.net"
PAGE_SIZE = 1000  # the largest page both APIs serve


def checkpoint_name(venue: str) -> str:
    return f"openreview:{venue}"


def _queries(
    venue: str, invitation: str | None, api2: str, api1: str
) -> list[tuple[str, str, dict[str, str]]]:
    """(api, base url, query) candidates in the order to try them."""
    if invitation:
        return [("v1", api1, {"invitation": invitation})]
    return [
        ("v2", api2, {"content.venueid": venue}),
        ("v1", api1, {"invitation": f"{venue}/-/Blind_Submission"}),
        ("v1", api1, {"invitation": f"{venue}/-/Submission"}),
    ]


def _page(content: bytes, origin: str) -> tuple[int, int | None]:
    """(notes on the page, total count if the API says) — for paging only; the records
    themselves come from the parser."""
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise HarvestError(f"{origin}: not a JSON response ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("notes"), list):
        raise HarvestError(f"{origin}: response has no `notes` list")
    count = data.get("count")
    return len(data["notes"]), count if isinstance(count, int) else None


def harvest_openreview(
    store: Store,
    client: PoliteClient,
    venue: str,
    *,
    invitation: str | None = None,
    api2: str = API2_URL,
    api1: str = API1_URL,
    page_size: int = PAGE_SIZE,
    on_error: OnError = "stop",
) -> HarvestReport:
    """Harvest every paper of `venue` (e.g. `ICLR.cc/2024/Conference`) into `store`."""
    name = checkpoint_name(venue)
    report = HarvestReport(source="openreview", checkpoint=name)
    cp: dict[str, Any] | None = store.get_checkpoint(name)
    candidates: list[tuple[str, str, dict[str, str]]]
    if (
        cp
        and not cp.get("done")
        and (invitation is None or cp["query"].get("invitation") == invitation)
    ):
        candidates = [(cp["api"], cp["url"], cp["query"])]
        offset = int(cp["offset"])
        report.resumed = "offset"
    else:
        candidates = _queries(venue, invitation, api2.rstrip("/"), api1.rstrip("/"))
        offset = 0
    start_requests = client.requests
    with progress(desc=f"openreview {venue}"[:30], unit="notes") as bar:
        for i, (api, base, query) in enumerate(candidates):
            first = True
            while True:
                params = {**query, "offset": str(offset), "limit": str(page_size)}
                got = client.get(f"{base}/notes", params)
                origin = got.url
                n_notes, count = _page(got.content, origin)
                if first and n_notes == 0 and offset == 0 and i + 1 < len(candidates):
                    break  # this API / invitation knows nothing of the venue: try the next
                first = False
                if count is not None:
                    bar.total = count
                items = list(parser.parse(io.BytesIO(got.content), origin))
                offset += n_notes
                done = n_notes < page_size or (count is not None and offset >= count)
                value = {
                    "api": api,
                    "url": base,
                    "query": query,
                    "offset": offset,
                    "count": count,
                    "done": done,
                }
                store_page(
                    store,
                    items,
                    origin=origin,
                    on_error=on_error,
                    checkpoint=(name, value),
                    report=report,
                )
                bar.update(n_notes)
                if done:
                    report.complete = True
                    break
            if report.complete:
                break
    report.requests = client.requests - start_requests
    return report
