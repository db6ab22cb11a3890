"""`author NAME`, `authors --query TEXT`, `author merge|split|claim|curations`: profiles."""

from __future__ import annotations

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
from paperdesk.cli.works import _WorkGroup as _ShowByDefault
from paperdesk.errors import NotFoundError


# `author NAME` shows profiles, `author merge|split|claim|curations` are subcommands:
# the same dispatch as `work ID` / `work merge …`.
@main.group(cls=_ShowByDefault)
def author() -> None:
    """Show author profiles (`author "Yoshua Bengio" --json`) or correct them."""


@author.command("show")
@click.argument("name", nargs=-1, required=True)
@click.option("--limit", default=10, show_default=True, help="At most this many profiles.")
@click.option("--max-works", default=None, type=int, help="At most this many works each.")
@json_option
@pass_ctx
@handle_errors
def show(
    ctx: Ctx, name: tuple[str, ...], limit: int, max_works: int | None, as_json: bool
) -> None:
    """Profiles matching a name (or an author id), with their works."""
    text = " ".join(name)
    from paperdesk.resolve.authors_profiles import AUTHOR_ID, find_authors, profile

    ids = find_authors(ctx.store, text, limit=limit)
    if not ids and AUTHOR_ID.fullmatch(text.strip()):
        raise NotFoundError(f"no author {text.strip()}")
    found = [profile(ctx.store, a, max_works=max_works) for a in ids]
    if as_json:
        emit_json({"query": text, "profiles": found})
        return
    if not found:
        click.echo(f"no author profile matches {text!r} (has `paperdesk resolve` run?)")
        return
    for p in found:
        click.echo(f"{p['author_id']}  {p['name']}  ({p['records_count_text']})")
        others = [v["name"] for v in p["variants"] if v["name"] != p["name"]]
        if others:
            click.echo(f"  also written: {', '.join(others)}")
        click.echo(f"  {p['heading']}:")
        for w in p["works"]:
            for r in w["records"]:
                click.echo(
                    f"    {r['year'] or '':<5} {r['source']:<10} {(r['title'] or '')[:70]}"
                    f"  {r['url'] or r['key']}"
                )
        if p["coauthors"]:
            co = ", ".join(c["name"] for c in p["coauthors"][:8])
            click.echo(f"  co-authors: {co}")


@main.command("authors")
@click.option("--query", "-q", required=True, help="Words of the name to look for.")
@click.option("--limit", default=20, show_default=True)
@json_option
@pass_ctx
@handle_errors
def authors_cmd(ctx: Ctx, query: str, limit: int, as_json: bool) -> None:
    """Search author profiles by name."""
    from paperdesk.resolve.authors_profiles import search_authors

    hits = search_authors(ctx.store, query, limit=limit)
    if as_json:
        emit_json({"query": query, "profiles": hits})
        return
    for h in hits:
        click.echo(f"{h['author_id']}  {h['name']}  ({h['records_count_text']})")


@author.command("merge")
@click.argument("a")
@click.argument("b")
@who_option
@json_option
@pass_ctx
@handle_errors
def merge(ctx: Ctx, a: str, b: str, who: str | None, as_json: bool) -> None:
    """A and B are one person (kept on every later resolve)."""
    from paperdesk.resolve.authors_curate import merge_authors

    out = merge_authors(ctx.store, a, b, who=who_or_login(who))
    emit(out, as_json, f"merged {a} and {b} into {out['author_id']} (curation {out['curation']})")


@author.command("split")
@click.argument("author_id")
@click.option("--works", "works", multiple=True, required=True,
              help="Record keys (SOURCE:ID) or work ids to move to another person.")
@click.argument("more", nargs=-1)
@who_option
@json_option
@pass_ctx
@handle_errors
def split(
    ctx: Ctx,
    author_id: str,
    works: tuple[str, ...],
    more: tuple[str, ...],
    who: str | None,
    as_json: bool,
) -> None:
    """The given works are by someone else than AUTHOR_ID (kept on every later resolve)."""
    from paperdesk.resolve.authors_curate import split_author

    out = split_author(ctx.store, author_id, [*works, *more], who=who_or_login(who))
    emit(
        out, as_json,
        f"split {author_id}: kept as {out['author_id']}, moved to {out['new_author_id']}"
        f" (curation {out['curation']})",
    )


@author.command("claim")
@click.argument("author_id")
@click.argument("record_key")
@click.option("--position", type=int, default=None,
              help="Author position on the record (0-based) when the name does not decide.")
@who_option
@json_option
@pass_ctx
@handle_errors
def claim(
    ctx: Ctx, author_id: str, record_key: str, position: int | None, who: str | None,
    as_json: bool,
) -> None:
    """RECORD_KEY is by AUTHOR_ID (kept on every later resolve)."""
    from paperdesk.resolve.authors_curate import claim_record

    out = claim_record(ctx.store, author_id, record_key, position=position, who=who_or_login(who))
    emit(out, as_json, f"{record_key} attributed to {out['author_id']} (curation {out['curation']})")


@author.command("curations")
@json_option
@pass_ctx
@handle_errors
def curations(ctx: Ctx, as_json: bool) -> None:
    """The log of author corrections: what, who, when."""
    rows = [
        {"id": c.id, "action": c.action, "args": c.args, "who": c.who, "at": c.at,
         "signatures": sum(len(g) for g in c.groups)}
        for c in ctx.store.authors.list_curations()
    ]
    emit_rows(rows, as_json,
              lambda r: f"{r['id']:>4} {r['at']} {r['who']:<12} {r['action']:<6} {r['args']}")
