"""Fuzz the non-arXiv parsers with mutated real inputs: whatever the bytes, a parser yields
SourceRecords and ParseErrors or raises ParseError — never another exception, never a hang.

Seeds are small slices of the real captures (when the shared data is present) plus the
hand-written test files; hypothesis flips, deletes, duplicates and splices bytes in them,
truncates them, and swaps JSON values for hostile ones. Each parsed record also goes
through `normalize.finish`, which may only refuse it with ParseError.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzzing
from cassettes import bodies
from conftest import DATA, SHARED, committed_file
from paperdesk.model import SourceRecord
from paperdesk.sources import (
    bibtex,
    crossref,
    generic,
    openalex,
    openreview,
    papercopilot,
    semanticscholar,
)

EXAMPLES = 25
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=3000,  # a hang or a quadratic blow-up shows as a deadline failure
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,  # same examples every run: CI stays reproducible
)


def _shared(rel: str) -> Path | None:
    """Real data at `rel`: the committed copy, else the shared data's, else None."""
    p = committed_file(rel) or SHARED / rel
    return p if p.exists() else None


def _first_lines(rel: str, n: int) -> list[bytes]:
    p = _shared(rel)
    if p is None:
        return []
    with p.open("rb") as fh:
        return [b"".join(fh.readline() for _ in range(n))]


def _openreview_seeds() -> list[bytes]:
    seeds = [(DATA / "openreview" / "api-v2-notes.json").read_bytes()]
    p = _shared("openreview/api-v1-notes.json")
    if p is not None:
        sub = json.loads(p.read_bytes())[0]["submissions"][0]
        small = {k: v for k, v in sub.items() if k != "revisions"}
        small["notes"] = sub["notes"][:2]
        seeds.append(
            json.dumps([{"venue": "NIPS.cc", "year": 2018, "submissions": [small]}]).encode()
        )
    return seeds


def _crossref_seeds() -> list[bytes]:
    seeds = [
        b'{"DOI":"10.1234/x","issued":{"date-parts":[[2020,1]]},"abstract":"<jats:p>a &amp; b</jats:p>"}'
    ]
    p = _shared("crossref/test-works/test_works_with_one_id.yaml")
    if p is not None:
        seeds += list(bodies(p))
    p = _shared("crossref/test-cursor/test_cursor.yaml")
    if p is not None:
        page = json.loads(next(bodies(p)))
        page["message"]["items"] = page["message"]["items"][:2]
        seeds.append(json.dumps(page).encode())
    return seeds


def _s2_seeds() -> list[bytes]:
    seeds = [
        b'{"paperId":"2d5673caa9e6af3a7b82a43f19ee920992db07ad","externalIds":{"ArXiv":"2401.1"}}'
    ]
    p = _shared("semanticscholar/Paper.json")
    if p is not None:
        paper = json.loads(p.read_bytes())
        paper.pop("embedding", None)
        paper["citations"] = paper["citations"][:2]
        paper["references"] = paper["references"][:1]
        seeds.append(json.dumps(paper).encode())
    p = _shared("semanticscholar/test_get_paper_references.yaml")
    if p is not None:
        page = json.loads(next(bodies(p, ok_only=False)))
        page["data"] = page["data"][:3]
        seeds.append(json.dumps(page).encode())
    return seeds


def _generic_seeds() -> list[bytes]:
    seeds = [
        (DATA / "generic" / "mylist.jsonl").read_bytes(),
        (DATA / "generic" / "notes.csv").read_bytes(),
        (DATA / "malformed" / "latin1.csv").read_bytes(),
    ]
    seeds += _first_lines("dblp-acm/ACM.csv", 6)
    return seeds


PARSERS: dict[str, tuple[object, Callable[[], list[bytes]], str]] = {
    "openreview": (openreview, _openreview_seeds, "notes.json"),
    "papercopilot": (
        papercopilot,
        lambda: (
            _first_lines("openreview/papers.jsonl", 3)
            or [b'{"paper_id":"v:a","openreview_id":"a","title":"t","authors":["A B"]}\n']
        ),
        "papers.jsonl",
    ),
    "crossref": (crossref, _crossref_seeds, "works.json"),
    "openalex": (
        openalex,
        lambda: [(DATA / "openalex" / "works-page.json").read_bytes()],
        "w.json",
    ),
    "semanticscholar": (semanticscholar, _s2_seeds, "s2.json"),
    "bibtex": (
        bibtex,
        lambda: [
            (DATA / "bibtex" / "accents.bib").read_bytes(),
            (DATA / "malformed" / "broken.bib").read_bytes(),
        ],
        "refs.bib",
    ),
    "generic": (generic, _generic_seeds, "My List.csv"),
}

HOSTILE_JSON = [
    b"null", b"[]", b"{}", b"[[[[[[[[[[]]]]]]]]]]", b'"\\ud800"', b"1e999", b"-0",
    b"18446744073709551616", b'{"value": {"value": 1}}', b'["a", {"b": null}]', b"true",
    b'"' + b"x" * 5000 + b'"',
]  # fmt: skip


def mutated(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """Byte-level mutations of `seeds`, and JSON-ish values replaced by hostile ones."""
    return fuzzing.mutated(seeds, HOSTILE_JSON, json_values=True, insert_snippets=False)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:  # type: ignore[type-arg]
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def json_mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A seed's JSON with values at random paths replaced by arbitrary JSON values (the
    type confusion byte flips rarely reach: a title that is a list, authors that are a
    dict, an id that is a number …). JSON-lines seeds are mutated line by line."""
    seed = draw(st.sampled_from(seeds))
    try:
        docs = [json.loads(seed)]
        lines = False
    except ValueError:
        try:
            docs = [json.loads(x) for x in seed.splitlines() if x.strip()]
        except ValueError:
            return seed
        lines = True
    for _ in range(draw(st.integers(1, 5))):
        d = draw(st.integers(0, len(docs) - 1))
        paths = _paths(docs[d])
        path = draw(st.sampled_from(paths[1:] or paths))
        new = draw(JSON_VALUES)
        if not path:
            docs[d] = new
            continue
        target = docs[d]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = new
    if lines:
        return b"\n".join(json.dumps(x).encode() for x in docs)
    return json.dumps(docs[0]).encode()


def _check(parser: Any, data: bytes, origin: str) -> None:
    def any_record(item: SourceRecord) -> None:
        assert item.source and item.source_id and item.raw_format == parser.NAME
        assert isinstance(item.raw, bytes)

    fuzzing.check_parse(parser, data, origin, any_record)


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_fuzz_parser_only_raises_parse_errors(name: str) -> None:
    parser, make_seeds, origin = PARSERS[name]
    seeds = make_seeds()
    for seed in seeds:  # the unmutated seeds parse cleanly
        out = list(parser.parse(io.BytesIO(seed), origin))  # type: ignore[attr-defined]
        assert any(isinstance(o, SourceRecord) for o in out), name

    @SETTINGS
    @given(mutated(seeds))
    def run(data: bytes) -> None:
        _check(parser, data, origin)

    run()


@pytest.mark.parametrize("name", sorted(set(PARSERS) - {"bibtex"}))
def test_fuzz_json_values_of_the_wrong_type(name: str) -> None:
    parser, make_seeds, origin = PARSERS[name]
    seeds = [s for s in make_seeds() if s.lstrip()[:1] in (b"{", b"[")]

    @SETTINGS
    @given(json_mutated(seeds))
    def run(data: bytes) -> None:
        _check(parser, data, origin)

    run()


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_fuzz_parser_on_arbitrary_bytes(name: str) -> None:
    parser, _, origin = PARSERS[name]

    @settings(max_examples=15, deadline=3000, derandomize=True)
    @given(st.binary(max_size=400))
    def run(data: bytes) -> None:
        _check(parser, data, origin)

    run()


WRONG_TYPES: list[object] = [None, 7, True, "", ["x", 1], {}, {"value": [None]}]


@pytest.mark.parametrize("name", sorted(set(PARSERS) - {"bibtex"}))
def test_every_field_replaced_by_every_wrong_type(name: str) -> None:
    """Exhaustive where hypothesis samples: each path of each JSON seed (lists cut to two
    items, up to 100 paths spread evenly) gets each value of `WRONG_TYPES` in turn."""
    parser, make_seeds, origin = PARSERS[name]
    for seed in make_seeds():
        lines = [x for x in seed.splitlines() if x.strip()]
        try:
            docs = [json.loads(seed)]
        except ValueError:
            try:
                docs = [json.loads(x) for x in lines]
            except ValueError:
                continue  # a CSV seed
        docs = [_shrink(doc) for doc in docs]
        frozen = orjson.dumps(docs)
        for d, doc in enumerate(docs):
            paths = _paths(doc)[1:]
            step = max(1, len(paths) // 100)
            for path in paths[::step]:
                for wrong in WRONG_TYPES:
                    mutated_docs = orjson.loads(frozen)
                    target = mutated_docs[d]
                    for key in path[:-1]:
                        target = target[key]
                    target[path[-1]] = wrong
                    data = b"\n".join(orjson.dumps(x) for x in mutated_docs)
                    _check(parser, data, origin)


def _shrink(value: object) -> object:
    """The same JSON with every list cut to its first two items (fewer, cheaper paths)."""
    if isinstance(value, dict):
        return {k: _shrink(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrink(v) for v in value[:2]]
    return value
