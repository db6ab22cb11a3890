"""Every setting paperdesk reads from the environment, declared once.

Each `Setting` names its environment variable, its type, its default and what it does;
code reads a value with `.get()` (e.g. `settings.WORKERS.get()`), never `os.environ`, and
the value is read when asked for, not when a module is imported, so a test's
`monkeypatch.setenv` or a server's environment takes effect. An unset or empty variable
means the default; a value that does not parse raises `SettingError` naming the variable.

`docs/settings.md` holds the table `markdown_table()` makes from these declarations, and
tests/test_settings.py checks that the two agree (printing the table when they do not)
and that nothing else in the package reads a `PAPERDESK_*` variable itself. To add a
setting: declare it here and paste the table the test prints into docs/settings.md.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from paperdesk.errors import SettingError

T = TypeVar("T")


class Setting(Generic[T]):
    """One setting: `env` is its variable, `parse` turns the variable's text into the value,
    `default` gives the value when the variable is unset or empty (called each time: some
    defaults depend on the machine), `shown` is the default as the docs write it."""

    __slots__ = ("name", "env", "parse", "default", "shown", "help")

    def __init__(
        self,
        name: str,
        parse: Callable[[str], T],
        default: Callable[[], T],
        shown: str,
        help: str,  # noqa: A002 - the word the docs use
    ):
        self.name = name
        self.env = "PAPERDESK_" + name.upper()
        self.parse = parse
        self.default = default
        self.shown = shown
        self.help = help
        _ALL[name] = self

    def get(self) -> T:
        raw = os.environ.get(self.env)
        if raw is None or raw.strip() == "":
            return self.default()
        try:
            return self.parse(raw.strip())
        except ValueError as exc:
            raise SettingError(f"{self.env}={raw!r}: {exc}") from exc

    def __repr__(self) -> str:
        return f"Setting({self.env})"


_ALL: dict[str, Setting[Any]] = {}


def all_settings() -> list[Setting[Any]]:
    """Every declared setting, in declaration order."""
    return list(_ALL.values())


def _int(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise ValueError(f"must be at least {low}")
        return value

    return parse


def _flag(text: str) -> bool | None:
    """`1/true/yes/on` → True, `0/false/no/off` → False, `auto` → None (decide)."""
    low = text.lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    if low == "auto":
        return None
    raise ValueError("expected 1/true/yes/on, 0/false/no/off or auto")


def _none() -> None:
    return None


def _cpus() -> int:
    return os.cpu_count() or 1


# -- the store --
DB: Setting[str | None] = Setting(
    "db", str, _none, "`$XDG_DATA_HOME/paperdesk/paperdesk.db` (~/.local/share/…)",
    "the store: a SQLite file, `sqlite:///PATH` or `postgresql://USER:PASS@HOST/DB`"
    " (`--db` overrides)",
)
PG_POOL: Setting[int] = Setting(
    "pg_pool", _int(1), lambda: 8, "8",
    "PostgreSQL connections a process keeps at most (one pool per process; each"
    " `serve` worker has its own)",
)
DATA_DIR: Setting[str | None] = Setting(
    "data_dir", str, _none, "`$XDG_DATA_HOME/paperdesk`",
    "where a PostgreSQL store's files live (search indexes: `DIR/HOST-PORT-DB.index`);"
    " a SQLite store keeps them beside its file",
)

# -- running --
WORKERS: Setting[int] = Setting(
    "workers", _int(1), _cpus, "the CPU count",
    "processes for the parallel stages (`paperdesk.parallel`); 1 runs everything in one "
    "process",
)
PROGRESS: Setting[bool | None] = Setting(
    "progress", _flag, _none, "auto",
    "progress bars on stderr: `1` always, `0` never, `auto` on a terminal outside CI",
)
# -- ingest --
INGEST_BATCH: Setting[int] = Setting(
    "ingest_batch", _int(1), lambda: 2000, "2000",
    "records per batch: normalised together, written in one transaction",
)
INGEST_TX_BATCHES: Setting[int] = Setting(
    "ingest_tx_batches", _int(1), lambda: 5, "5",
    "batches per write transaction (a crash loses at most these)",
)
INGEST_PARALLEL_MIN: Setting[int] = Setting(
    "ingest_parallel_min", _int(0), lambda: 8 << 20, "8388608 (8 MiB)",
    "smallest input file (bytes on disk) parsed by worker processes; smaller ones are "
    "parsed in the ingest's own process",
)

# -- harvest --
MAILTO: Setting[str | None] = Setting(
    "mailto", str, _none, "unset",
    "contact address put in the User-Agent (`--mailto` overrides)",
)
USER_AGENT: Setting[str | None] = Setting(
    "user_agent", str, _none, "`paperdesk/<version> (+<project url>; mailto:ADDR)`",
    "the whole User-Agent string, replacing paperdesk's own",
)

# -- models and data files --
NAME_VARIANTS: Setting[Path | None] = Setting(
    "name_variants", Path, _none, "the shared data's file, else the environment's copy",
    "given-name variant pairs file for author disambiguation",
)
SUBJECTS_MODEL: Setting[Path | None] = Setting(
    "subjects_model", Path, _none, "the packaged model, else `$XDG_DATA_HOME/paperdesk/`",
    "the subject classifier's model file (`.npz`)",
)
MODEL_DIR: Setting[Path | None] = Setting(
    "model_dir", Path, _none, "`$XDG_CACHE_HOME/paperdesk/models` (~/.cache/…)",
    "where derived embedding models are cached",
)

# -- web --
ADMIN_TOKEN: Setting[str | None] = Setting(
    "admin_token", str, _none, "unset (no token access)",
    "bearer token for API writes",
)
SECRET_KEY: Setting[str | None] = Setting(
    "secret_key", str, _none, "a random key stored in `<db>.secret` (0600)",
    "signs sessions and CSRF tokens",
)
MAX_BODY: Setting[int] = Setting(
    "max_body", _int(0), lambda: 1 << 20, "1048576 (1 MiB)",
    "request body limit, bytes",
)
RATE_PER_MINUTE: Setting[int] = Setting(
    "rate_per_minute", _int(1), lambda: 60, "60",
    "per-client budget for search, related and sign-in",
)
PAGE_CACHE: Setting[int] = Setting(
    "page_cache", _int(0), lambda: 1024, "1024",
    "read-only pages kept in memory (0: none)",
)


def base_url(text: str) -> str:
    """`text` as a base URL ending in `/`; ValueError unless it is a plain http(s) URL."""
    from urllib.parse import urlsplit

    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"must be an http(s) URL such as https://papers.example.org/, not {text!r}")
    return parts.geturl().rstrip("/") + "/"


BASE_URL: Setting[str | None] = Setting(
    "base_url", base_url, _none,
    "`http://HOST:PORT/` of `paperdesk serve` (`http://127.0.0.1:8000/` otherwise)",
    "the site's public address: absolute links in feeds start with it, never with the "
    "request's `Host` header",
)


# -- the personal desk --
SIGNUP: Setting[bool | None] = Setting(
    "signup", _flag, lambda: False, "`off`",
    "`on`: anyone may make an account at `/signup` (accounts are otherwise made with "
    "`paperdesk user add`)",
)
SMTP_HOST: Setting[str] = Setting(
    "smtp_host", str, lambda: "127.0.0.1", "`127.0.0.1`",
    "the SMTP server `paperdesk digest` sends through",
)
SMTP_PORT: Setting[int] = Setting(
    "smtp_port", _int(1), lambda: 25, "25", "its port",
)
SMTP_FROM: Setting[str] = Setting(
    "smtp_from", str, lambda: "paperdesk@localhost", "`paperdesk@localhost`",
    "the digest's From address",
)
SMTP_STARTTLS: Setting[bool | None] = Setting(
    "smtp_starttls", _flag, lambda: False, "`off`",
    "`on`: upgrade the SMTP connection with STARTTLS before sending",
)
SMTP_USER: Setting[str | None] = Setting(
    "smtp_user", str, _none, "unset (no login)",
    "SMTP login name (the password is `PAPERDESK_SMTP_PASSWORD`)",
)
SMTP_PASSWORD: Setting[str | None] = Setting(
    "smtp_password", str, _none, "unset", "SMTP password",
)

def markdown_table() -> str:
    """The table of docs/settings.md."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for s in all_settings():
        lines.append(f"| `{s.env}` | {s.shown} | {s.help} |")
    return "\n".join(lines) + "\n"
