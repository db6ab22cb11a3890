"""Request-level protection, as plain ASGI middleware so every route gets it:

- security headers, with a Content-Security-Policy that allows no inline script at all
  (inline *style attributes* are allowed: KaTeX positions glyphs with them);
- a request body limit (413 before the body is read when Content-Length says so, and while
  streaming when it does not);
- CSRF tokens for POST forms: a random nonce cookie and an HMAC of it in the form
  (double submit, signed, so a sibling subdomain cannot forge one);
- a per-client token bucket for expensive endpoints (search, related, feeds of queries),
  and a per-account back-off on failed sign-ins;
- HEAD answered as GET without the body, and a 500 that escapes every handler answered in
  the JSON error shape with these headers (not Starlette's bare text/plain).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; style-src-elem 'self'; "
    "style-src-attr 'unsafe-inline'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class _HttpMiddleware:
    """ASGI middleware for HTTP requests: anything else (lifespan, websockets) passes
    through untouched; a subclass's `http` handles the requests."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class SecurityHeaders(_HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                have = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k, v) for k, v in HEADERS if k not in have
                ]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not started:  # a bug: still one error shape, still these headers
                await _json_error(send_with_headers, 500, "Internal Server Error",
                                  "the server failed on this request (it is logged)")
            raise  # for the server's log


class HeadAsGet(_HttpMiddleware):
    """HEAD on any GET route: the GET response's status and headers, no body."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body"):
                    return
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


class BodyLimit(_HttpMiddleware):
    """Refuse request bodies over `max_bytes` with a JSON 413."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        super().__init__(app)
        self.max_bytes = max_bytes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        for k, v in scope.get("headers", []):
            if k == b"content-length" and v.isdigit() and int(v) > self.max_bytes:
                await _too_large(send, self.max_bytes)
                return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(send, self.max_bytes)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    await _json_error(send, 413, "Payload Too Large", f"request bodies are limited to {limit} bytes")


async def _json_error(send: Send, status: int, title: str, detail: str) -> None:
    body = json.dumps({"error": {"status": status, "title": title, "detail": detail}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


# -- CSRF ---------------------------------------------------------------------------------

CSRF_COOKIE = "pd_csrf"


def new_nonce() -> str:
    return secrets.token_urlsafe(24)


def csrf_token(secret: bytes, nonce: str) -> str:
    return hmac.new(secret, nonce.encode(), hashlib.sha256).hexdigest()


def csrf_ok(secret: bytes, nonce: str | None, token: str | None) -> bool:
    if not nonce or not token:
        return False
    return hmac.compare_digest(csrf_token(secret, nonce), token)


# -- rate limiting ------------------------------------------------------------------------


class RateLimiter:
    """A token bucket per (client, bucket): `rate` requests per `per` seconds, bursting to
    `rate`. In memory: one process serves the embedded default."""

    def __init__(self, rate: int, per: float):
        self.rate = rate
        self.per = per
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, client: str, bucket: str) -> float:
        """0 when allowed, else the seconds to wait."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get((client, bucket), (float(self.rate), now))
            tokens = min(float(self.rate), tokens + (now - last) * self.rate / self.per)
            if tokens >= 1:
                self._buckets[(client, bucket)] = (tokens - 1, now)
                if len(self._buckets) > 100_000:  # bound memory under a flood of clients
                    self._buckets.clear()
                return 0.0
            self._buckets[(client, bucket)] = (tokens, now)
            return (1 - tokens) * self.per / self.rate


class Backoff:
    """Failed sign-ins per account: after `free` failures in a row each further attempt
    waits twice as long as the one before (1 s, 2 s, 4 s … up to `cap`), whichever client
    it comes from; a success clears the account. Guessing one curator's password from many
    addresses is then as slow as from one, while a mistyped password costs nothing."""

    def __init__(self, free: int = 5, cap: float = 900.0):
        self.free = free
        self.cap = cap
        self._state: dict[str, tuple[int, float]] = {}  # account -> (failures, not before)
        self._lock = threading.Lock()

    def wait(self, account: str) -> float:
        """0 when the account may try now, else the seconds to wait."""
        with self._lock:
            _, until = self._state.get(account.lower(), (0, 0.0))
        return max(0.0, until - time.monotonic())

    def failed(self, account: str) -> None:
        key = account.lower()
        with self._lock:
            n = self._state.get(key, (0, 0.0))[0] + 1
            delay = 0.0 if n < self.free else min(self.cap, 2.0 ** (n - self.free))
            self._state[key] = (n, time.monotonic() + delay)
            if len(self._state) > 100_000:  # bound memory under a flood of made-up names
                self._state.clear()

    def succeeded(self, account: str) -> None:
        with self._lock:
            self._state.pop(account.lower(), None)


class ServerTiming(_HttpMiddleware):
    """`Server-Timing: app;dur=…` on every response: the time the app took, without the
    network — what `bench/web.py` reports as server-side latency, and visible to users in
    their browser's developer tools."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - start) * 1000
                message["headers"] = [*message.get("headers", []),
                                      (b"server-timing", f"app;dur={ms:.2f}".encode())]
            await send(message)

        await self.app(scope, receive, timed)
