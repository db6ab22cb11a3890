"""`paperdesk serve`: the web site and JSON API on the embedded default."""

from __future__ import annotations

import click

from paperdesk.cli import Ctx, handle_errors, main, pass_ctx


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Server processes (SQLite reads scale across them).")
@pass_ctx
@handle_errors
def serve(ctx: Ctx, host: str, port: int, workers: int) -> None:
    """Serve the site and the JSON API (http://HOST:PORT, OpenAPI at /openapi.json)."""
    import os

    import uvicorn

    ctx.store  # open (and migrate) once before the server starts  # noqa: B018
    os.environ["PAPERDESK_DB"] = str(ctx.db)
    click.echo(f"paperdesk: serving {ctx.db} on http://{host}:{port}/", err=True)
    uvicorn.run(
        "paperdesk.web.asgi:app", host=host, port=port, workers=workers,
        log_level="warning", proxy_headers=False,
    )
