"""Links to originals: only http(s), or a known identifier scheme rewritten to its resolver.

A record's `url` becomes a live `<a href>` on the paper, daily and author pages, so a
hostile source could put `javascript:`, `data:` or `vbscript:` there (in any case, with
tabs, newlines or control characters inside the scheme: browsers drop those before they
read it). `safe_link` is the one judge: ingest stores only what it returns (`finish`), and
the templates run every href through it again (the `safe_url` filter), so a record stored
before this check existed cannot produce a live script link either.
"""

from __future__ import annotations

import re
from urllib.parse import quote

__all__ = ["safe_link"]

# What a browser ignores in a URL before it reads the scheme (WHATWG URL: C0 controls and
# space stripped at the ends, ASCII tab and newline removed everywhere).
_STRIP = "".join(chr(c) for c in range(0x21))
_TAB_NL = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)", re.DOTALL)
_RESOLVERS = {
    "doi": "https://doi.org/",
    "arxiv": "https://arxiv.org/abs/",
    "hdl": "https://hdl.handle.net/",
}


def safe_link(url: object) -> str | None:
    """`url` when it is an http(s) link, a `doi:`/`arxiv:`/`hdl:` id as its https
    resolver link, else None (any other scheme, no scheme, not a string)."""
    if not isinstance(url, str):
        return None
    if url.startswith(("https://", "http://")) and url.isprintable() and " " not in url:
        return url  # the common case: already plain
    s = _TAB_NL.sub("", url.strip(_STRIP))
    m = _SCHEME.match(s)
    if m is None:
        return None
    scheme, rest = m.group(1).lower(), m.group(2)
    if any(ord(c) < 0x20 or c == "\x7f" for c in rest):
        return None
    if scheme in ("http", "https"):
        if not rest.startswith("//") or len(rest) <= 2:
            return None
        return f"{scheme}:{quote(rest, safe=_URL_SAFE)}"
    resolver = _RESOLVERS.get(scheme)
    if resolver is not None:
        ident = rest.lstrip("/").strip()
        return resolver + quote(ident, safe="/:;()._-") if ident else None
    return None


# Characters kept as they are in an http(s) link (everything a URL may hold); spaces and
# the rest are percent-encoded.
_URL_SAFE = "/?#[]@!$&'()*+,;=:%~._-"
