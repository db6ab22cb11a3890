"""The polite client against a real HTTP server on 127.0.0.1 replaying real exchanges.

Waits are recorded by an injected `sleep` instead of being slept (so the real arXiv 503
asking for 10 s costs nothing), except in the interval test, which measures real gaps.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import shared_file
from paperdesk.errors import HarvestError
from paperdesk.harvest.http import PoliteClient, Politeness, retry_after_seconds, user_agent
from replay_server import ReplayServer, Reply, add_recording, load_recording

LISTRECORDS_503 = "arxiv/oai-pmh/listrecords-arXiv-503-then-200.json"


def client(sleeps: list[float], **politeness: float) -> PoliteClient:
    p = Politeness(min_interval=0.0, timeout=5.0, retries=3, backoff=1.0)
    for k, v in politeness.items():
        setattr(p, k, v)
    return PoliteClient(
        agent="paperdesk-test/1 (mailto:test@example.org)", politeness=p, sleep=sleeps.append
    )


def test_real_503_retry_after_is_honoured(replay: ReplayServer) -> None:
    # The recording: 503 with `Retry-After: 10` (as arXiv answers), then 200 with records.
    exchanges = load_recording(shared_file(LISTRECORDS_503))
    assert [r.status for _, r in exchanges] == [503, 200]
    assert ("Retry-After", "10") in exchanges[0][1].headers
    add_recording(replay, exchanges)
    sleeps: list[float] = []
    with client(sleeps) as c:
        got = c.get(replay.url + exchanges[0][0])
    assert got.status == 200 and b"<ListRecords>" in got.content
    assert sleeps == [10.0]  # exactly what the server asked, not our own backoff
    assert got.attempts == 2 and len(replay.seen) == 2
    assert all(s.headers["user-agent"].startswith("paperdesk-test/1") for s in replay.seen)


def test_retry_after_as_http_date(replay: ReplayServer) -> None:
    now = datetime(2026, 11, 29, 22, 0, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=42), usegmt=True)
    replay.add("/x", Reply(503, b"busy", [("Retry-After", later)]), Reply(200, b"ok"))
    sleeps: list[float] = []
    c = PoliteClient(politeness=Politeness(min_interval=0), sleep=sleeps.append, now=lambda: now)
    with c:
        assert c.get(replay.url + "/x").content == b"ok"
    assert sleeps == [42.0]


def test_retry_after_parsing() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after_seconds("10", now) == 10.0
    assert retry_after_seconds(" 3 ", now) == 3.0
    assert retry_after_seconds("Wed, 31 Dec 2025 23:59:00 GMT", now) == 0.0  # in the past
    assert retry_after_seconds("soon", now) is None
    assert retry_after_seconds(None, now) is None


def test_timeout_is_retried(replay: ReplayServer) -> None:
    # First answer comes after the client's timeout; the retry gets a prompt answer.
    replay.add("/slow", Reply(200, b"late", delay=1.5), Reply(200, b"prompt"))
    sleeps: list[float] = []
    with client(sleeps, timeout=0.3) as c:
        got = c.get(replay.url + "/slow")
    assert got.content == b"prompt" and got.attempts == 2
    assert sleeps == [1.0]  # one backoff wait (backoff * 2**0)


def test_body_cut_mid_way_is_retried_and_never_returned_half(replay: ReplayServer) -> None:
    body = shared_file(LISTRECORDS_503).read_bytes()
    replay.add("/page", Reply(200, body, cut_after=len(body) // 2), Reply(200, body))
    sleeps: list[float] = []
    with client(sleeps) as c:
        got = c.get(replay.url + "/page")
    assert got.content == body and got.attempts == 2


def test_gives_up_after_bounded_retries_with_exponential_backoff(replay: ReplayServer) -> None:
    replay.add("/down", Reply(502, b"bad gateway"))
    sleeps: list[float] = []
    with client(sleeps, retries=3) as c, pytest.raises(HarvestError, match="gave up after 4"):
        c.get(replay.url + "/down")
    assert sleeps == [1.0, 2.0, 4.0]
    assert len(replay.seen) == 4


def test_client_errors_are_not_retried(replay: ReplayServer) -> None:
    sleeps: list[float] = []
    with client(sleeps) as c, pytest.raises(HarvestError, match="HTTP 404"):
        c.get(replay.url + "/nothing-recorded-here")
    assert len(replay.seen) == 1 and sleeps == []


def test_accepted_error_status_is_returned(replay: ReplayServer) -> None:
    replay.add("/api?id_list=abc", Reply(400, b"<feed/>"))
    with client([]) as c:
        got = c.get(replay.url + "/api", {"id_list": "abc"}, accept=(400,))
    assert got.status == 400 and got.content == b"<feed/>"


def test_overlong_retry_after_stops_instead_of_hanging(replay: ReplayServer) -> None:
    replay.add("/x", Reply(503, b"", [("Retry-After", "86400")]))
    sleeps: list[float] = []
    with client(sleeps, max_retry_after=600) as c, pytest.raises(HarvestError, match="86400"):
        c.get(replay.url + "/x")
    assert sleeps == []


def test_requests_are_spaced_by_the_interval(replay: ReplayServer) -> None:
    replay.add("/a", Reply(200, b"a"))
    p = Politeness(min_interval=0.25, timeout=5)
    with PoliteClient(politeness=p) as c:  # real sleep, real clock
        for _ in range(3):
            c.get(replay.url + "/a")
    gaps = [b.at - a.at for a, b in zip(replay.seen, replay.seen[1:], strict=False)]
    assert len(gaps) == 2 and min(gaps) >= 0.24
    assert Politeness().min_interval >= 3.0  # the default is arXiv's rule


def test_default_user_agent_names_project_and_contact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPERDESK_USER_AGENT", raising=False)
    monkeypatch.setenv("PAPERDESK_MAILTO", "ops@example.org")
    ua = user_agent()
    assert ua.startswith("paperdesk/") and "+https://" in ua and "mailto:ops@example.org" in ua
    monkeypatch.setenv("PAPERDESK_USER_AGENT", "mybot/2")
    assert user_agent("x@y.z") == "mybot/2"


def test_oversized_response_is_refused_not_buffered(replay: ReplayServer) -> None:
    body = shared_file(LISTRECORDS_503).read_bytes()
    replay.add("/big", Reply(200, body))
    with client([], max_bytes=1000) as c, pytest.raises(HarvestError, match="exceeds 1000"):
        c.get(replay.url + "/big")
    assert len(replay.seen) == 1  # not retried: it would be as big next time


HTTP_DATES = st.one_of(
    st.text(max_size=60),
    st.datetimes().map(lambda d: format_datetime(d.replace(tzinfo=UTC), usegmt=True)),
    st.from_regex(r"\A[A-Za-z]{3}, \d{1,3} [A-Za-z]{3} \d{1,6} \d\d:\d\d:\d\d [A-Z+0-9-]{1,5}\Z"),
)


@given(HTTP_DATES)
@settings(max_examples=100, deadline=None)
def test_any_retry_after_header_gives_a_wait_or_none(value: str) -> None:
    """The header is the server's text, so untrusted: never an exception, never negative."""
    got = retry_after_seconds(value, datetime(2026, 1, 1, tzinfo=UTC))
    assert got is None or got >= 0
