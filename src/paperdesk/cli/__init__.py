"""`paperdesk [--db PATH] COMMAND …` — a thin skin over the library.

Each command parses its arguments, calls one library function and prints the result
(human text, or JSON with `--json`); `PaperdeskError`s become one-line messages with a
non-zero exit (1 = error, 2 = usage, 3 = not found). Areas add their commands in their own
modules (`cli/<area>.py`), imported at the bottom of this file.
"""

from __future__ import annotations

import getpass
import importlib
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from paperdesk import __version__, settings
from paperdesk.errors import NotFoundError, PaperdeskError
from paperdesk.store import default_db_path, open_store
from paperdesk.store.base import Store

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")


class Ctx:
    """What the group passes to every command: the db path, opened lazily."""

    def __init__(self, db: str | Path):
        self.db = db
        self._store: Store | None = None

    @property
    def store(self) -> Store:
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


def emit(data: Any, as_json: bool, text: str) -> None:
    """A command's result: `data` as JSON with `--json`, else the line `text`."""
    if as_json:
        emit_json(data)
    else:
        click.echo(text)


def emit_rows(rows: list[R], as_json: bool, line: Callable[[R], str]) -> None:
    """A listing: `rows` as one JSON list with `--json`, else `line(row)` for each row."""
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        click.echo(line(row))


json_option = click.option("--json", "as_json", is_flag=True)
"""`--json`: print the result as JSON (the command's `as_json` argument)."""

who_option = click.option("--who", default=None, help="Curator name (default: the login name).")
"""`--who`: the curator a correction is recorded for; `who_or_login(who)` fills it in."""


def who_or_login(who: str | None) -> str:
    """`--who`, else the login name (`unknown` where there is none)."""
    if who:
        return who
    try:
        return getpass.getuser()
    except Exception:  # no user name in some containers
        return "unknown"


def read_password(from_stdin: bool) -> str:
    """A new password: one line of standard input, or typed twice at a hidden prompt."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    return str(click.prompt("Password", hide_input=True, confirmation_prompt=True))


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


_AREAS = ("records", "harvest", "works", "authors", "subjects", "search", "web", "desk", "db")
"""Command modules, one per area (`cli/<area>.py`); a module still being written is simply
absent."""

AREA_OF = {
    "ingest": "records", "stats": "records", "records": "records", "record": "records",
    "harvest": "harvest",
    "resolve": "works", "work": "works", "pipeline": "works", "status": "works",
    "author": "authors", "authors": "authors",
    "subjects": "subjects", "classify": "subjects",
    "search": "search", "related": "search", "similar": "search", "reindex": "search",
    "serve": "web", "curator": "web",
    "user": "desk", "library": "desk", "recommend": "desk", "feedback": "desk",
    "follow": "desk", "unfollow": "desk", "saved-search": "desk", "feed-token": "desk",
    "digest": "desk",
    "db": "db",
}  # fmt: skip
"""The area module that defines each command (a test checks it against the modules)."""


def _load_area(area: str) -> None:
    try:
        importlib.import_module(f"paperdesk.cli.{area}")
    except ModuleNotFoundError as exc:
        if exc.name != f"paperdesk.cli.{area}":
            raise


class _Areas(click.Group):
    """The command group, importing an area's module only when one of its commands is
    asked for: `paperdesk resolve` need not import search, harvest, ingest and sources
    (~0.4 s of CPU, a tenth of a small incremental resolve). Listing the commands (help)
    imports them all, and so does a name this map does not know."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            area = AREA_OF.get(cmd_name)
            for a in (area,) if area else _AREAS:
                _load_area(a)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        for area in _AREAS:
            _load_area(area)
        return super().list_commands(ctx)


@click.group(cls=_Areas, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    envvar=settings.DB.env,
    default=None,
    help="The store: a SQLite file, sqlite:///PATH or postgresql://USER:PASS@HOST/DB (env"
    " PAPERDESK_DB; default ~/.local/share/paperdesk/paperdesk.db).",
)
@click.version_option(__version__, prog_name="paperdesk")
@click.pass_context
def main(ctx: click.Context, db: str | None) -> None:
    """paperdesk: a self-hosted index of research papers."""
    obj = Ctx(db or default_db_path())
    ctx.obj = obj
    ctx.call_on_close(obj.close)


def run() -> None:
    """The `paperdesk` program (the console script and `python -m paperdesk`)."""
    main()
