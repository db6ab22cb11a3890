"""`paperdesk harvest arxiv | arxiv-api | openreview`: live, polite, resumable harvests."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from paperdesk import settings
from paperdesk.cli import Ctx, emit_json, handle_errors, main, pass_ctx
from paperdesk.harvest import HarvestReport
from paperdesk.harvest.arxiv_api import API_URL, SORT_BY, harvest_arxiv_api
from paperdesk.harvest.oai import FORMATS, OAI_URL, harvest_oai
from paperdesk.harvest.openreview import API1_URL, API2_URL, harvest_openreview

if TYPE_CHECKING:
    from paperdesk.harvest.http import PoliteClient
    from paperdesk.ingest import OnError


@dataclass(frozen=True)
class _Harvest:
    """The options every harvester shares (`_client_options`), as one argument."""

    interval: float
    timeout: float
    retries: int
    mailto: str | None
    on_error: OnError
    as_json: bool

    def run(self, harvest: Callable[[PoliteClient], HarvestReport]) -> None:
        """`harvest(client)` with a client made to these options; then print its report."""
        from paperdesk.harvest.http import PoliteClient, Politeness, user_agent  # httpx: slow

        politeness = Politeness(min_interval=self.interval, timeout=self.timeout,
                                retries=self.retries)
        with PoliteClient(agent=user_agent(self.mailto), politeness=politeness) as client:
            report = harvest(client)
        _print(report, self.as_json)


def _client_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Options every harvester shares: politeness, retries, contact, error policy, output;
    the command gets them as one `_Harvest` argument, `opts`."""
    options = [
        click.option(
            "--interval",
            type=click.FloatRange(min=0),
            default=3.0,
            show_default=True,
            help="Seconds between requests (arXiv asks for at least 3).",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            default=60.0,
            show_default=True,
            help="Seconds before a silent server counts as failed.",
        ),
        click.option(
            "--retries",
            type=click.IntRange(min=0),
            default=5,
            show_default=True,
            help="Retries (with backoff) on timeouts, dropped connections and 5xx.",
        ),
        click.option(
            "--mailto",
            envvar=settings.MAILTO.env,
            default=None,
            help="Contact address for the User-Agent (env PAPERDESK_MAILTO).",
        ),
        click.option(
            "--on-error",
            type=click.Choice(["stop", "skip"]),
            default="stop",
            show_default=True,
            help="What to do with a record that cannot be parsed.",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print the report as JSON."),
    ]

    @functools.wraps(fn)
    def command(
        *args: Any, interval: float, timeout: float, retries: int, mailto: str | None,
        on_error: OnError, as_json: bool, **kwargs: Any,
    ) -> Any:
        opts = _Harvest(interval, timeout, retries, mailto, on_error, as_json)
        return fn(*args, opts=opts, **kwargs)

    for option in reversed(options):
        command = option(command)
    return command


def _day(value: datetime | None) -> str | None:
    return value.date().isoformat() if value else None


def _print(report: HarvestReport, as_json: bool) -> None:
    if as_json:
        emit_json(report.to_dict())
        return
    how = {
        None: "",
        "token": " (resumed)",
        "offset": " (resumed)",
        "datestamp": " (changes since the last harvest)",
    }[report.resumed]
    state = "complete" if report.complete else "incomplete"
    click.echo(
        f"{report.source}{how}: {report.pages} pages, {report.requests} requests, "
        f"{report.records} records: {report.inserted} new, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.rejected} rejected — {state}"
    )
    for r in report.rejects[:20]:
        click.echo(f"  rejected: {r.origin}, record {r.record_no}: {r.error}", err=True)


@main.group()
def harvest() -> None:
    """Harvest records live (polite: 3 s between requests; resumable: checkpointed)."""
    log = logging.getLogger("paperdesk.harvest")
    if not log.handlers:  # retries and waits are worth seeing on stderr
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("paperdesk: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.WARNING)


@harvest.command("arxiv")
@click.option("--set", "set_spec", default=None, help="OAI set, e.g. cs or physics:hep-th.")
@click.option(
    "--from",
    "from_date",
    type=click.DateTime(["%Y-%m-%d"]),
    default=None,
    help="First datestamp (default: where the last harvest of this set ended).",
)
@click.option(
    "--until",
    type=click.DateTime(["%Y-%m-%d"]),
    default=None,
    help="Last datestamp (default: today).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="arXiv",
    show_default=True,
    help="Metadata format (arXivRaw carries the version history).",
)
@click.option("--url", default=OAI_URL, show_default=True, help="OAI-PMH base URL.")
@_client_options
@pass_ctx
@handle_errors
def harvest_arxiv(
    ctx: Ctx,
    set_spec: str | None,
    from_date: datetime | None,
    until: datetime | None,
    fmt: str,
    url: str,
    opts: _Harvest,
) -> None:
    """Harvest arXiv over OAI-PMH ListRecords, resuming where the last run stopped."""
    opts.run(
        lambda client: harvest_oai(
            ctx.store,
            client,
            base_url=url,
            set_spec=set_spec,
            metadata_prefix=fmt,
            from_date=_day(from_date),
            until=_day(until),
            on_error=opts.on_error,
        )
    )


@harvest.command("arxiv-api")
@click.option("--query", default="", help='arXiv API search_query, e.g. "cat:cs.CL AND ti:llm".')
@click.option("--id-list", default="", help="Comma-separated arXiv ids.")
@click.option(
    "--max",
    "max_results",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many results (the API caps a query at 30,000).",
)
@click.option("--page-size", type=click.IntRange(1, 2000), default=200, show_default=True)
@click.option("--sort-by", type=click.Choice(SORT_BY), default="submittedDate", show_default=True)
@click.option(
    "--sort-order",
    type=click.Choice(["ascending", "descending"]),
    default="descending",
    show_default=True,
)
@click.option("--url", default=API_URL, show_default=True, help="arXiv API URL.")
@_client_options
@pass_ctx
@handle_errors
def harvest_arxiv_api_cmd(
    ctx: Ctx,
    query: str,
    id_list: str,
    max_results: int | None,
    page_size: int,
    sort_by: str,
    sort_order: str,
    url: str,
    opts: _Harvest,
) -> None:
    """Harvest the results of an arXiv API query, page by page."""
    if not query and not id_list:
        raise click.UsageError("give --query or --id-list")
    opts.run(
        lambda client: harvest_arxiv_api(
            ctx.store,
            client,
            query,
            id_list=id_list,
            max_results=max_results,
            page_size=page_size,
            sort_by=sort_by,
            sort_order=sort_order,
            url=url,
            on_error=opts.on_error,
        )
    )


@harvest.command("openreview")
@click.option("--venue", required=True, help="Venue id, e.g. ICLR.cc/2024/Conference.")
@click.option(
    "--invitation",
    default=None,
    help="API v1 submission invitation (default: tried from the venue id).",
)
@click.option("--api2", default=API2_URL, show_default=True, help="API v2 base URL.")
@click.option("--api1", default=API1_URL, show_default=True, help="API v1 base URL.")
@_client_options
@pass_ctx
@handle_errors
def harvest_openreview_cmd(
    ctx: Ctx,
    venue: str,
    invitation: str | None,
    api2: str,
    api1: str,
    opts: _Harvest,
) -> None:
    """Harvest the papers of an OpenReview venue (API v2, falling back to v1)."""
    opts.run(
        lambda client: harvest_openreview(
            ctx.store, client, venue, invitation=invitation, api2=api2, api1=api1,
            on_error=opts.on_error,
        )
    )
