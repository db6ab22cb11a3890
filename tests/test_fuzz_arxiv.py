"""Fuzz the arXiv parsers with mutated real inputs: whatever the bytes, a parser yields
SourceRecords and ParseErrors or raises ParseError — never another exception, never a hang.

Seeds are real captures (OAI-PMH ListRecords, an arXivRaw page built from real `.abs`
content, API Atom, `.abs` files incl. the Latin-1 one, a listing, daily-feed lines, and
snapshot lines made from real `.abs` files). Mutations are byte-level (flip, delete,
insert, truncate, duplicate) plus splices of format-aware hostile snippets: XML entity
bombs and external entities, unbalanced tags, `\\\\` separators and absurd version lines
for `.abs`, hostile JSON values for the JSON-lines formats. Every parsed record also goes
through `normalize.finish`, which may only refuse it with ParseError.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzzing
from conftest import feed_head, shared_file
from paperdesk.errors import ParseError
from paperdesk.model import SourceRecord
from paperdesk.sources import arxiv_abs, arxiv_atom, arxiv_feed, arxiv_oai, arxiv_snapshot
from paperdesk.sources._arxiv_common import split_arxiv_authors
from test_sources_arxiv import (
    DELETED,
    LISTRECORDS,
    abs_path,
    arxiv_raw_record,
    atom_body,
    envelope,
    oai_body,
    snapshot_sample,
)

SETTINGS = settings(
    max_examples=int(os.environ.get("PAPERDESK_FUZZ_EXAMPLES", "60")),
    deadline=3000,  # a hang or a quadratic blow-up shows as a deadline failure
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("PAPERDESK_FUZZ_EXAMPLES") is None,  # CI: same examples each run
)

XML_SNIPPETS = [
    b'<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    b"&x;",
    b"&b;",
    b"<![CDATA[ ]]>",
    b"</record>",
    b"<record>",
    b"</entry><entry>",
    b'<version version="v99999999999999999999"><date>x</date></version>',
    b"<id>hep-th/9709111v3</id>",
    b"<id></id>",
    b"\xff\xfe",
    b"<a>" * 300,
]
TEXT_SNIPPETS = [
    b"\n\\\\\n",
    b"\\\\ ( https://arxiv.org/abs/x , 1kb)\n",
    b"\n" + b"-" * 78 + b"\n",
    b"\nDate (revised v99999999999999999999): Mon, 2 Apr 2007 19:18:42 GMT (1kb)\n",
    b"\nDate (v1): (((((((((((\n",
    b"\nAuthors: (1) ((1) X, (2) Y), and and , et al.\n",
    b"\narXiv:\n",
    b"\xe9\xff",
    b"\r\n",
]
JSON_SNIPPETS = [
    b"null",
    b"[]",
    b"{}",
    b"[[[[[[[[]]]]]]]]",
    b'"\\ud800"',
    b"1e999",
    b"18446744073709551616",
    b'[{"version": null}]',
    b'[["a"], ["b", 1, null]]',
    b'"Mon, 99 Foo 2007 99:99:99 GMT"',
    b'"' + b"x" * 5000 + b'"',
]


def mutated(seeds: list[bytes], snippets: list[bytes]) -> st.SearchStrategy[bytes]:
    """Byte-level mutations of `seeds`, with `snippets` spliced in (JSON ones in place of
    a value)."""
    return fuzzing.mutated(seeds, snippets, json_values=snippets is JSON_SNIPPETS)


def _oai_seeds() -> list[bytes]:
    raw_page = envelope(
        "<ListRecords>\n"
        + arxiv_raw_record(abs_path("hep-th/papers/9709/9709111.abs"))
        + DELETED
        + '<resumptionToken cursor="0" completeListSize="3">6960524|1001</resumptionToken>\n'
        + "</ListRecords>"
    )
    return [oai_body(LISTRECORDS), raw_page]


def _atom_seeds() -> list[bytes]:
    return [
        shared_file("arxiv/api-atom/raw-xml/id_list=1111.2011v2.xml").read_bytes(),
        atom_body("id_astro-ph_0601001_s0_m100_3150dca9dc76.json"),
        atom_body("id_abc_s0_m100_b79c8dcf6bc3.json"),
    ]


def _abs_seeds() -> list[bytes]:
    listing = shared_file("arxiv/listings/math/listings/new.AG").read_bytes()
    return [
        abs_path("hep-th/papers/9709/9709111.abs").read_bytes(),
        abs_path("arxiv/papers/1607/1607.08199.abs").read_bytes(),
        abs_path("arxiv/papers/0704/0704.0307.abs").read_bytes(),
        listing,
    ]


def _snapshot_seeds() -> list[bytes]:
    return [b"\n".join(snapshot_sample().split(b"\n")[:3])]


PARSERS: dict[str, tuple[object, Callable[[], list[bytes]], list[bytes]]] = {
    "arxiv-oai": (arxiv_oai, _oai_seeds, XML_SNIPPETS),
    "arxiv-atom": (arxiv_atom, _atom_seeds, XML_SNIPPETS),
    "arxiv-abs": (arxiv_abs, _abs_seeds, TEXT_SNIPPETS),
    "arxiv-snapshot": (arxiv_snapshot, _snapshot_seeds, JSON_SNIPPETS),
    "arxiv-feed": (arxiv_feed, lambda: [feed_head(3)], JSON_SNIPPETS),
}


def _check(parser: Any, data: bytes, origin: str) -> None:
    def arxiv_record(item: SourceRecord) -> None:
        assert item.source == "arxiv" and item.source_id == item.arxiv_id
        assert item.raw_format == parser.NAME and isinstance(item.raw, bytes)
        assert all(isinstance(v.version, str) for v in item.versions)

    refused = fuzzing.check_parse(parser, data, origin, arxiv_record)
    assert refused is None or refused.origin == origin


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_fuzz_parser_only_raises_parse_errors(name: str) -> None:
    parser, make_seeds, snippets = PARSERS[name]
    seeds = make_seeds()
    for seed in seeds:  # the unmutated seeds parse (the API's bad-id page to its error)
        out = list(parser.parse(io.BytesIO(seed), name))  # type: ignore[attr-defined]
        assert out and all(isinstance(o, SourceRecord) for o in out) or b"errors#" in seed

    @SETTINGS
    @given(mutated(seeds, snippets))
    def run(data: bytes) -> None:
        _check(parser, data, name)

    run()


@pytest.mark.parametrize("module", [arxiv_oai, arxiv_atom])
def test_fuzz_page_info_only_raises_parse_errors(module: object) -> None:
    seeds = _oai_seeds() if module is arxiv_oai else _atom_seeds()

    @SETTINGS
    @given(mutated(seeds, XML_SNIPPETS))
    def run(data: bytes) -> None:
        try:
            page = module.page_info(data)  # type: ignore[attr-defined]
        except ParseError:
            return
        assert all(isinstance(r, SourceRecord | ParseError) for r in page.records)

    run()


@SETTINGS
@given(
    st.text(alphabet=st.sampled_from(list("ab (),;:&{}\\1.-\n")) | st.characters(), max_size=300)
)
def test_fuzz_author_splitter(line: str) -> None:
    for a in split_arxiv_authors(line):
        assert a.name and a.name == a.name.strip() and "\n" not in a.name
        assert all(isinstance(x, str) and x for x in a.affiliations)


def test_xml_entities_are_never_expanded() -> None:
    """Billion laughs and external entities (XXE) in a response: refused or left alone,
    never expanded, never read from disk."""
    body = oai_body(LISTRECORDS)
    decl = b'<?xml version="1.0" encoding="UTF-8"?>\n'
    bomb = (
        b'<!DOCTYPE OAI-PMH [<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">'
        + b"".join(
            b'<!ENTITY %s "%s">' % (bytes([98 + k]), (b"&%s;" % bytes([97 + k])) * 10)
            for k in range(8)
        )
        + b'<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    )
    hostile = (
        decl + bomb + body[len(decl) :].replace(b"<title>Double", b"<title>&i;&x;Double", 1)
    )
    start = time.monotonic()
    try:
        out = list(arxiv_oai.parse(io.BytesIO(hostile), "bomb.xml"))
    except ParseError:
        out = []
    assert time.monotonic() - start < 5
    for r in out:
        if isinstance(r, SourceRecord):
            assert r.title is None or ("root:" not in r.title and len(r.title) < 1000)
