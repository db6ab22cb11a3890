"""Shared fixtures: the real shared data (skipped with a reason when absent) and stores."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from paperdesk.store import SQLiteStore, open_store
from replay_server import ReplayServer, replay_server

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PAPERDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data` (or $PAPERDESK_SHARED_DATA); tests needing it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(
            f"real test data not found at {SHARED}: see README 'Test data' to get it "
            "(or set PAPERDESK_SHARED_DATA)"
        )
    return SHARED


def shared_file(rel: str) -> Path:
    """A file under the shared data; skips the calling test when it is absent."""
    path = SHARED / rel
    if not path.exists():
        pytest.skip(f"real test data {path} not found: see README 'Test data'")
    return path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A fresh SQLite store in the test's temporary directory."""
    s = open_store(tmp_path / "paperdesk.db")
    yield s
    s.close()


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    """A loopback HTTP server replaying recorded exchanges (see tests/replay_server.py)."""
    with replay_server() as srv:
        yield srv
