"""The compiled build (paperdesk.native): it is used only while it matches the sources, a
machine without a C compiler gets the pure-Python package, and the build (the one `make`
made into the environment, else one made here when PAPERDESK_NATIVE_TEST is set: it needs a
C compiler and takes a minute or two) prepares the same rows as the Python modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import feed_file
from paperdesk import native


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
with open(sys.argv[1], "rb") as f:
    data = b"".join(itertools.islice(f, 6000))
items = list(sources.get("arxiv-feed").parse(io.BytesIO(data), "feed"))
rows = prepare_batch(items, lambda digests: set(), origin="feed")
print(names.__file__.endswith(".py"), hashlib.sha256(repr(rows).encode()).hexdigest())
"""


def test_without_a_c_compiler_the_optional_build_is_skipped(tmp_path: Path) -> None:
    """What `make` runs on a machine without a compiler: a note, exit 0, no build left."""
    out = tmp_path / "native"
    out.mkdir()
    (out / native.STAMP).write_text("{}")  # an older build there must not stay to be found
    env = dict(os.environ, CC="/nonexistent/cc")
    done = subprocess.run(
        [sys.executable, "-m", "paperdesk.native", "build", str(out), "--optional"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0
    assert "compiled build skipped: no C compiler (/nonexistent/cc)" in done.stderr
    assert not out.exists()


def _rows(env: dict[str, str], feed: Path) -> list[str]:
    return subprocess.run(
        [sys.executable, "-c", ROWS, str(feed)], env=env, capture_output=True, text=True, check=True
    ).stdout.split()


@pytest.mark.skipif(
    not native.DEFAULT_DIR.joinpath(native.STAMP).exists()
    and not os.environ.get("PAPERDESK_NATIVE_TEST"),
    reason="no build made by `make` here, and building one takes a C compiler and 1-2 min:"
    " set PAPERDESK_NATIVE_TEST=1",
)
def test_the_compiled_build_prepares_the_same_rows(tmp_path: Path) -> None:
    feed = feed_file()
    env = {k: v for k, v in os.environ.items() if k != "PAPERDESK_NATIVE"}
    if native.DEFAULT_DIR.joinpath(native.STAMP).exists():
        build = native.DEFAULT_DIR  # what `make` built: used without PAPERDESK_NATIVE
        compiled = _rows(env, feed)
    else:
        build = native.build(tmp_path / "native")
        compiled = _rows(env | {"PAPERDESK_NATIVE": str(build)}, feed)
    plain = _rows(env | {"PAPERDESK_NATIVE": "off"}, feed)
    assert plain[0] == "True", "PAPERDESK_NATIVE=off loads the Python modules"
    assert compiled[0] == "False", f"the build in {build} was not used (stale?)"
    assert compiled[1] == plain[1]
