"""What the parser fuzz tests share (tests/test_fuzz_arxiv.py, tests/test_fuzz_other.py):
the byte-level mutation of real seeds, and the check that a parser's output is only
SourceRecords and ParseErrors, each record one `normalize.finish` refuses with ParseError
at most."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from paperdesk import normalize
from paperdesk.errors import ParseError
from paperdesk.model import SourceRecord


@st.composite
def mutated(
    draw: st.DrawFn, seeds: list[bytes], snippets: list[bytes], *, json_values: bool = False,
    insert_snippets: bool = True,
) -> bytes:
    """A seed with 1-4 mutations: a byte flipped, a span deleted, random bytes inserted,
    the tail cut, a span duplicated (repeated keys, nested copies), or a hostile snippet
    spliced in. With `json_values` the snippet replaces the JSON-ish value after the next
    `:`; where there is none it is inserted, unless `insert_snippets` is off."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        op = draw(st.integers(0, 5))
        i = draw(st.integers(0, len(data) - 1))
        if op == 0:
            data[i] = draw(st.integers(0, 255))
        elif op == 1:
            del data[i : i + draw(st.integers(1, 64))]
        elif op == 2:
            data[i:i] = draw(st.binary(min_size=1, max_size=16))
        elif op == 3:
            del data[i:]
        elif op == 4:
            j = min(len(data), i + draw(st.integers(1, 200)))
            data[i:i] = data[i:j]
        else:
            j = data.find(b":", i) if json_values else -1
            if j == -1 and not insert_snippets:
                continue
            snippet = draw(st.sampled_from(snippets))
            if j == -1:
                data[i:i] = snippet
                continue
            end = min(
                [x for x in (data.find(b",", j), data.find(b"}", j)) if x != -1] or [len(data)]
            )
            data[j + 1 : end] = snippet
    return bytes(data)


def check_parse(
    parser: Any, data: bytes, origin: str, check_record: Callable[[SourceRecord], None]
) -> ParseError | None:
    """Parse `data` as `origin`: the parser may raise ParseError (returned, for the caller
    to look at) or yield SourceRecords and ParseErrors. Each error names `origin` and no
    record number or one from 1; each record passes `check_record` and then
    `normalize.finish`, which may refuse it with ParseError only."""
    try:
        out = list(parser.parse(io.BytesIO(data), origin))
    except ParseError as exc:
        return exc
    for item in out:
        assert isinstance(item, SourceRecord | ParseError), type(item)
        if isinstance(item, ParseError):
            assert item.origin == origin and (item.record_no is None or item.record_no >= 1)
            continue
        check_record(item)
        try:
            normalize.finish(item)
        except ParseError:
            pass
    return None
