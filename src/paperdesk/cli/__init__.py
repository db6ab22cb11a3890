"""`paperdesk [--db PATH] COMMAND …` — a thin skin over the library.

Each command parses its arguments, calls one library function and prints the result
(human text, or JSON with `--json`); `PaperdeskError`s become one-line messages with a
non-zero exit (1 = error, 2 = usage, 3 = not found). Areas add their commands in their own
modules (`cli/<area>.py`), imported at the bottom of this file.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from paperdesk import __version__
from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store import default_db_path, open_store
from paperdesk.store.sqlite import SQLiteStore

F = TypeVar("F", bound=Callable[..., Any])


class Ctx:
    """What the group passes to every command: the db path, opened lazily."""

    def __init__(self, db: Path):
        self.db = db
        self._store: SQLiteStore | None = None

    @property
    def store(self) -> SQLiteStore:
        if self._store is None:
            self._store = open_store(self.db)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def emit_json(data: Any) -> None:
    """Print JSON to stdout (indented, UTF-8, non-str keys allowed)."""
    sys.stdout.write(
        orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n"
    )


def emit_jsonl(data: Any) -> None:
    """One compact JSON document per line (for streams of results)."""
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode() + "\n")
    sys.stdout.flush()


def handle_errors(fn: F) -> F:
    """Map PaperdeskError to a clear message on stderr and an exit code."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except NotFoundError as exc:
            click.echo(f"paperdesk: {exc}", err=True)
            sys.exit(3)
        except PaperdeskError as exc:
            click.echo(f"paperdesk: error: {exc}", err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


pass_ctx = click.make_pass_decorator(Ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="PAPERDESK_DB",
    default=None,
    help="SQLite database file (env PAPERDESK_DB; default ~/.local/share/paperdesk/paperdesk.db).",
)
@click.version_option(__version__, prog_name="paperdesk")
@click.pass_context
def main(ctx: click.Context, db: Path | None) -> None:
    """paperdesk: a self-hosted index of research papers."""
    obj = Ctx(db or default_db_path())
    ctx.obj = obj
    ctx.call_on_close(obj.close)


# Command modules, one per area; a module still being written is simply absent.
for _area in ("records", "harvest", "works", "authors", "subjects", "search", "web"):
    try:
        importlib.import_module(f"paperdesk.cli.{_area}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"paperdesk.cli.{_area}":
            raise
