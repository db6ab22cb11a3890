"""The one HTTP client of the harvesters: politeness, retries and backoff live here only.

Remote sources (arXiv OAI-PMH and API, OpenReview) ask their clients to identify
themselves, to space their requests (arXiv: one request every 3 s) and to honour
`503`/`429` with `Retry-After` — arXiv's OAI-PMH endpoint uses exactly that for flow
control. Harvesters therefore never call httpx themselves: they call `PoliteClient.get`,
which

* sends a clear User-Agent with a contact address,
* waits at least `min_interval` seconds after the previous response before the next
  request (default 3 s),
* retries timeouts, dropped connections (including a body cut off half-way) and 5xx
  with exponential backoff, waiting exactly what `Retry-After` says when the server gives
  it (seconds or an HTTP date),
* gives up after a bounded number of retries with `HarvestError`, so a harvest stops
  cleanly with its checkpoint intact and the next run resumes there.

`sleep`, `clock` and `now` are injectable so tests can check what the client *asked* to
wait without waiting it; the requests themselves always go to a real socket.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from paperdesk import __version__, settings
from paperdesk.errors import HarvestError

log = logging.getLogger("paperdesk.harvest")

PROJECT_URL = "https://github.com/paperdesk/paperdesk"

# Statuses worth retrying: the server is overloaded or briefly broken, not refusing us.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

# Transport failures worth retrying: the request may well succeed a moment later.
# DecodingError covers a gzip body cut off by a dropped connection.
_RETRY_EXCEPTIONS: tuple[type[Exception], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    httpx.DecodingError,
)


def user_agent(mailto: str | None = None) -> str:
    """`paperdesk/<version> (+<project url>; mailto:<contact>)`.

    The contact comes from `mailto`, else `$PAPERDESK_MAILTO`; arXiv and Crossref ask
    for one so they can reach an operator instead of blocking them. `$PAPERDESK_USER_AGENT`
    replaces the whole string for deployments that must use their own.
    """
    override = settings.USER_AGENT.get()
    if override:
        return override
    contact = mailto or settings.MAILTO.get()
    detail = f"+{PROJECT_URL}" + (f"; mailto:{contact}" if contact else "")
    return f"paperdesk/{__version__} ({detail})"


@dataclass
class Politeness:
    """How hard the client may push a server, and how long it keeps trying."""

    min_interval: float = 3.0
    """Seconds between the end of one response and the next request (arXiv asks for 3)."""
    timeout: float = 60.0
    """Seconds to connect / between bytes before the attempt counts as a timeout."""
    retries: int = 5
    """Retries after the first attempt; then HarvestError."""
    backoff: float = 5.0
    """First backoff wait in seconds; doubles each retry (when no Retry-After is given)."""
    max_backoff: float = 300.0
    max_retry_after: float = 3600.0
    """A Retry-After longer than this is not waited out: the harvest stops instead."""
    max_bytes: int = 512 * 1024 * 1024
    """Largest response body accepted (decompressed): a server is untrusted input too.
    arXiv's biggest OAI pages (arXivRaw, ~1000 records) are a few MB."""


@dataclass
class Fetched:
    """A complete response: the body is fully read, so a cut-off body never escapes."""

    url: str
    status: int
    headers: httpx.Headers
    content: bytes
    attempts: int


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date).

    None when absent or unreadable (the caller then falls back to its own backoff);
    a date in the past means 0.
    """
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit alone accepts "²", which float() refuses
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _wall_now() -> datetime:
    return datetime.now(UTC)


class PoliteClient:
    """A polite, retrying GET client (see the module docstring).

    Use as a context manager, or call `close()`; one client per harvest, so the interval
    between requests holds across all pages of that harvest.
    """

    def __init__(
        self,
        *,
        agent: str | None = None,
        politeness: Politeness | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _wall_now,
    ) -> None:
        self.politeness = politeness or Politeness()
        self.agent = agent or user_agent()
        self._sleep = sleep
        self._clock = clock
        self._now = now
        self._last_done: float | None = None
        self.requests = 0
        """Requests sent (attempts included): for reports and tests."""
        self._http = httpx.Client(
            headers={"User-Agent": self.agent},
            timeout=httpx.Timeout(self.politeness.timeout),
            follow_redirects=True,
        )

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _wait(self, seconds: float, why: str) -> None:
        if seconds > 0:
            log.debug("waiting %.1f s (%s)", seconds, why)
            self._sleep(seconds)

    def _space_requests(self) -> None:
        if self._last_done is None:
            return
        remaining = self.politeness.min_interval - (self._clock() - self._last_done)
        self._wait(remaining, "politeness interval")

    def _once(
        self, url: str, params: Mapping[str, str | int] | None, shown: str, attempt: int
    ) -> Fetched:
        """One request, its body read completely but never beyond `max_bytes`."""
        limit = self.politeness.max_bytes
        with self._http.stream("GET", url, params=params) as resp:
            declared = resp.headers.get("Content-Length", "")
            if declared.isascii() and declared.isdigit() and int(declared) > limit:
                raise HarvestError(f"GET {shown}: response of {declared} bytes exceeds {limit}")
            chunks: list[bytes] = []
            size = 0
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if size > limit:
                    raise HarvestError(f"GET {shown}: response exceeds {limit} bytes")
                chunks.append(chunk)
            return Fetched(str(resp.url), resp.status_code, resp.headers, b"".join(chunks), attempt)

    def get(
        self,
        url: str,
        params: Mapping[str, str | int] | None = None,
        *,
        accept: Collection[int] = (),
    ) -> Fetched:
        """GET `url` with `params`, retrying as described; the body is read completely.

        2xx responses and statuses in `accept` are returned (an API may explain a bad
        request in its body); other 4xx raise HarvestError at once — retrying cannot help.
        """
        p = self.politeness
        last_problem = ""
        shown = str(httpx.URL(url, params=params)) if params else url
        for attempt in range(p.retries + 1):
            self._space_requests()
            self.requests += 1
            wait: float | None = None
            try:
                got = self._once(url, params, shown, attempt + 1)
            except _RETRY_EXCEPTIONS as exc:
                last_problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            except httpx.HTTPError as exc:
                raise HarvestError(f"GET {shown}: {type(exc).__name__}: {exc}") from exc
            else:
                status = got.status
                if 200 <= status < 300 or status in accept:
                    self._last_done = self._clock()
                    return got
                if status not in RETRY_STATUSES:
                    self._last_done = self._clock()
                    text = got.content[:200].decode("utf-8", errors="replace")
                    raise HarvestError(f"GET {shown}: HTTP {status}: {' '.join(text.split())}")
                last_problem = f"HTTP {status}"
                if status in (429, 503):
                    wait = retry_after_seconds(got.headers.get("Retry-After"), self._now())
                    if wait is not None and wait > p.max_retry_after:
                        raise HarvestError(
                            f"GET {shown}: HTTP {status} with Retry-After {wait:.0f} s, "
                            f"longer than the {p.max_retry_after:.0f} s limit; try again later"
                        )
            self._last_done = self._clock()
            if attempt == p.retries:
                break
            why = "Retry-After"
            if wait is None:
                wait = min(p.max_backoff, p.backoff * 2**attempt)
                why = "backoff"
            log.warning(
                "GET %s: %s; retry %d/%d in %.1f s (%s)",
                shown,
                last_problem,
                attempt + 1,
                p.retries,
                wait,
                why,
            )
            self._wait(wait, why)
        raise HarvestError(f"GET {shown}: gave up after {p.retries + 1} attempts ({last_problem})")
