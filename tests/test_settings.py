"""Settings are declared once (paperdesk.settings), documented, and read only through it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paperdesk import settings
from paperdesk.errors import SettingError

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "paperdesk"
DOC = ROOT / "docs" / "settings.md"
NAME = re.compile(r"(?<![A-Za-z0-9_])PAPERDESK_[A-Z0-9_]*[A-Z0-9]")
# Reading a variable itself: os.environ[...] / .get(...) / getenv(...), or click's envvar=.
DIRECT = re.compile(r"""(environ(\.get)?\s*[\[(]|getenv\s*\(|envvar\s*=)\s*f?["']PAPERDESK_""")
# Files still reading a variable themselves, each with who moves it onto paperdesk.settings
# (none left: store/'s `default_db_path` reads settings.DB).
PENDING: set[str] = set()


def _declared() -> set[str]:
    return {s.env for s in settings.all_settings()}


def test_docs_hold_the_declared_table() -> None:
    table = settings.markdown_table()
    assert table in DOC.read_text(), (
        "docs/settings.md does not hold the settings table; paste this into it:\n\n" + table
    )


def test_every_variable_the_project_names_is_declared_or_documented() -> None:
    """Any `PAPERDESK_*` name in the package is a declared setting; the demo script's,
    tests' and benchmarks' own knobs are at least in docs/settings.md."""
    declared = _declared()
    for path in SRC.rglob("*.py"):
        unknown = set(NAME.findall(path.read_text())) - declared
        assert not unknown, f"{path.relative_to(ROOT)} names undeclared {sorted(unknown)}"
    doc = DOC.read_text()
    others = [*ROOT.joinpath("tests").rglob("*.py"), *ROOT.joinpath("bench").rglob("*.py"),
              *ROOT.joinpath("scripts").rglob("*"), ROOT / "Makefile", ROOT / ".ci" / "run"]
    for path in others:
        if path.is_file():
            for name in set(NAME.findall(path.read_text(errors="replace"))):
                assert f"`{name}`" in doc, f"{path.relative_to(ROOT)}: {name} not in docs/settings.md"


def test_no_module_reads_a_variable_itself() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{no}"
        for path in SRC.rglob("*.py")
        if path.name != "settings.py" and str(path.relative_to(SRC)) not in PENDING
        for no, line in enumerate(path.read_text().splitlines(), 1)
        if DIRECT.search(line)
    ]
    assert not offenders, f"read through paperdesk.settings instead: {offenders}"


def test_values_are_read_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPERDESK_INGEST_BATCH", raising=False)
    assert settings.INGEST_BATCH.get() == 2000
    monkeypatch.setenv("PAPERDESK_INGEST_BATCH", " 250 ")
    assert settings.INGEST_BATCH.get() == 250
    monkeypatch.setenv("PAPERDESK_INGEST_BATCH", "")
    assert settings.INGEST_BATCH.get() == 2000  # empty means unset
    monkeypatch.delenv("PAPERDESK_WORKERS", raising=False)
    assert settings.WORKERS.get() >= 1
    monkeypatch.setenv("PAPERDESK_PROGRESS", "no")
    assert settings.PROGRESS.get() is False
    monkeypatch.setenv("PAPERDESK_DB", "/tmp/x.db")
    assert settings.DB.get() == "/tmp/x.db"


@pytest.mark.parametrize(("env", "value"), [
    ("PAPERDESK_WORKERS", "two"), ("PAPERDESK_WORKERS", "0"), ("PAPERDESK_PROGRESS", "maybe"),
])
def test_a_bad_value_names_its_variable(monkeypatch: pytest.MonkeyPatch, env: str, value: str) -> None:
    monkeypatch.setenv(env, value)
    setting = next(s for s in settings.all_settings() if s.env == env)
    with pytest.raises(SettingError, match=env):
        setting.get()


def test_the_cli_reports_a_bad_value_in_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from paperdesk.cli import main

    src = tmp_path / "a.jsonl"
    src.write_text('{"source": "x", "id": "1", "title": "A title"}\n')
    res = CliRunner(env={"PAPERDESK_INGEST_BATCH": "many"}).invoke(
        main, ["--db", str(tmp_path / "p.db"), "ingest", str(src)]
    )
    assert res.exit_code == 1
    assert "PAPERDESK_INGEST_BATCH='many'" in res.stderr and "Traceback" not in res.stderr
