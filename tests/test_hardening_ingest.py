"""#18 on the ingest side, with real files, a real SQLite store and the real CLI:

- item 5: a gzip bomb (a few hundred KB holding one 300 MiB line, or one XML record of
  64 MiB) is rejected while it is read: the ingest's peak memory, measured in a child
  process (`ru_maxrss` of RUSAGE_CHILDREN), stays within a bound over an ingest of a
  tiny file, and the good records around the bomb are kept;
- item 7: an entity reference in an XML title keeps the title; a truncated gzip's
  `--json` report counts the records it read; an empty file says so; `--format bibtex`
  on binary data stores nothing.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paperdesk.ingest import ingest_paths
from paperdesk.store import open_store

MiB = 1 << 20
# Peak memory over a tiny ingest's allowed for a bomb: the line cap (32 MiB) held once as
# bytes, once more while the reader skips the rest, and slack for the allocator.
PEAK_OVER_BASELINE = 160 * MiB


def _good(i: int, csv: bool = False) -> bytes:
    if csv:
        return f"probe,g{i},Good record {i}\n".encode()
    return json.dumps({"source": "probe", "id": f"g{i}", "title": f"Good record {i}",
                       "authors": ["Ann Probe"], "year": 2025}).encode() + b"\n"


def _line_bomb(path: Path, csv: bool, line_mib: int = 300) -> None:
    """Good lines, one line of `line_mib` MiB, good lines (JSON lines or CSV): written and
    compressed in pieces (the test itself never holds the line)."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        if csv:
            f.write(b"source,id,title\n")
        for i in range(5):
            f.write(_good(i, csv))
        f.write(b"probe,bomb," if csv else b'{"source": "probe", "id": "bomb", "title": "')
        block = b"A" * MiB
        for _ in range(line_mib):
            f.write(block)
        f.write(b"\n" if csv else b'"}\n')
        for i in range(5, 10):
            f.write(_good(i, csv))


def _xml_bomb(path: Path, record_mib: int = 64) -> None:
    """An OAI-PMH page whose second record holds `record_mib` MiB of small elements."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(OAI_HEAD.encode())
        f.write(oai_record("2501.00001", "A fine title").encode())
        f.write(b"<record><header><identifier>oai:arXiv.org:2501.00002</identifier>"
                b"<datestamp>2025-01-02</datestamp></header><metadata>"
                b'<arXiv xmlns="http://arxiv.org/OAI/arXiv/"><id>2501.00002</id><authors>')
        piece = b"<author><keyname>x</keyname></author>" * 1000
        for _ in range(record_mib * MiB // len(piece)):
            f.write(piece)
        f.write(b"</authors></arXiv></metadata></record>")
        f.write(oai_record("2501.00003", "Another fine title").encode())
        f.write(OAI_TAIL.encode())


OAI_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
    "<responseDate>2025-01-03T00:00:00Z</responseDate>"
    '<request verb="ListRecords" metadataPrefix="arXiv">http://export.arxiv.org/oai2</request>'
    "<ListRecords>"
)
OAI_TAIL = "</ListRecords></OAI-PMH>\n"


def oai_record(ident: str, title: str) -> str:
    return (
        f"<record><header><identifier>oai:arXiv.org:{ident}</identifier>"
        "<datestamp>2025-01-02</datestamp><setSpec>cs</setSpec></header><metadata>"
        f'<arXiv xmlns="http://arxiv.org/OAI/arXiv/"><id>{ident}</id>'
        "<created>2025-01-01</created>"
        "<authors><author><keyname>Probe</keyname><forenames>Ann</forenames></author></authors>"
        f"<title>{title}</title><categories>cs.CR</categories>"
        "<abstract>An abstract.</abstract></arXiv></metadata></record>"
    )


def _peak_ingest(tmp: Path, src: Path) -> tuple[int, dict[str, Any]]:
    """(peak RSS in bytes, --json report) of `paperdesk ingest --on-error skip --json SRC`
    run in a child of a child: the outer child reads RUSAGE_CHILDREN after the ingest ends,
    so each measurement sees only its own ingest."""
    db = tmp / f"{src.stem}.db"
    cmd = [sys.executable, "-m", "paperdesk", "--db", str(db), "ingest", "--on-error", "skip",
           "--json", str(src)]
    probe = (
        "import resource, subprocess, sys, json\n"
        f"p = subprocess.run({cmd!r}, capture_output=True)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
        "print(json.dumps({'peak': peak, 'rc': p.returncode, 'out': p.stdout.decode(),"
        " 'err': p.stderr.decode()[-2000:]}))\n"
    )
    env = {**os.environ, "PAPERDESK_WORKERS": "1"}
    res = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                    check=True, env=env).stdout)
    assert res["out"], res["err"]
    return int(res["peak"]), json.loads(res["out"])


def _baseline(tmp: Path) -> int:
    tiny = tmp / "tiny.jsonl"
    tiny.write_bytes(b"".join(_good(i) for i in range(10)))
    peak, report = _peak_ingest(tmp, tiny)
    assert report["inserted"] == 10
    return peak


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_line_bomb_memory_stays_bounded(tmp_path: Path, kind: str) -> None:
    bomb = tmp_path / f"bomb.{kind}.gz"
    _line_bomb(bomb, csv=kind == "csv")
    assert bomb.stat().st_size < 1 * MiB  # a few hundred KB on disk
    base = _baseline(tmp_path)
    peak, report = _peak_ingest(tmp_path, bomb)
    print(f"{kind} line bomb: peak RSS {peak / MiB:.0f} MiB, tiny-file ingest {base / MiB:.0f} MiB")
    assert peak - base < PEAK_OVER_BASELINE, (peak / MiB, base / MiB)
    assert report["inserted"] == 10 and report["rejected"] == 1  # the lines around it are kept
    assert "longer than" in report["rejects"][0]["error"] and report["rejects"][0]["record_no"] == 6


def test_xml_record_bomb_memory_stays_bounded(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.xml.gz"
    _xml_bomb(bomb)
    assert bomb.stat().st_size < 2 * MiB
    base = _baseline(tmp_path)
    peak, report = _peak_ingest(tmp_path, bomb)
    print(f"XML bomb: peak RSS {peak / MiB:.0f} MiB, tiny-file ingest {base / MiB:.0f} MiB")
    assert peak - base < PEAK_OVER_BASELINE, (peak / MiB, base / MiB)
    assert report["inserted"] == 1 and report["rejected"] == 1
    assert "XML record larger than" in report["rejects"][0]["error"]


def test_entity_in_xml_title_keeps_the_text(tmp_path: Path) -> None:
    doc = tmp_path / "page.xml"
    body = (OAI_HEAD + oai_record("2501.00001", "Bounds for &fancy; codes")
            + oai_record("2501.00002", "Caf&#233; &amp; tea") + OAI_TAIL)
    doc.write_text(body.replace("<OAI-PMH", '<!DOCTYPE OAI-PMH [<!ENTITY fancy "X">]>\n<OAI-PMH', 1))
    with open_store(tmp_path / "p.db") as store:
        report = ingest_paths(store, [doc], on_error="skip")
        recs = store.get_records(["arxiv:2501.00001", "arxiv:2501.00002"])
    assert report.inserted == 2 and report.rejected == 0
    assert recs["arxiv:2501.00001"].title == "Bounds for &fancy; codes"  # not null, not cut
    assert recs["arxiv:2501.00002"].title == "Café & tea"


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "paperdesk", "--db", str(tmp / "cli.db"), *args],
                          capture_output=True, text=True, env={**os.environ, "PAPERDESK_WORKERS": "1"})


def test_truncated_gzip_report_counts_what_was_read(tmp_path: Path) -> None:
    whole = gzip.compress(b"".join(_good(i) for i in range(20_000)))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    res = _cli(tmp_path, "ingest", "--on-error", "skip", "--json", str(cut))
    report = json.loads(res.stdout)
    assert report["inserted"] > 1000, report
    assert report["records"] >= report["inserted"] and report["rejected"] == 1, report
    assert "truncated" in report["rejects"][0]["error"]
    with open_store(tmp_path / "cli.db") as store:
        assert store.count_records("probe") == report["inserted"]


def test_empty_file_is_called_empty(tmp_path: Path) -> None:
    for name, data in (("empty.jsonl", b""), ("blank.csv", b"\n \n"), ("empty.gz", gzip.compress(b""))):
        (tmp_path / name).write_bytes(data)
        res = _cli(tmp_path, "ingest", str(tmp_path / name))
        assert res.returncode == 1 and "empty file" in res.stderr, res.stderr
        assert "unknown format" not in res.stderr


def test_binary_file_as_bibtex_stores_nothing(tmp_path: Path) -> None:
    import random

    noise = random.Random(18).randbytes(40_000)
    # a binary file that happens to hold what looks like entries (as compressed or image
    # data can): bibtexparser alone would store them as records
    data = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n@misc{junk1, title={\x01\x02}}\n"
            + b"@article{junk2, year=1}\n" + noise)
    src = tmp_path / "picture.bib"
    src.write_bytes(data)
    res = _cli(tmp_path, "ingest", "--format", "bibtex", str(src))
    assert res.returncode == 1 and "binary" in res.stderr, res.stderr
    with open_store(tmp_path / "cli.db") as store:
        assert store.count_records(None) == 0
