"""`db init`, `db copy`: creating a store's schema and moving a store between backends."""

from __future__ import annotations

import click

from paperdesk.cli import Ctx, emit_json, handle_errors, main, pass_ctx
from paperdesk.store import open_store


@main.group("db")
def db_group() -> None:
    """The store itself: its schema, and copies between backends."""


@db_group.command("init")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
@handle_errors
def db_init(ctx: Ctx, as_json: bool) -> None:
    """Create the store's schema (or apply the migrations it lacks) and say which."""
    store = open_store(ctx.db)  # opening migrates
    applied = store.applied
    store.close()
    name = getattr(store, "name", str(ctx.db))
    if as_json:
        emit_json({"db": name, "backend": store.dialect, "applied": applied})
        return
    if applied:
        click.echo(f"{name}: applied {len(applied)} migration(s): {', '.join(applied)}")
    else:
        click.echo(f"{name}: schema up to date")


@db_group.command("copy")
@click.argument("src")
@click.argument("dst")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@handle_errors
def db_copy(src: str, dst: str, as_json: bool) -> None:
    """Copy the whole store SRC into the empty store DST (each a SQLite path or a
    postgresql:// URL): records, payloads, curations, users and the derived tables, with
    their ids; the search index files are copied beside DST."""
    from paperdesk.store.copy import copy_store

    source, target = open_store(src), open_store(dst)
    try:
        report = copy_store(
            source, target,
            note=None if as_json else lambda t, n: click.echo(f"  {t}: {n:,} row(s)", err=True),
        )
    finally:
        source.close()
        target.close()
    if as_json:
        emit_json(report)
        return
    total = sum(report["tables"].values())
    click.echo(f"copied {total:,} row(s) of {len(report['tables'])} table(s)")
    for key, label in (("only_in_source", "not copied (DST lacks them)"),
                       ("only_in_destination", "left empty (SRC lacks them)")):
        if report[key]:
            click.echo(f"{label}: {', '.join(report[key])}")
