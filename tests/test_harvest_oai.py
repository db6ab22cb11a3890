"""`harvest arxiv` (OAI-PMH) against a real HTTP server on 127.0.0.1 replaying arXiv.

The exchanges are tests/data's own, in the shape of arXiv's (tests/data/README.md): a `503`
with `Retry-After: 10`, then a ListRecords of two real arXiv records (their metadata from
arXiv `.abs` files, datestamp 2016-05-25) in the `arXiv` format. The multi-page sequence is
made from it: the response is split into two pages, one record each, chained by resumption
tokens `t1` — only the envelope is repeated. OAI error responses (`noRecordsMatch`,
`badResumptionToken`, `badArgument`) are that envelope with the `<ListRecords>` element
replaced by the OAI `<error>` element the protocol defines.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from conftest import ROOT, shared_file
from paperdesk.cli import main
from paperdesk.errors import HarvestError, ParseError
from paperdesk.harvest import HarvestReport
from paperdesk.harvest.http import PoliteClient, Politeness
from paperdesk.harvest.oai import checkpoint_name, harvest_oai
from paperdesk.ingest import ingest_paths
from paperdesk.store import SQLiteStore, open_store
from replay_server import ReplayServer, Reply, load_recording

LISTRECORDS = "arxiv/oai-pmh/listrecords-arXiv-503-then-200.json"
GETRECORD = "arxiv/oai-pmh/getrecord-arXiv.json"
FRESH = "/oai2?metadataPrefix=arXiv&from=2016-05-23&until=2016-05-25&verb=ListRecords"
NEXT = "/oai2?verb=ListRecords&resumptionToken=t1"
KEYS = {"arxiv:1601.04345", "arxiv:cs/0212040"}


def split_envelope(body: str) -> tuple[str, list[str], str]:
    """(everything before the first record, the records verbatim, everything after)."""
    records = re.findall(r"(?s)<record>.*?</record>\n?", body)
    head = body[: body.index("<record>")]
    tail = body[body.rindex("</record>") + len("</record>\n") :]
    return head, records, tail


def real_pages() -> tuple[Reply, Reply, Reply]:
    """The recorded 503, then the recorded ListRecords split into two token-chained pages."""
    (_, r503), (_, r200) = load_recording(shared_file(LISTRECORDS))
    head, records, tail = split_envelope(r200.body.decode())
    assert len(records) == 2
    token = '<resumptionToken cursor="0" completeListSize="2">t1</resumptionToken>\n'
    last = '<resumptionToken cursor="1" completeListSize="2"></resumptionToken>\n'
    page1 = head + records[0] + token + tail
    page2 = head + records[1] + last + tail
    return r503, Reply(200, page1.encode(), r200.headers), Reply(200, page2.encode(), r200.headers)


def oai_error(code: str) -> bytes:
    (_, _), (_, r200) = load_recording(shared_file(LISTRECORDS))
    body = r200.body.decode()
    start, end = body.index("<ListRecords>"), body.index("</ListRecords>") + len("</ListRecords>")
    return (body[:start] + f'<error code="{code}">{code} (test)</error>' + body[end:]).encode()


def client(sleeps: list[float], **kw: float) -> PoliteClient:
    p = Politeness(min_interval=0.0, timeout=5.0, retries=2, backoff=1.0)
    for k, v in kw.items():
        setattr(p, k, v)
    return PoliteClient(agent="paperdesk-test/1", politeness=p, sleep=sleeps.append)


def harvest(
    store: SQLiteStore, replay: ReplayServer, sleeps: list[float], **kw: Any
) -> HarvestReport:
    with client(sleeps) as c:
        return harvest_oai(store, c, base_url=replay.url + "/oai2", **kw)


def test_follows_tokens_honours_503_and_checkpoints(
    replay: ReplayServer, store: SQLiteStore
) -> None:
    r503, page1, page2 = real_pages()
    replay.add(FRESH, r503, page1)
    replay.add(NEXT, page2)
    sleeps: list[float] = []
    report = harvest(store, replay, sleeps, from_date="2016-05-23", until="2016-05-25")
    assert sleeps == [10.0]  # the recorded Retry-After, honoured
    assert report.complete and report.pages == 2 and report.inserted == 2
    assert report.requests == 3
    assert {r.key for _, r in store.iter_records()} == KEYS
    rec = store.get_record("arxiv:1601.04345")
    assert (rec.doi or "").lower() == "10.1093/mnras/stw475" and rec.authors[0].family == "Luo"
    cp = store.get_checkpoint(checkpoint_name(replay.url + "/oai2", None, "arXiv"))
    assert cp == {
        "token": None,
        "from": "2016-05-23",
        "until": "2016-05-25",
        "last_datestamp": "2016-05-25",
        "done": True,
    }


def test_connection_dropped_mid_page_then_resumed_run_has_no_duplicates(
    replay: ReplayServer, store: SQLiteStore
) -> None:
    _, page1, page2 = real_pages()
    replay.add(FRESH, page1)
    # Page 2 is cut off half-way on every attempt: the run must stop, not store half.
    replay.add(NEXT, Reply(200, page2.body, page2.headers, cut_after=len(page2.body) // 2))
    sleeps: list[float] = []
    with pytest.raises(HarvestError, match="gave up after 3 attempts"):
        harvest(store, replay, sleeps, from_date="2016-05-23", until="2016-05-25")
    assert sleeps == [1.0, 2.0]  # backoff between the three attempts
    assert {r.key for _, r in store.iter_records()} == {"arxiv:1601.04345"}
    name = checkpoint_name(replay.url + "/oai2", None, "arXiv")
    assert (store.get_checkpoint(name) or {})["token"] == "t1"

    replay.replace(NEXT, page2)  # the network is back
    seen_before = len(replay.seen)
    report = harvest(store, replay, [])  # no arguments: resume from the checkpoint
    assert report.resumed == "token" and report.complete
    assert [s.query for s in replay.seen[seen_before:]] == [
        {"verb": "ListRecords", "resumptionToken": "t1"}
    ]
    assert report.inserted == 1
    assert store.count_records() == 2
    assert all(len(store.record_payloads(k)) == 1 for k in KEYS)


def test_timeout_on_a_page_is_retried(replay: ReplayServer, store: SQLiteStore) -> None:
    _, page1, page2 = real_pages()
    replay.add(FRESH, page1)
    replay.add(NEXT, Reply(200, page2.body, delay=1.0), page2)
    sleeps: list[float] = []
    with client(sleeps, timeout=0.3) as c:
        report = harvest_oai(
            store, c, base_url=replay.url + "/oai2", from_date="2016-05-23", until="2016-05-25"
        )
    assert report.complete and store.count_records() == 2
    assert sleeps == [1.0] and len(replay.requests_to(resumptionToken="t1")) == 2


def test_rerun_fetches_only_what_changed_since_last_datestamp(
    replay: ReplayServer, store: SQLiteStore
) -> None:
    _, page1, page2 = real_pages()
    replay.add(FRESH, page1)
    replay.add(NEXT, page2)
    harvest(store, replay, [], from_date="2016-05-23", until="2016-05-25")
    # The next day: arXiv lists what changed from 2016-05-25 on. Served here: the
    # GetRecord response for 1601.04345 re-wrapped as a one-record ListRecords page.
    ((_, got),) = load_recording(shared_file(GETRECORD))
    head, records, tail = split_envelope(got.body.decode())
    rewrapped = (
        head.replace("<GetRecord>", "<ListRecords>")
        + records[0]
        + tail.replace("</GetRecord>", "</ListRecords>")
    )
    replay.add(
        "/oai2?verb=ListRecords&metadataPrefix=arXiv&from=2016-05-25",
        Reply(200, rewrapped.encode()),
    )
    seen_before = len(replay.seen)
    report = harvest(store, replay, [])
    assert report.resumed == "datestamp" and report.complete
    assert [s.query for s in replay.seen[seen_before:]] == [
        {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": "2016-05-25"}
    ]
    assert report.unchanged == 1 and report.inserted == 0
    assert store.count_records() == 2


def test_expired_token_restarts_the_range_from_its_start(
    replay: ReplayServer, store: SQLiteStore
) -> None:
    _, page1, page2 = real_pages()
    name = checkpoint_name(replay.url + "/oai2", None, "arXiv")
    store.set_checkpoint(
        name,
        {
            "token": "stale",
            "from": "2016-05-23",
            "until": "2016-05-25",
            "last_datestamp": "2016-05-25",
            "done": False,
        },
    )
    replay.add(
        "/oai2?verb=ListRecords&resumptionToken=stale", Reply(200, oai_error("badResumptionToken"))
    )
    replay.add(FRESH, page1)
    replay.add(NEXT, page2)
    report = harvest(store, replay, [])
    assert report.complete and store.count_records() == 2
    assert [s.query.get("resumptionToken") for s in replay.seen] == ["stale", None, "t1"]
    assert replay.seen[1].query["from"] == "2016-05-23"


def test_no_records_match_is_an_empty_result(replay: ReplayServer, store: SQLiteStore) -> None:
    replay.add(
        "/oai2?verb=ListRecords&metadataPrefix=arXivRaw&set=cs&from=2030-01-01",
        Reply(200, oai_error("noRecordsMatch")),
    )
    report = harvest(
        store, replay, [], set_spec="cs", metadata_prefix="arXivRaw", from_date="2030-01-01"
    )
    assert report.complete and report.records == 0
    cp = store.get_checkpoint(checkpoint_name(replay.url + "/oai2", "cs", "arXivRaw")) or {}
    assert cp["done"] is True and cp["from"] == "2030-01-01"


def test_other_oai_errors_stop_the_harvest(replay: ReplayServer, store: SQLiteStore) -> None:
    replay.add(
        "/oai2?verb=ListRecords&metadataPrefix=arXiv&from=2016-05-23",
        Reply(200, oai_error("badArgument")),
    )
    with pytest.raises(HarvestError, match="badArgument"):
        harvest(store, replay, [], from_date="2016-05-23")
    assert store.count_records() == 0


def cli_harvest(replay: ReplayServer, tmp_path: Path, *extra: str) -> Result:
    """`paperdesk --db … harvest arxiv` over the replayed range, no politeness wait."""
    args = ["--db", str(tmp_path / "cli.db"), "harvest", "arxiv", "--url", replay.url + "/oai2"]
    args += ["--from", "2016-05-23", "--until", "2016-05-25", "--interval", "0", *extra]
    return CliRunner().invoke(main, args)


def test_cli_json_report(replay: ReplayServer, tmp_path: Path) -> None:
    _, page1, page2 = real_pages()
    replay.add(FRESH, page1)
    replay.add(NEXT, page2)
    result = cli_harvest(replay, tmp_path, "--json")
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert data["complete"] and data["inserted"] == 2 and data["pages"] == 2
    assert replay.seen[0].headers["user-agent"].startswith("paperdesk/")


# The harvest in a child process, as `paperdesk harvest arxiv` runs it, without importing
# every CLI area (some load scikit-learn, which costs seconds on a busy machine).
CHILD = """
import sys, orjson
from paperdesk.harvest.http import Politeness, PoliteClient
from paperdesk.harvest.oai import harvest_oai
from paperdesk.store import open_store
db, url, *rng = sys.argv[1:]
kw = {"from_date": rng[0], "until": rng[1]} if rng else {}
with open_store(db) as store, PoliteClient(politeness=Politeness(min_interval=0)) as c:
    print(orjson.dumps(harvest_oai(store, c, base_url=url, **kw).to_dict()).decode())
"""


def test_sigkill_mid_harvest_then_rerun_completes(replay: ReplayServer, tmp_path: Path) -> None:
    """A real harvest process, killed with SIGKILL while page 2 is in flight; the re-run
    resumes at the stored token and ends with each record once."""
    _, page1, page2 = real_pages()
    replay.add(FRESH, page1)
    replay.add(NEXT, Reply(200, page2.body, delay=30), page2)
    db = tmp_path / "killed.db"
    cmd = [sys.executable, "-c", CHILD, str(db), replay.url + "/oai2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [*cmd, "2016-05-23", "2016-05-25"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 45  # a loaded CI box starts Python slowly
    while not replay.requests_to(resumptionToken="t1") and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert replay.requests_to(resumptionToken="t1"), "the harvest never reached page 2"
    done = subprocess.run(cmd, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    data = orjson.loads(done.stdout)
    assert data["resumed"] == "token" and data["complete"] and data["inserted"] == 1
    with open_store(db) as s:
        assert s.count_records() == 2
        assert all(len(s.record_payloads(k)) == 1 for k in KEYS)


def test_bad_record_stops_or_is_skipped_and_reported(
    replay: ReplayServer, store: SQLiteStore
) -> None:
    """A page whose first record lost its <metadata> (hand-broken copy of the recorded page)."""
    (_, _), (_, r200) = load_recording(shared_file(LISTRECORDS))
    body = r200.body.decode()
    start = body.index("<metadata>")
    broken = body[:start] + body[body.index("</metadata>", start) + len("</metadata>") :]
    replay.add(FRESH, Reply(200, broken.encode()))
    name = checkpoint_name(replay.url + "/oai2", None, "arXiv")
    with pytest.raises(ParseError, match=r"record 1: .*1601\.04345 has no metadata"):
        harvest(store, replay, [], from_date="2016-05-23", until="2016-05-25")
    assert store.count_records() == 0 and store.get_checkpoint(name) is None

    report = harvest(store, replay, [], from_date="2016-05-23", until="2016-05-25", on_error="skip")
    assert report.complete and report.inserted == 1 and report.rejected == 1
    assert {r.key for _, r in store.iter_records()} == {"arxiv:cs/0212040"}
    (reject,) = store.list_rejects()
    assert reject.record_no == 1 and "1601.04345" in reject.error


def test_cli_exhausted_retries_exit_1_with_one_line(replay: ReplayServer, tmp_path: Path) -> None:
    replay.add(FRESH, Reply(502, b"<html>Bad Gateway</html>"))
    result = cli_harvest(replay, tmp_path, "--retries", "0")
    assert result.exit_code == 1
    assert "paperdesk: error: GET " in result.stderr and "gave up after 1 attempts" in result.stderr
    assert "Traceback" not in result.output


def test_tokens_that_keep_expiring_stop_the_run(replay: ReplayServer, store: SQLiteStore) -> None:
    _, page1, _ = real_pages()
    replay.add(FRESH, page1)
    replay.add(NEXT, Reply(200, oai_error("badResumptionToken")))
    with pytest.raises(HarvestError, match="badResumptionToken"):
        harvest(store, replay, [], from_date="2016-05-23", until="2016-05-25")
    # fresh, t1 (expired), fresh, t1 (expired), fresh, t1 (expired): then it gives up.
    assert [s.query.get("resumptionToken") for s in replay.seen] == [None, "t1"] * 3
    assert store.count_records() == 1


def test_harvested_records_equal_ingested_file_records(
    replay: ReplayServer, store: SQLiteStore, tmp_path: Path
) -> None:
    """Live and offline paths agree: harvesting the (split) real response stores exactly
    the records `paperdesk ingest` stores from the same response saved as a file."""
    _, page1, page2 = real_pages()
    replay.add(FRESH, page1)
    replay.add(NEXT, page2)
    harvest(store, replay, [], from_date="2016-05-23", until="2016-05-25")
    (_, _), (_, r200) = load_recording(shared_file(LISTRECORDS))
    saved = tmp_path / "listrecords.xml"
    saved.write_bytes(r200.body)
    with open_store(tmp_path / "ingested.db") as other:
        ingest_paths(other, [saved])
        for key in KEYS:
            assert store.get_record(key).to_dict(raw=True) == other.get_record(key).to_dict(
                raw=True
            )
