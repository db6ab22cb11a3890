"""`paperdesk serve`: the web site and JSON API on the embedded default."""

from __future__ import annotations

import click

from paperdesk import settings
from paperdesk.cli import Ctx, emit_rows, handle_errors, json_option, main, pass_ctx


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes (SQLite reads scale across them).")
@click.option("--background-stages", is_flag=True,
              help="Also run every stage after ingest (`paperdesk pipeline`) in a process of"
              " its own while serving; pages improve as each stage commits, /api/status"
              " says how far it is.")
@pass_ctx
@handle_errors
def serve(ctx: Ctx, host: str, port: int, workers: int, background_stages: bool) -> None:
    """Serve the site and the JSON API (http://HOST:PORT, OpenAPI at /openapi.json)."""
    import os
    import signal
    import subprocess
    import sys

    import uvicorn

    ctx.store  # open (and migrate) once before the server starts  # noqa: B018
    os.environ[settings.DB.env] = str(ctx.db)  # what the server's workers open
    # Feeds' absolute links: the configured public address, else this server's own.
    os.environ.setdefault(settings.BASE_URL.env, f"http://{host}:{port}/")
    stages = None
    if background_stages:
        stages = subprocess.Popen(  # noqa: S603 (our own interpreter and CLI)
            [sys.executable, "-m", "paperdesk", "--db", str(ctx.db), "pipeline"],
            start_new_session=True,  # its own group: its helper processes stop with it
        )
        click.echo(f"paperdesk: running the stages in the background (pid {stages.pid})",
                   err=True)

        def stop(signum: int, frame: object) -> None:
            raise SystemExit(128 + signum)

        # uvicorn shuts down on SIGTERM, then raises it again with the handler it found:
        # this one, so that the `finally` below stops the stages too.
        signal.signal(signal.SIGTERM, stop)
    click.echo(f"paperdesk: serving {getattr(ctx.store, 'name', ctx.db)} on http://{host}:{port}/", err=True)
    try:
        uvicorn.run(
            "paperdesk.web.asgi:app", host=host, port=port, workers=workers,
            log_level="warning", proxy_headers=False,
        )
    finally:
        # The stages commit batch by batch: stopping them mid-stage leaves a store the
        # next run (`paperdesk pipeline`, or this again) finishes.
        if stages is not None and stages.poll() is None:
            os.killpg(stages.pid, signal.SIGTERM)
            try:
                stages.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(stages.pid, signal.SIGKILL)
                stages.wait()


@main.group()
def curator() -> None:
    """Curator accounts for the web site (who may apply corrections)."""


@curator.command("add")
@click.argument("username")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input.")
@pass_ctx
@handle_errors
def curator_add(ctx: Ctx, username: str, password_stdin: bool) -> None:
    """Create a curator account, or reset its password."""
    from paperdesk.cli import read_password
    from paperdesk.store.curators import add_curator

    add_curator(ctx.store, username, read_password(password_stdin))
    click.echo(f"curator {username} can now sign in at /login", err=True)


@curator.command("list")
@json_option
@pass_ctx
@handle_errors
def curator_list(ctx: Ctx, as_json: bool) -> None:
    """List curator accounts."""
    from paperdesk.store.curators import list_curators

    emit_rows(list_curators(ctx.store), as_json,
              lambda r: f"{r['username']:<24} since {r['created_at']}")
