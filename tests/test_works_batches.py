"""The works stage's input batches end on seq boundaries: its checkpoint is the last seq of
each committed batch, so a batch cut inside a seq would leave that seq's other records
behind a checkpoint that calls them done."""

from __future__ import annotations

from pathlib import Path

from paperdesk.model import SourceRecord
from paperdesk.store import open_store


def _records(first: int, n: int) -> list[SourceRecord]:
    return [
        SourceRecord("arxiv", f"2401.{k:05d}", raw=f"r{k}".encode(), raw_format="test",
                     arxiv_id=f"2401.{k:05d}", title=f"Paper {k}")
        for k in range(first, first + n)
    ]


def test_changed_rows_never_split_a_seq(tmp_path: Path) -> None:
    with open_store(tmp_path / "p.db") as store:
        for first, n in ((0, 5), (5, 4), (9, 1), (10, 7)):  # one write, one seq each
            store.put_records(_records(first, n), origin="f")
        for size in (1, 2, 3, 4, 6, 100):
            batches = list(store.works.changed_rows(0, size))
            seqs = [[s for _, s, _ in b] for b in batches]
            assert sum(map(len, seqs)) == 17, size
            flat = [s for b in seqs for s in b]
            assert flat == sorted(flat)
            # no seq appears in two batches: each batch's last seq is below the next's first
            for a, b in zip(seqs, seqs[1:], strict=False):
                assert a[-1] < b[0], (size, seqs)
            assert all(len(b) <= max(size, 7) for b in seqs)  # a seq longer than size is one batch
        later = list(store.works.changed_rows(seqs[0][0], 3))  # after the first write
        assert sum(map(len, later)) == 12
