"""The CLI imports a command's area module only when that command runs."""

from __future__ import annotations

import functools
import os
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


def test_the_program_exits_without_teardown_having_finished_its_work(tmp_path: Path) -> None:
    """`python -m paperdesk` leaves without the interpreter's teardown: the command's
    output is complete, the store closed (its WAL checkpointed and removed), exit codes
    as `main` gives them."""
    import json

    from paperdesk.model import SourceRecord
    from paperdesk.normalize import finish
    from paperdesk.store import open_store

    db = tmp_path / "p.db"
    store = open_store(db)
    recs = []
    for i in range(30):
        r = SourceRecord(source="arxiv", source_id=f"2501.{i:05d}", title=f"On topic {i}")
        r.raw = f"raw {i}".encode()
        recs.append(finish(r))
    store.put_records(recs, origin="t")
    store.close()
    prog = [sys.executable, "-m", "paperdesk", "--db", str(db)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # pipes buffer
    run = functools.partial(subprocess.run, capture_output=True, text=True, env=env)
    out = run([*prog, "resolve", "--no-index", "--json"])
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["works"]["new_works"] == 30
    assert not Path(f"{db}-wal").exists()
    listed = run([*prog, "records", "--json"])
    assert listed.returncode == 0
    assert len(json.loads(listed.stdout)) == 30 and all(
        r["work_id"] for r in json.loads(listed.stdout)
    )
    missing = run([*prog, "work", "W424242"])
    assert missing.returncode == 3 and "paperdesk: " in missing.stderr
    usage = run([*prog, "resolve", "--no-such-flag"])
    assert usage.returncode == 2
