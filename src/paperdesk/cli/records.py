"""`ingest`, `stats`, `records`, `record`: getting records in and looking at them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from paperdesk import sources
from paperdesk.cli import Ctx, emit_json, handle_errors, json_option, main, pass_ctx
from paperdesk.ingest import ingest_paths
from paperdesk.model import SourceRecord
from paperdesk.views import record_json


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(sorted(sources.PARSERS)), default=None,
    help="Parser to use (default: detected from each file's content).",
)
@click.option(
    "--on-error", type=click.Choice(["stop", "skip"]), default="stop", show_default=True,
    help="stop: keep the good records before the first bad one and exit 1; "
    "skip: go on and report every rejected record.",
)
@click.option("--force", is_flag=True, help="Re-read files already ingested to the end.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_ctx
@handle_errors
def ingest(
    ctx: Ctx, paths: tuple[Path, ...], fmt: str | None, on_error: str, force: bool, as_json: bool
) -> None:
    """Ingest files or directories of paper records (format detected from content)."""
    report = ingest_paths(
        ctx.store, paths, fmt=fmt, on_error=on_error, force=force  # type: ignore[arg-type]
    )
    if as_json:
        emit_json(report.to_dict())
        return
    rate = f" ({report.records / report.seconds:,.0f} records/s)" if report.seconds else ""
    click.echo(
        f"{report.files} file(s), {report.files_skipped} unchanged and skipped; "
        f"{report.records:,} records read in {report.seconds:.1f}s{rate}: "
        f"{report.inserted:,} new, {report.updated:,} updated, "
        f"{report.unchanged:,} unchanged, {report.rejected:,} rejected"
    )
    for r in report.rejects[:50]:
        where = f"{r.origin}, record {r.record_no}" if r.record_no else r.origin
        click.echo(f"  rejected: {where}: {r.error}", err=True)
    if len(report.rejects) > 50:
        click.echo(f"  … and {len(report.rejects) - 50} more (see `paperdesk stats`)", err=True)


@main.command()
@json_option
@pass_ctx
@handle_errors
def stats(ctx: Ctx, as_json: bool) -> None:
    """Counts of records by source and format, rejects, checkpoints."""
    data = ctx.store.stats()
    data["recent_rejects"] = [
        {"origin": r.origin, "record_no": r.record_no, "error": r.error}
        for r in ctx.store.list_rejects(20)
    ]
    if as_json:
        emit_json(data)
        return
    click.echo(f"database: {data['db']}")
    click.echo(f"records:  {data['records']:,}")
    for src, n in data["records_by_source"].items():
        click.echo(f"  {src:<16} {n:>10,}")
    click.echo(f"payloads: {data['payloads']:,}")
    for fmt, n in data["payloads_by_format"].items():
        click.echo(f"  {fmt:<16} {n:>10,}")
    fd = data["feed_dates"]
    if fd["first"]:
        click.echo(f"feed days: {fd['first']} … {fd['last']}")
    click.echo(f"rejected: {data['rejected']:,}")
    for r in data["recent_rejects"]:
        click.echo(f"  {r['origin']}, record {r['record_no']}: {r['error']}")
    for name, value in data["checkpoints"].items():
        click.echo(f"checkpoint {name}: {value}")


def _line(rec: SourceRecord | dict[str, Any]) -> str:
    d = rec if isinstance(rec, dict) else rec.to_dict()
    names = ", ".join(a.get("display") or a["name"] for a in d["authors"][:3])
    if len(d["authors"]) > 3:
        names += " et al."
    year = d.get("year") or "----"
    return f"{d['key']:<28} {year}  {(d.get('title') or '(no title)')[:70]}  — {names}"


@main.command()
@click.option("--source", default=None, help="Only records of this source (arxiv, doi, …).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--offset", default=0, type=click.IntRange(0))
@json_option
@pass_ctx
@handle_errors
def records(ctx: Ctx, source: str | None, limit: int, offset: int, as_json: bool) -> None:
    """List stored records, newest first."""
    page = ctx.store.list_records(source, limit=limit, offset=offset)
    if as_json:
        emit_json([record_json(ctx.store, r) for r in page])
        return
    for rec in page:
        click.echo(_line(rec))
    total = ctx.store.count_records(source)
    click.echo(f"({len(page)} of {total:,} shown; --limit/--offset to page)", err=True)


@main.command()
@click.argument("key")
@click.option("--raw", is_flag=True, help="Include every raw payload as received.")
@json_option
@pass_ctx
@handle_errors
def record(ctx: Ctx, key: str, raw: bool, as_json: bool) -> None:
    """Show one record by key SOURCE:ID (e.g. arxiv:2503.11677, doi:10.1145/…)."""
    rec = ctx.store.get_record(_canonical_key(key))
    data = record_json(ctx.store, rec, payloads=raw)
    if as_json:
        emit_json(data)
        return
    click.echo(_line(data))
    for field in ("url", "doi", "journal_ref", "venue", "categories", "submitted", "updated"):
        if data.get(field):
            click.echo(f"  {field}: {data[field]}")
    for v in data["versions"]:
        click.echo(f"  {v['version']}: {v['date']}")
    if data.get("abstract"):
        click.echo("")
        click.echo(data["abstract_text"] or data["abstract"])


def _canonical_key(key: str) -> str:
    """Accept what users paste: `arxiv:2401.01234v2`, `doi:https://doi.org/10.…`."""
    from paperdesk.normalize.ids import arxiv_id, normalize_doi

    source, _, sid = key.partition(":")
    if source == "arxiv":
        sid = arxiv_id(sid) or sid
    elif source == "doi":
        sid = normalize_doi(sid) or sid
    return f"{source}:{sid}"
