"""A real HTTP server on 127.0.0.1 that replays recorded exchanges, for harvester tests.

Harvesters are tested over a real socket, not a mocked transport: the bugs that matter
(a body cut off half-way, a server slower than the timeout, `503` + `Retry-After`) live in
the transport. Each route is a path plus its query parameters (order-free, empty values
ignored, as servers treat them); it holds a list of replies served in order, the last one
repeating. Every request is logged so tests can assert what was asked, when, and with
which User-Agent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

# Headers the recording's transport produced; the replay sets its own framing.
_HOP_BY_HOP = {"transfer-encoding", "content-length", "connection", "keep-alive"}

RouteKey = tuple[str, frozenset[tuple[str, str]]]


def route_key(path_and_query: str) -> RouteKey:
    parts = urlsplit(path_and_query)
    query = frozenset((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if v)
    return parts.path, query


@dataclass
class Reply:
    """One recorded (or derived) response, plus how to misbehave while sending it."""

    status: int = 200
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    delay: float = 0.0
    """Seconds to sleep before answering (to outlast the client's timeout)."""
    cut_after: int | None = None
    """Close the socket after this many body bytes (Content-Length still says all)."""


@dataclass
class Seen:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    at: float


class ReplayServer:
    """Serve `Reply`s by route on 127.0.0.1 (a free port) in a background thread."""

    def __init__(self) -> None:
        self.routes: dict[RouteKey, list[Reply]] = {}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a handler still sleeping must not hold up a test
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, path_and_query: str, *replies: Reply) -> None:
        """Replies for a route, served in order; the last repeats. Adding again appends."""
        self.routes.setdefault(route_key(path_and_query), []).extend(replies)

    def replace(self, path_and_query: str, *replies: Reply) -> None:
        self.routes[route_key(path_and_query)] = list(replies)

    def requests_to(self, **params: str) -> list[Seen]:
        """Logged requests whose query contains all of `params`."""
        return [s for s in self.seen if all(s.query.get(k) == v for k, v in params.items())]

    def _next_reply(self, path_and_query: str) -> Reply | None:
        with self._lock:
            replies = self.routes.get(route_key(path_and_query))
            if not replies:
                return None
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                parts = urlsplit(self.path)
                with server._lock:
                    server.seen.append(
                        Seen(
                            parts.path,
                            dict(parse_qsl(parts.query, keep_blank_values=True)),
                            {k.lower(): v for k, v in self.headers.items()},
                            time.monotonic(),
                        )
                    )
                reply = server._next_reply(self.path)
                if reply is None:
                    reply = Reply(404, f"no recording for {self.path}".encode())
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers:
                        if name.lower() not in _HOP_BY_HOP:
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    if reply.cut_after is not None:
                        self.send_header("Connection", "close")
                    self.end_headers()
                    if reply.cut_after is not None:
                        self.wfile.write(reply.body[: reply.cut_after])
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (timeout test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    def start(self) -> ReplayServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def replay_server() -> Iterator[ReplayServer]:
    srv = ReplayServer().start()
    try:
        yield srv
    finally:
        srv.stop()


def load_recording(path: Path) -> list[tuple[str, Reply]]:
    """(path?query, Reply) for every exchange of a nock-style recording (`paperhive`
    OAI-PMH captures: `path`, `status`, `response`, `rawHeaders` as a flat list)."""
    out: list[tuple[str, Reply]] = []
    for ex in json.loads(path.read_text(encoding="utf-8")):
        raw = ex.get("rawHeaders") or []
        headers = list(zip(raw[0::2], raw[1::2], strict=False))
        body = ex["response"]
        data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode()
        out.append((ex["path"], Reply(int(ex["status"]), data, headers)))
    return out


def add_recording(server: ReplayServer, exchanges: Iterable[tuple[str, Reply]]) -> None:
    for where, reply in exchanges:
        server.add(where, reply)
