"""The opt-in compiled build (paperdesk.native): it is used only while it matches the sources,
and (when built, which needs a C compiler and takes a minute or two) it prepares the same rows
as the Python modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_file
from paperdesk import native

FEED = "arxiv/daily-feed-2025-03-to-2026-04.jsonl.gz"


def _stamp(directory: Path, **change: object) -> None:
    stamp = {
        "tag": native._tag(),
        "sources": {m: native._digest(native._source(m)) for m in native.MODULES},
        "files": {},
    }
    stamp.update(change)
    directory.mkdir(exist_ok=True)
    (directory / native.STAMP).write_text(json.dumps(stamp))


def test_a_missing_stale_or_foreign_build_is_not_used(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="no usable build"):
        assert not native.activate(tmp_path / "none")
    _stamp(tmp_path / "other", tag="cpython-27-linux")
    with pytest.warns(UserWarning, match="built for cpython-27"):
        assert not native.activate(tmp_path / "other")
    _stamp(tmp_path / "stale", sources={"paperdesk.normalize.names": "0" * 64})
    with pytest.warns(UserWarning, match=r"stale \(paperdesk.normalize.names changed"):
        assert not native.activate(tmp_path / "stale")


ROWS = """
import hashlib, io, itertools, sys
from isal import igzip
from paperdesk import sources
from paperdesk.ingest import prepare_batch
import paperdesk.normalize.names as names
with igzip.open(sys.argv[1]) as f:
    data = b"".join(itertools.islice(f, 6000))
items = list(sources.get("arxiv-feed").parse(io.BytesIO(data), "feed"))
rows = prepare_batch(items, lambda digests: set(), origin="feed")
print(names.__file__.endswith(".py"), hashlib.sha256(repr(rows).encode()).hexdigest())
"""


@pytest.mark.skipif(
    not os.environ.get("PAPERDESK_NATIVE_TEST"),
    reason="builds with mypyc (C compiler, 1-2 min): set PAPERDESK_NATIVE_TEST=1",
)
def test_the_compiled_build_prepares_the_same_rows(tmp_path: Path) -> None:
    feed = shared_file(FEED)
    native.build(tmp_path / "native")
    env = {k: v for k, v in os.environ.items() if k != "PAPERDESK_NATIVE"}
    plain = subprocess.run(
        [sys.executable, "-c", ROWS, str(feed)], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    env["PAPERDESK_NATIVE"] = str(tmp_path / "native")
    compiled = subprocess.run(
        [sys.executable, "-c", ROWS, str(feed)], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert plain[0] == "True" and compiled[0] == "False"  # Python modules, then the build's
    assert compiled[1] == plain[1]
