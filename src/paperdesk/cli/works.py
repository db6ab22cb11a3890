"""`resolve`, `work ID`, `work merge A B`, `work split ID KEY…`: works from the command line."""

from __future__ import annotations

from typing import Any

import click

from paperdesk.cli import (
    Ctx,
    emit,
    emit_json,
    emit_rows,
    handle_errors,
    json_option,
    main,
    pass_ctx,
    who_option,
    who_or_login,
)
from paperdesk.resolve.works_curate import get_work, list_curations, merge_works, split_work


@main.command()
@click.option("--full", is_flag=True, help="Re-cluster every record (keeps work ids).")
@click.option("--works-only", is_flag=True, help="Skip the author stage.")
@click.option("--no-index", is_flag=True, help="Do not bring the search index up to date.")
@json_option
@pass_ctx
@handle_errors
def resolve(ctx: Ctx, full: bool, works_only: bool, no_index: bool, as_json: bool) -> None:
    """Group new records into works (and authors into profiles), incrementally; then
    bring the search index up to date with the new and changed works."""
    from paperdesk import pipeline

    stages = ["works"] + ([] if works_only else ["authors"]) + ([] if no_index else ["search"])
    report: dict[str, Any] = {
        ("index" if k == "search" else k): v
        for k, v in pipeline.run(ctx.store, stages, full=full).items()
    }
    if "authors" in report and "skipped" in report["authors"]:
        click.echo(f"warning: authors: {report['authors']['skipped']}", err=True)
    elif "authors" in report and not report["authors"]["nickname_pairs"]:
        click.echo(
            "warning: no given-name variant pairs file was found (see PAPERDESK_NAME_VARIANTS"
            " in docs/cli.md): nicknames such as Chris/Christopher are not joined",
            err=True,
        )
    if as_json:
        emit_json(report)
        return
    w = report["works"]
    click.echo(
        f"works: {w['records']:,} record(s) resolved in {w['seconds']:.1f}s: "
        f"{w['new_works']:,} new work(s), {w['by_identity']:,} joined by identifier, "
        f"{w['by_content']:,} by content, {w['works_merged']:,} work(s) merged"
    )
    if "authors" in report and "skipped" not in report["authors"]:
        a = report["authors"]
        click.echo(
            f"authors: {a['signatures']:,} signature(s) of {a['records']:,} record(s) in "
            f"{a['blocks']:,} name block(s): {a['profiles_created']:,} profile(s) created, "
            f"{a['profiles_removed']:,} removed, {a['profiles_total']:,} in all"
        )
    if "index" in report:
        i = report["index"]
        click.echo(
            f"search index: {i['works_indexed']:,} work(s) indexed, "
            f"{i['vectors_computed']:,} vector(s) computed in {i['seconds']:.1f}s"
        )


@main.command("pipeline")
@click.option("--stage", "stages", multiple=True, type=click.Choice(["works", "authors", "subjects", "search"]),
              help="Run only these stages (repeatable; default: every stage, in order).")
@click.option("--full", is_flag=True, help="Re-run works, authors and subjects over every record.")
@json_option
@pass_ctx
@handle_errors
def pipeline_cmd(ctx: Ctx, stages: tuple[str, ...], full: bool, as_json: bool) -> None:
    """Run every stage after ingest, in order and incrementally: works, authors,
    subjects, search. Progress is kept in the store for `paperdesk status` and
    /api/status; a killed run is finished by the next."""
    from paperdesk import pipeline

    def said(name: str, seconds: float, report: dict[str, Any]) -> None:
        if not as_json:
            click.echo(f"{name}: done in {seconds:.1f}s", err=True)

    reports = pipeline.run(ctx.store, stages or pipeline.STAGES, full=full, on_stage=said)
    if as_json:
        emit_json(reports)


@main.command("status")
@json_option
@pass_ctx
@handle_errors
def status_cmd(ctx: Ctx, as_json: bool) -> None:
    """What the latest pipeline run did or is doing (the same as /api/status)."""
    from paperdesk import pipeline

    st = pipeline.status(ctx.store)
    if as_json:
        emit_json(st)
        return
    click.echo(f"pipeline: {st['state']}" + (f" ({st['error']})" if st["error"] else ""))
    for s in st["stages"]:
        took = f" in {s['seconds']:.1f}s" if s["seconds"] is not None else ""
        click.echo(f"  {s['name']:<9} {s['state']}{took}")


class _WorkGroup(click.Group):
    """`work ID` shows a work; `work merge|split|curations …` are subcommands."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().resolve_command(ctx, args)


@main.group(cls=_WorkGroup)
def work() -> None:
    """Show a work (`work W12 --json`) or correct the grouping (merge, split)."""


@work.command("show")
@click.argument("work_id")
@json_option
@pass_ctx
@handle_errors
def show(ctx: Ctx, work_id: str, as_json: bool) -> None:
    """A work with all its source records."""
    w = get_work(ctx.store, work_id)
    from paperdesk.catalog import display_titles

    shown = display_titles(ctx.store, [w["work_id"]]).get(w["work_id"])
    w["display_title"], w["display_title_from"] = shown or (w["title"] or w["work_id"], "title")
    if as_json:
        emit_json(w)
        return
    if w["redirected_from"]:
        click.echo(f"({w['redirected_from']} was merged into {w['work_id']})")
    click.echo(f"{w['work_id']}  {w['display_title']}")
    for r in w["records"]:
        click.echo(
            f"  {r['key']:<32} {r['year'] or '':<5} {r['matched_by']:<12} "
            f"{(r['title'] or '')[:70]}  {r['url'] or ''}"
        )


@work.command("merge")
@click.argument("a")
@click.argument("b")
@who_option
@click.option("--note", default=None)
@json_option
@pass_ctx
@handle_errors
def merge(ctx: Ctx, a: str, b: str, who: str | None, note: str | None, as_json: bool) -> None:
    """Merge work B into work A (B redirects to A); kept for every later resolve."""
    wid = merge_works(ctx.store, a, b, who=who_or_login(who), note=note)
    emit({"work_id": wid}, as_json, f"merged {b} into {wid}")


@work.command("split")
@click.argument("work_id")
@click.argument("keys", nargs=-1, required=True)
@who_option
@click.option("--note", default=None)
@json_option
@pass_ctx
@handle_errors
def split(
    ctx: Ctx,
    work_id: str,
    keys: tuple[str, ...],
    who: str | None,
    note: str | None,
    as_json: bool,
) -> None:
    """Move records KEYS out of WORK_ID into a new work; kept for every later resolve."""
    new = split_work(ctx.store, work_id, keys, who=who_or_login(who), note=note)
    emit({"work_id": new}, as_json, f"moved {len(keys)} record(s) to {new}")


@work.command("curations")
@json_option
@pass_ctx
@handle_errors
def curations(ctx: Ctx, as_json: bool) -> None:
    """The log of work merges and splits (who, when, which records)."""
    emit_rows(
        list_curations(ctx.store), as_json,
        lambda c: f"#{c['id']} {c['at']} {c['who']}: {c['action']} {c['work_a']} {c['work_b']}",
    )
