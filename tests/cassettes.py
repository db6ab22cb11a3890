"""Read vcrpy cassettes (the recorded Crossref / Semantic Scholar sessions) in tests.

vcrpy stores each response body either as text or, when the server gzipped it, as the
compressed bytes (YAML `!!binary`, i.e. base64 in the file); PyYAML decodes the base64, so
this only has to gunzip. Kept tiny on purpose: tests want the bodies exactly as the server
sent them, to feed the parsers the same bytes a live client would get.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Exchange:
    uri: str
    status: int
    content_type: str
    body: bytes


def exchanges(path: Path) -> Iterator[Exchange]:
    """Every recorded response in a cassette, body decompressed to the bytes a client sees."""
    with path.open("rb") as fh:
        doc = yaml.load(fh, Loader=_Loader)  # noqa: S506 - a safe loader, C speed when built
    for it in doc.get("interactions") or []:
        resp = it["response"]
        headers = {k.lower(): v for k, v in (resp.get("headers") or {}).items()}
        body = resp.get("body", resp.get("content", b""))
        if isinstance(body, dict):
            body = body.get("string", b"")
        data = body.encode("utf-8") if isinstance(body, str) else bytes(body or b"")
        encoding = " ".join(headers.get("content-encoding") or []).lower()
        if "gzip" in encoding or data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        ctype = " ".join(headers.get("content-type") or [])
        status = resp.get("status", {})
        code = status.get("code", 0) if isinstance(status, dict) else int(status)
        yield Exchange(it["request"]["uri"], int(code), ctype, data)


def bodies(path: Path, *, json_only: bool = True, ok_only: bool = True) -> Iterator[bytes]:
    """The response bodies of a cassette (by default only successful JSON ones)."""
    for ex in exchanges(path):
        if ok_only and ex.status != 200:
            continue
        if json_only and "json" not in ex.content_type.lower():
            continue
        yield ex.body
