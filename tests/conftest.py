"""Shared fixtures: real data (committed slices first, else the shared data) and stores."""

from __future__ import annotations

import atexit
import io
import itertools
import lzma
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from paperdesk.store import SQLiteStore, open_store
from replay_server import ReplayServer, replay_server

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PAPERDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
# Real captures committed with the tests, laid out as in the shared data (tests/data/README.md
# names each file's source and licence). `NAME.xz` is the file NAME compressed and
# `NAME.tar.xz` the folder NAME packed: both are unpacked once a run, on first use.
DATA = ROOT / "tests" / "data"
# The committed lines of the shared daily feed: its first 2,000 lines, a sample of every
# month (every 34th line, every 16th of 2026-03, every 15th of 2026-04), and lines that tests
# name by their arXiv id.
FEED_HEAD = "arxiv/daily-feed-head.jsonl"
FEED_SAMPLE = "arxiv/daily-feed-sample.jsonl"
FEED_PICKED = "arxiv/daily-feed-picked.jsonl"
_unpacked: Path | None = None


def _unpack_dir() -> Path:
    global _unpacked
    if _unpacked is None:
        _unpacked = Path(tempfile.mkdtemp(prefix="paperdesk-test-data-"))
        atexit.register(shutil.rmtree, _unpacked, True)
    return _unpacked


def committed_file(rel: str) -> Path | None:
    """`rel` from tests/data (unpacked if it is committed packed, or inside a packed
    folder), or None."""
    plain, packed = DATA / rel, DATA / f"{rel}.xz"
    if plain.is_file():
        return plain
    out = _unpack_dir() / rel
    if packed.exists():
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            part = out.with_name(out.name + ".part")
            part.write_bytes(lzma.decompress(packed.read_bytes()))
            part.rename(out)
        return out
    parts = Path(rel).parts
    for n in range(len(parts), 0, -1):  # the folder itself, else the nearest packed parent
        folder = Path(*parts[:n])
        tar = DATA / f"{folder}.tar.xz"
        if tar.exists():
            dest = _unpack_dir() / folder
            if not dest.exists():
                part = dest.with_name(dest.name + ".part")
                with tarfile.open(tar, "r:xz") as t:
                    t.extractall(part, filter="data")
                part.rename(dest)
            return out if out.exists() else None
    return plain if plain.is_dir() else None  # a packed folder wins over a plain one


def shared_file(rel: str) -> Path:
    """Real data at `rel` of the shared data's layout: the copy committed under tests/data
    if there is one, else the shared data's; skips the calling test when neither has it."""
    committed = committed_file(rel)
    if committed is not None:
        return committed
    return full_data_file(rel)


def full_data_file(rel: str) -> Path:
    """A file of the full shared data, for the few tests that need all of it (never the
    committed slice); skips the calling test when it is absent."""
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"real test data {path} not found: see README 'Test data'")
    return path


def feed_file() -> Path:
    """The committed feed lines as one JSON-lines file: the head, then the lines of the
    sample and of the picked lines that it does not hold yet (feed order within each)."""
    out = _unpack_dir() / "arxiv" / "daily-feed-committed.jsonl"
    if not out.exists():
        head = shared_file(FEED_HEAD).read_bytes()
        seen = set(head.splitlines())
        rest = []
        for rel in (FEED_SAMPLE, FEED_PICKED):
            for x in shared_file(rel).read_bytes().splitlines():
                if x not in seen:
                    seen.add(x)
                    rest.append(x)
        tmp = out.with_name(out.name + ".part")
        tmp.write_bytes(head + b"".join(x + b"\n" for x in rest))
        tmp.rename(out)
    return out


def open_feed(mode: str = "rb") -> IO:
    """`feed_file()` opened for reading, as bytes (`rb`) or UTF-8 text (`rt`)."""
    fh = feed_file().open("rb")
    return fh if mode == "rb" else io.TextIOWrapper(fh, encoding="utf-8")


def feed_head(n: int) -> bytes:
    """The feed's (`feed_file()`) first `n` lines."""
    with open_feed() as fh:
        return b"".join(itertools.islice(fh, n))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data` (or $PAPERDESK_SHARED_DATA); tests needing it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(
            f"real test data not found at {SHARED}: see README 'Test data' to get it "
            "(or set PAPERDESK_SHARED_DATA)"
        )
    return SHARED


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A fresh SQLite store in the test's temporary directory."""
    s = open_store(tmp_path / "paperdesk.db")
    yield s
    s.close()


# -- PostgreSQL ---------------------------------------------------------------------------
# The tests reach a PostgreSQL server through PAPERDESK_TEST_PG_URL: `.ci/run` starts a
# throwaway cluster (scripts/pg-cluster.sh) and sets it; a developer can do the same
# (`scripts/pg-cluster.sh start /tmp/pg` prints the URL). Without it the PostgreSQL cases
# skip, saying so; under CI (CI=true) they fail instead: CI must run both backends. Each
# test gets schemas of its own in that database (`search_path` set in its URL), dropped
# after it.
PG_URL = os.environ.get("PAPERDESK_TEST_PG_URL", "")
# A PostgreSQL store's files (search indexes) go to the data dir: a temporary one for the run.
if not os.environ.get("PAPERDESK_DATA_DIR"):
    os.environ["PAPERDESK_DATA_DIR"] = tempfile.mkdtemp(prefix="paperdesk-test-files-")
    atexit.register(shutil.rmtree, os.environ["PAPERDESK_DATA_DIR"], True)
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def _need_pg() -> str:
    if not PG_URL:
        reason = (
            "PostgreSQL tests need PAPERDESK_TEST_PG_URL (.ci/run sets it; "
            "`scripts/pg-cluster.sh start DIR` starts a cluster and prints one)"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return PG_URL


class PGSchemas:
    """Fresh schemas in the test database, each a store URL; all dropped at `close`."""

    def __init__(self) -> None:
        self.made: list[tuple[str, str]] = []

    def new(self) -> str:
        import uuid

        import psycopg

        base = _need_pg()
        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")  # type: ignore[arg-type]  # our own name
        sep = "&" if "?" in base else "?"
        url = f"{base}{sep}options=-csearch_path%3D{name}"
        self.made.append((name, url))
        return url

    def close(self) -> None:
        import psycopg

        from paperdesk.store.postgres.connection import forget

        for name, url in self.made:
            forget(url)
            with psycopg.connect(PG_URL, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")  # type: ignore[arg-type]


@pytest.fixture
def pg_url() -> Iterator[str]:
    """The URL of an empty PostgreSQL store (a schema of its own)."""
    schemas = PGSchemas()
    try:
        yield schemas.new()
    finally:
        schemas.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn: tests taking it (or `new_target`) run on both."""
    return str(request.param)


@pytest.fixture
def new_target(backend: str, tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """`new_target(name)`: the target (SQLite path / PostgreSQL URL) of the store `name`,
    empty when first named, the same store when named again in the test."""
    schemas = PGSchemas()
    made: dict[str, str] = {}

    def target(name: str = "paperdesk.db") -> str:
        if name not in made:
            made[name] = str(tmp_path / name) if backend == "sqlite" else schemas.new()
        return made[name]

    try:
        yield target
    finally:
        schemas.close()


@pytest.fixture
def any_store(new_target: Callable[[str], str]) -> Iterator[SQLiteStore]:
    """A fresh store on each backend in turn."""
    s = open_store(new_target("paperdesk.db"))
    yield s
    s.close()


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    """A loopback HTTP server replaying recorded exchanges (see tests/replay_server.py)."""
    with replay_server() as srv:
        yield srv


# -- browser tests (marked `browser`): Debian's Chromium driven by Playwright ---------------
CHROMIUM = os.environ.get("PAPERDESK_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"  # their screenshots


def need_chromium() -> None:
    """Skip the calling test (or fixture) where there is no Chromium to drive."""
    if not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (.ci/run does)")


@pytest.fixture(scope="module")
def page(site: object) -> Iterator[Any]:
    """A headless Chromium page (`loopback.chromium_page`) for a browser test module, once
    the module's own `site` fixture serves."""
    pytest.importorskip("playwright.sync_api")
    from loopback import chromium_page

    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(CHROMIUM) as pg:
        yield pg
