"""The CLI imports a command's area module only when that command runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from paperdesk.cli import AREA_OF, main


def test_area_map_names_every_command_where_it_is_defined() -> None:
    ctx = click.Context(main)
    names = main.list_commands(ctx)  # imports every area
    defined = {n: main.commands[n].callback.__module__ for n in names}  # type: ignore[union-attr]
    assert {n: f"paperdesk.cli.{a}" for n, a in AREA_OF.items()} == defined


def test_resolve_imports_neither_search_nor_harvest(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from paperdesk.cli import main\n"
        f"main(['--db', {str(tmp_path / 'p.db')!r}, 'resolve', '--no-index'], standalone_mode=False)\n"
        "heavy = ('paperdesk.search', 'paperdesk.harvest', 'paperdesk.sources', 'paperdesk.ingest',"
        " 'sklearn', 'tantivy')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_help_still_lists_every_area() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in ("ingest", "harvest", "resolve", "author", "subjects", "search", "serve"):
        assert f"  {name} " in result.output
