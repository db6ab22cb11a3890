"""Harvest pipeline throughput over loopback: is paperdesk or the network the bottleneck?

    nice -n 10 .venv/bin/python bench/harvest.py [--pages 20] [--per-page 1000]

arXiv allows one OAI-PMH request every 3 s and serves about 1000 records a page, so a
live harvest cannot exceed ~330 records/s. This measures what the harvester itself costs
per page — HTTP over 127.0.0.1, OAI parsing, normalisation and the one-transaction store
of records + checkpoint — with the politeness interval set to 0, on pages built from the
real captured ListRecords response (its two real records repeated with new ids
`9901.NNNNN`, so text statistics stay real) and chained by resumption tokens.
A second run over the same pages measures the re-harvest (every payload already stored).
Prints one line per run: pages, records, seconds, records/s, ms per page, and the CPU
seconds of this process (client, server thread and store together), which a loaded
machine distorts less than wall time.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the loopback replay server of the tests

from paperdesk.harvest.http import PoliteClient, Politeness  # noqa: E402
from paperdesk.harvest.oai import harvest_oai  # noqa: E402
from paperdesk.store import open_store  # noqa: E402
from replay_server import Reply, load_recording, replay_server  # noqa: E402

SHARED = Path(os.environ.get("PAPERDESK_SHARED_DATA", ROOT.parent / "shared" / "data"))
LISTRECORDS = SHARED / "arxiv/oai-pmh/oaipmh-listrecords---should-list-identifiers-from-arxiv.json"


def build_pages(pages: int, per_page: int) -> list[bytes]:
    (_, _), (_, real) = load_recording(LISTRECORDS)
    body = real.body.decode()
    records = re.findall(r"(?s)<record>.*?</record>\n", body)
    head = body[: body.index("<record>")]
    tail = body[body.rindex("</record>") + len("</record>\n") :]
    out = []
    n = 0
    for p in range(pages):
        parts = [head]
        for _ in range(per_page):
            src = records[n % len(records)]
            new_id = f"9901.{n:05d}"
            src = re.sub(r"oai:arXiv\.org:[^<]+", f"oai:arXiv.org:{new_id}", src)
            src = re.sub(r"<id>[^<]+</id>", f"<id>{new_id}</id>", src)
            parts.append(src)
            n += 1
        if p + 1 < pages:
            parts.append(
                f'<resumptionToken cursor="{p * per_page}" '
                f'completeListSize="{pages * per_page}">p{p + 1}</resumptionToken>\n'
            )
        parts.append(tail)
        out.append("".join(parts).encode())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--per-page", type=int, default=1000)
    args = ap.parse_args()
    pages = build_pages(args.pages, args.per_page)
    with replay_server() as srv, tempfile.TemporaryDirectory() as tmp:
        srv.add("/oai?verb=ListRecords&metadataPrefix=arXiv&from=1999-01-01", Reply(200, pages[0]))
        for i, body in enumerate(pages[1:], 1):
            srv.add(f"/oai?verb=ListRecords&resumptionToken=p{i}", Reply(200, body))
        store = open_store(Path(tmp) / "bench.db")
        for label in ("first harvest", "re-harvest (unchanged)"):
            with PoliteClient(politeness=Politeness(min_interval=0)) as client:
                t, cpu = time.perf_counter(), time.process_time()
                rep = harvest_oai(store, client, base_url=srv.url + "/oai", from_date="1999-01-01")
                dt, dcpu = time.perf_counter() - t, time.process_time() - cpu
            assert rep.complete and rep.records == args.pages * args.per_page
            print(
                f"{label}: {rep.pages} pages, {rep.records} records "
                f"({rep.inserted} new, {rep.unchanged} unchanged), {dt:.2f} s, "
                f"{rep.records / dt:,.0f} records/s, {1000 * dt / rep.pages:.0f} ms/page; "
                f"CPU {dcpu:.2f} s = {rep.records / dcpu:,.0f} records/CPU-s"
            )
        store.close()


if __name__ == "__main__":
    main()
