"""#18 item 7: while `paperdesk reindex` runs (another process), page requests must not wait
for the index writer. The web server (real, on loopback, in this process) used to rebuild
the whole HNSW index from the stored vectors under its search lock, and save it over the
writer's file, after every write the reindex committed: paper pages (their "similar
papers") stalled for seconds (11 s at 102k works). A reader now uses the file the writer
last saved and never rebuilds or saves it.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import httpx
import pytest

from loopback import build_store, serve
from paperdesk.search.engine import SearchIndex
from paperdesk.search.vectors import VectorIndex

WORDS = ("graph neural network diffusion model attention retrieval language vision robot "
         "learning policy reward sparse dense kernel bayesian inference causal federated "
         "privacy quantum circuit protein molecule speech audio video segmentation").split()


def _records(n: int) -> list[dict[str, object]]:
    rng = random.Random(18)
    return [
        {"source": "synth", "id": str(i), "date": "2025-03-17", "categories": ["cs.LG"],
         "title": " ".join(rng.choices(WORDS, k=8)).capitalize(),
         "abstract": " ".join(rng.choices(WORDS, k=120)) + ".",
         "authors": [f"Author {rng.randrange(400)}", f"Author {rng.randrange(400)}"]}
        for i in range(n)
    ]


def test_pages_do_not_wait_for_a_running_reindex(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    if not SearchIndex.semantic_available():
        pytest.skip("no embedder installed: the vector index is what the web used to rebuild")
    from paperdesk.search.indexer import update_index
    from paperdesk.store import open_store
    from paperdesk.web.app import create_app

    db = build_store(tmp_path, _records(1500))
    with open_store(db) as store:
        update_index(store, show_progress=False)  # with vectors
    saves: list[int] = []
    real_save = VectorIndex.save

    def counted_save(self: VectorIndex) -> None:
        saves.append(1)  # only the server's own: the reindex runs in another process
        real_save(self)

    env = {**os.environ, "PAPERDESK_PROGRESS": "0"}
    with mock.patch.object(VectorIndex, "save", counted_save), serve(create_app(db)) as base, \
            httpx.Client(base_url=base, timeout=120) as c:
        works = [w["work_id"] for w in c.get("/index.json", params={"day": "2025-03-17"}).json()["works"]]
        assert c.get(f"/papers/{works[0]}.json").json()["similar"]  # vectors loaded, warm
        saves.clear()
        reindex = subprocess.Popen([sys.executable, "-m", "paperdesk", "--db", str(db), "reindex"],
                                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        took: list[float] = []
        i = 0
        while reindex.poll() is None or i < 5:
            t = time.perf_counter()
            assert c.get(f"/papers/{works[i % len(works)]}").status_code == 200
            took.append(time.perf_counter() - t)
            i += 1
        assert reindex.wait() == 0, reindex.stderr.read() if reindex.stderr else ""
        after = c.get(f"/papers/{works[1]}.json").json()
    took.sort()
    print(f"{len(took)} paper pages during reindex: p50 {took[len(took) // 2] * 1000:.0f} ms, "
          f"max {took[-1] * 1000:.0f} ms")
    assert not saves, f"the web server rebuilt and saved the vector index {len(saves)} times"
    assert after["similar"]  # and it picked up the new file
