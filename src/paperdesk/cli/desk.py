"""The personal desk on the command line: `user`, `library`, `recommend`, `feedback`,
`follow`, `saved-search`, `feed-token`, `digest` (issue 20; docs/cli.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from paperdesk.cli import (
    Ctx,
    emit_json,
    emit_rows,
    handle_errors,
    json_option,
    main,
    pass_ctx,
    read_password,
)

# -- accounts ------------------------------------------------------------------------------

@main.group()
def user() -> None:
    """User accounts: each has a desk (library, recommendations, feeds); curators may also
    apply corrections."""


@user.command("add")
@click.argument("username")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@click.option("--curator", "is_curator", is_flag=True, help="Give the account the curator role.")
@click.option("--email", default=None, help="Address for the daily digest.")
@pass_ctx
@handle_errors
def user_add(ctx: Ctx, username: str, password_stdin: bool, is_curator: bool, email: str | None) -> None:
    """Create an account (a password of at least 10 characters)."""
    from paperdesk.desk.digest import set_email
    from paperdesk.store import curators

    curators.add_user(ctx.store, username, read_password(password_stdin),
                      "curator" if is_curator else "user")
    if email:
        set_email(ctx.store, username, email, digest=True)
    click.echo(f"user {username} can now sign in at /login", err=True)


@user.command("password")
@click.argument("username")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@pass_ctx
@handle_errors
def user_password(ctx: Ctx, username: str, password_stdin: bool) -> None:
    """Set a new password (every session of the account ends)."""
    from paperdesk.store import curators

    curators.set_password(ctx.store, username, read_password(password_stdin))


@user.command("role")
@click.argument("username")
@click.argument("role", type=click.Choice(["user", "curator"]))
@pass_ctx
@handle_errors
def user_role(ctx: Ctx, username: str, role: str) -> None:
    """Make an account a curator, or a plain user again."""
    from paperdesk.store import curators

    curators.set_role(ctx.store, username, role)


@user.command("list")
@json_option
@pass_ctx
@handle_errors
def user_list(ctx: Ctx, as_json: bool) -> None:
    """List accounts: `[{"username", "role", "created_at", "email", "digest"}]`."""
    from paperdesk.store import curators

    emit_rows(curators.list_users(ctx.store), as_json,
              lambda r: f"{r['username']:<24} {r['role']:<8} since {r['created_at']}")


@user.command("remove")
@click.argument("username")
@pass_ctx
@handle_errors
def user_remove(ctx: Ctx, username: str) -> None:
    """Delete an account with its library, own records, feedback, feeds and sessions."""
    from paperdesk.store import curators

    curators.remove_user(ctx.store, username)
    click.echo(f"user {username} removed", err=True)


# -- library -------------------------------------------------------------------------------

@main.group()
def library() -> None:
    """A user's saved works: add, remove, list, tag, import and export."""


_USER = click.option("--user", "username", required=True, help="Whose library.")


def _print_changes(rows: list[dict[str, Any]], key: str, as_json: bool) -> None:
    def line(r: dict[str, Any]) -> str:
        done = "yes" if r[key] else "already" if key == "added" else "no"
        return f"{r['ref']:<28} {r['item']:<16} {done}"

    emit_rows(rows, as_json, line)


@library.command("add")
@_USER
@click.argument("refs", nargs=-1, required=True)
@json_option
@pass_ctx
@handle_errors
def library_add(ctx: Ctx, username: str, refs: tuple[str, ...], as_json: bool) -> None:
    """Save works (W123) or records (SOURCE:ID)."""
    from paperdesk.desk import library as lib

    _print_changes(lib.add(ctx.store, username, list(refs)), "added", as_json)


@library.command("remove")
@_USER
@click.argument("refs", nargs=-1, required=True)
@json_option
@pass_ctx
@handle_errors
def library_remove(ctx: Ctx, username: str, refs: tuple[str, ...], as_json: bool) -> None:
    """Unsave works, records or own records (mine:N)."""
    from paperdesk.desk import library as lib

    _print_changes(lib.remove(ctx.store, username, list(refs)), "removed", as_json)


@library.command("list")
@_USER
@click.option("--tag", default=None, help="Only items with this tag.")
@json_option
@pass_ctx
@handle_errors
def library_list(ctx: Ctx, username: str, tag: str | None, as_json: bool) -> None:
    """The library, newest first."""
    from paperdesk.desk import library as lib

    def line(r: dict[str, Any]) -> str:
        marks = ("read " if r["read_at"] else "") + " ".join(f"#{t}" for t in r["tags"])
        return f"{r['item']:<12} {r['year'] or '':<5} {r['title'][:80]}  {marks}".rstrip()

    emit_rows(lib.items(ctx.store, username, tag), as_json, line)


@library.command("tag")
@_USER
@click.argument("ref")
@click.argument("tags", nargs=-1)
@click.option("--note", default=None, help="Set the item's note ('' clears it).")
@click.option("--read/--unread", default=None, help="Mark read or unread.")
@json_option
@pass_ctx
@handle_errors
def library_tag(ctx: Ctx, username: str, ref: str, tags: tuple[str, ...], note: str | None,
                read: bool | None, as_json: bool) -> None:
    """Set a saved item's tags (replacing its old ones when any are given), note, read mark."""
    from paperdesk.desk import library as lib

    out = lib.update(ctx.store, username, ref, tags=list(tags) if tags else None, note=note, read=read)
    if as_json:
        emit_json(out)


@library.command("import")
@_USER
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
@pass_ctx
@handle_errors
def library_import(ctx: Ctx, username: str, file: Path, as_json: bool) -> None:
    """Import BibTeX, RIS, CSL-JSON or a Zotero JSON export; report how each entry matched."""
    from paperdesk.desk.importer import import_library

    out = import_library(ctx.store, username, file.read_bytes())
    if as_json:
        emit_json(out)
        return
    for r in out["report"]:
        click.echo(f"{r['entry'][:30]:<30} {r['matched']:<14} {r['item']:<12} {(r['title'] or '')[:60]}")
    by = ", ".join(f"{n} {k}" for k, n in sorted(out["by"].items()))
    click.echo(f"{out['entries']} {out['format']} entries: {by}", err=True)


@library.command("export")
@_USER
@click.option("--format", "fmt", type=click.Choice(["bibtex", "ris", "csl"]), default="bibtex",
              show_default=True)
@click.option("--tag", default=None, help="Only items with this tag.")
@pass_ctx
@handle_errors
def library_export(ctx: Ctx, username: str, fmt: str, tag: str | None) -> None:
    """Write the library as BibTeX, RIS or CSL-JSON to standard output."""
    from paperdesk.desk.library import export_library

    sys.stdout.write(export_library(ctx.store, username, fmt, tag))


# -- recommendations, feedback, follows -------------------------------------------------------

@main.command()
@_USER
@click.option("--since", default=None, help="First day (YYYY-MM-DD; default: --until).")
@click.option("--until", default=None, help="Last day (default: the newest day in the store).")
@click.option("--subject", default=None, help="Only works in this subject (cs.LG, math …).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@click.option("--new-only", is_flag=True, help="Leave out works shown to the user before.")
@click.option("--mark-seen", is_flag=True, help="Record the hits as shown (for --new-only later).")
@json_option
@pass_ctx
@handle_errors
def recommend(ctx: Ctx, username: str, since: str | None, until: str | None, subject: str | None,
              limit: int, new_only: bool, mark_seen: bool, as_json: bool) -> None:
    """Works that appeared in a date range, ranked for a user, with the reasons."""
    from paperdesk.desk.recommend import recommend as rank

    out = rank(ctx.store, username, since=since, until=until, subject=subject, limit=limit,
               new_only=new_only, mark_seen=mark_seen)
    if as_json:
        for h in out["hits"]:
            h.pop("abstract", None)
        emit_json(out)
        return
    click.echo(f"for {out['user']}: {out['since']} .. {out['until']}", err=True)
    for n, h in enumerate(out["hits"], 1):
        click.echo(f"{n:>3}. {h['work_id']:<10} {h['score']:>7.2f}  {h['title'][:90]}")
        for r in h["reasons"]:
            click.echo(f"               {r}")


@main.command()
@_USER
@click.option("--relevant", "label", flag_value=1, help="These works are what the user wants.")
@click.option("--not-relevant", "label", flag_value=-1, help="Never recommend these; rank works like them lower.")
@click.option("--clear", "label", flag_value=0, help="Forget the ratings.")
@click.argument("refs", nargs=-1, required=True)
@json_option
@pass_ctx
@handle_errors
def feedback(ctx: Ctx, username: str, label: int | None, refs: tuple[str, ...], as_json: bool) -> None:
    """Rate works for the user's recommendations."""
    from paperdesk.desk.recommend import feedback as rate

    if label is None:
        raise click.UsageError("say --relevant, --not-relevant or --clear")
    out = rate(ctx.store, username, list(refs), label or None)
    if as_json:
        emit_json(out)


@main.command()
@_USER
@click.option("--author", default=None, help="An author's name or profile id (a1b2c3d4e5f).")
@click.option("--subject", default=None, help="An arXiv subject (cs.CV, math …).")
@click.option("--list", "listing", is_flag=True, help="List what the user follows.")
@json_option
@pass_ctx
@handle_errors
def follow(ctx: Ctx, username: str, author: str | None, subject: str | None, listing: bool,
           as_json: bool) -> None:
    """Follow an author or a subject: their works rank higher in the user's recommendations."""
    from paperdesk.desk.recommend import follow as do_follow
    from paperdesk.desk.recommend import follows

    if listing:
        emit_rows(
            follows(ctx.store, username), as_json,
            lambda r: f"{r['kind']:<8} {r['label']}" + (f"  ({r['value']})" if r["value"] != r["label"] else ""),
        )
        return
    if bool(author) == bool(subject):
        raise click.UsageError("give one of --author or --subject (or --list)")
    out = do_follow(ctx.store, username, "author" if author else "subject", str(author or subject))
    if as_json:
        emit_json(out)
    elif out.get("matched") == "profile":
        click.echo(f"following {out['label']} (profile {out['value']})", err=True)
    elif out["kind"] == "author":
        click.echo(f"no author profile is named {out['label']!r}: following the name, spelt in full", err=True)


@main.command()
@_USER
@click.option("--author", default=None)
@click.option("--subject", default=None)
@json_option
@pass_ctx
@handle_errors
def unfollow(ctx: Ctx, username: str, author: str | None, subject: str | None, as_json: bool) -> None:
    """Stop following an author or a subject."""
    from paperdesk.desk.recommend import follow as do_follow

    if bool(author) == bool(subject):
        raise click.UsageError("give one of --author or --subject")
    out = do_follow(ctx.store, username, "author" if author else "subject", str(author or subject), on=False)
    if as_json:
        emit_json(out)


# -- saved searches, feed tokens, digest ---------------------------------------------------------

@main.group("saved-search")
def saved_search() -> None:
    """Saved searches: `diffusion -medical cat:cs.CV` (the search language), each with a feed."""


@saved_search.command("add")
@_USER
@click.argument("name")
@click.argument("query")
@json_option
@pass_ctx
@handle_errors
def saved_add(ctx: Ctx, username: str, name: str, query: str, as_json: bool) -> None:
    """Save a search under a name."""
    from paperdesk.desk.feeds import save_search

    out = save_search(ctx.store, username, name, query)
    if as_json:
        emit_json(out)


@saved_search.command("list")
@_USER
@json_option
@pass_ctx
@handle_errors
def saved_list(ctx: Ctx, username: str, as_json: bool) -> None:
    """The user's saved searches."""
    from paperdesk.desk.feeds import searches

    emit_rows(searches(ctx.store, username), as_json, lambda r: f"{r['name']:<24} {r['query']}")


@saved_search.command("remove")
@_USER
@click.argument("name")
@pass_ctx
@handle_errors
def saved_remove(ctx: Ctx, username: str, name: str) -> None:
    """Delete a saved search (and revoke its feed tokens)."""
    from paperdesk.desk.feeds import remove_search

    remove_search(ctx.store, username, name)


@saved_search.command("run")
@_USER
@click.argument("name")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 500))
@json_option
@pass_ctx
@handle_errors
def saved_run(ctx: Ctx, username: str, name: str, limit: int, as_json: bool) -> None:
    """The saved search's works, newest first (needs the search index: `paperdesk reindex`)."""
    from paperdesk.desk.feeds import run_search

    out = run_search(ctx.store, username, name, limit)
    if as_json:
        emit_json(out)
        return
    for h in out["hits"]:
        click.echo(f"{h['work_id']:<10} {h['date'] or '':<10} {'new ' if h['new'] else '    '}{(h['title'] or '')[:90]}")


@main.group("feed-token")
def feed_token() -> None:
    """Secret Atom feed addresses: the personal feed or a saved search's (revocable)."""


@feed_token.command("new")
@_USER
@click.option("--search", default=None, help="A saved search's feed (default: the personal feed).")
@json_option
@pass_ctx
@handle_errors
def token_new(ctx: Ctx, username: str, search: str | None, as_json: bool) -> None:
    """Make a feed address; its token is shown this once."""
    from paperdesk.desk.feeds import new_token

    out = new_token(ctx.store, username, search)
    if as_json:
        emit_json(out)
        return
    click.echo(out["path"])
    click.echo(f"token id {out['id']} ({out['scope']}): keep the address secret; "
               f"`paperdesk feed-token revoke --user {username} {out['id']}` ends it", err=True)


@feed_token.command("list")
@_USER
@json_option
@pass_ctx
@handle_errors
def token_list(ctx: Ctx, username: str, as_json: bool) -> None:
    """The user's feed tokens (ids and scopes; the tokens themselves are not kept)."""
    from paperdesk.desk.feeds import tokens

    emit_rows(tokens(ctx.store, username), as_json,
              lambda r: f"{r['id']}  {r['scope']:<30} since {r['created_at']}")


@feed_token.command("revoke")
@_USER
@click.argument("token_id", required=False)
@click.option("--search", default=None, help="Revoke every token of this saved search.")
@click.option("--all", "everything", is_flag=True, help="Revoke every token of the user.")
@json_option
@pass_ctx
@handle_errors
def token_revoke(ctx: Ctx, username: str, token_id: str | None, search: str | None, everything: bool,
                 as_json: bool) -> None:
    """Revoke a feed token (by id), a search's tokens, or all of them."""
    from paperdesk.desk.feeds import revoke

    if not (token_id or search or everything):
        raise click.UsageError("name a token id, --search NAME or --all")
    n = revoke(ctx.store, username, token_id, search)
    if as_json:
        emit_json({"user": username, "revoked": n})
    else:
        click.echo(f"{n} token(s) revoked", err=True)


@main.command()
@click.option("--user", "username", default=None, help="Only this user (default: everyone who asked for it).")
@click.option("--since", default=None, help="First day ranked (default: the newest day).")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 200))
@click.option("--dry-run", is_flag=True, help="Say what would be sent; send nothing, mark nothing.")
@json_option
@pass_ctx
@handle_errors
def digest(ctx: Ctx, username: str | None, since: str | None, limit: int, dry_run: bool, as_json: bool) -> None:
    """E-mail each user their new recommendations (SMTP settings: docs/settings.md; run it daily)."""
    from paperdesk import settings
    from paperdesk.desk.digest import send_digests

    base = settings.BASE_URL.get() or "http://127.0.0.1:8000/"
    out = send_digests(ctx.store, base_url=base, username=username, since=since, limit=limit, dry_run=dry_run)
    emit_rows(
        out, as_json,
        lambda r: f"{r['user']:<20} {r['email']:<30} {r['hits']:>3} new  {'sent' if r['sent'] else 'not sent'}",
    )
