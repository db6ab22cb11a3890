"""The query language: every operator parses to the intended tree, every malformed query
gets a QueryError that says what is wrong (never another exception)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paperdesk.errors import QueryError
from paperdesk.search.keyword import KeywordIndex
from paperdesk.search.query import (
    Bool,
    Phrase,
    Source,
    Subject,
    Term,
    YearRange,
    free_text_query,
    parse_query,
)

T = Term


@pytest.mark.parametrize(
    ("q", "tree"),
    [
        ("graph", T(None, "graph")),
        ("graph neural", Bool(should=[T(None, "graph"), T(None, "neural")])),
        ('"graph neural"', Phrase(None, "graph neural")),
        ("graph AND neural", Bool(must=[T(None, "graph"), T(None, "neural")])),
        ("graph OR neural", Bool(should=[T(None, "graph"), T(None, "neural")])),
        ("graph NOT neural", Bool(should=[T(None, "graph")], must_not=[T(None, "neural")])),
        ("graph -neural", Bool(should=[T(None, "graph")], must_not=[T(None, "neural")])),
        ("+graph neural", Bool(must=[T(None, "graph"), T(None, "neural")])),
        ("graph and neural", Bool(should=[T(None, "graph"), T(None, "and"), T(None, "neural")])),
        ("transform*", T(None, "transform", prefix=True)),
        ("(a OR b) AND c", Bool(must=[Bool(should=[T(None, "a"), T(None, "b")]), T(None, "c")])),
        ("author:hinton", T("authors", "hinton")),
        ('author:"Geoffrey Hinton"', Phrase("authors", "Geoffrey Hinton")),
        ("title:(graph OR tree*)", Bool(should=[T("title", "graph"), T("title", "tree", True)])),
        ("abstract:lensing", T("abstract", "lensing")),
        ("cat:cs.CV", Subject("cs.cv")),
        ("subject:cs.CV", Subject("cs.cv")),
        ("cat:cs.*", Subject("cs.", prefix=True)),
        ("cat:hep-th", Subject("hep-th")),
        ("year:2021", YearRange(2021, 2021)),
        ("year:2020..2024", YearRange(2020, 2024)),
        ("year:2020..", YearRange(2020, None)),
        ("year:..2024", YearRange(None, 2024)),
        ("source:arXiv", Source("arxiv")),
        # Field clauses are filters; free words next to them must still match one of them.
        (
            "cat:cs.CL retrieval augmented",
            Bool(must=[Subject("cs.cl"), Bool(should=[T(None, "retrieval"), T(None, "augmented")])]),
        ),
        ("NOT cat:cs.CV", Bool(must_not=[Subject("cs.cv")])),
        # A pasted title's "Name: subtitle" is prose, not an unknown field.
        ("DehazeMamba: dehazing", Bool(should=[T(None, "DehazeMamba"), T(None, "dehazing")])),
    ],
)
def test_parses(q: str, tree: object) -> None:
    assert parse_query(q) == tree


@pytest.mark.parametrize(
    ("q", "message"),
    [
        ("", "empty query"),
        ("   ", "empty query"),
        ("(graph", "unclosed '(' at position 1"),
        ("graph)", "unmatched ')' at position 6"),
        ('"graph neural', "unterminated quote starting at position 1"),
        ('""', "empty phrase"),
        ("()", "empty parentheses"),
        ("graph AND", "AND at position 7 needs a term on its right"),
        ("AND graph", "AND at position 1 needs a term on its left"),
        ("OR graph", "OR at position 1 needs a term on its left"),
        ("graph OR", "OR at position 7 needs a term on its right"),
        ("graph OR OR x", "needs a term on its right"),
        ("NOT", "must be followed by a term"),
        ("graph -", "must be followed by a term"),
        ("foo:bar", "unknown field 'foo:'"),
        ("author:", "field 'author:' at position 1 has no value"),
        ("author: hinton", "has no value"),
        ("year:20x", "is not a year or range"),
        ("year:2024..2020", "the range ends before it starts"),
        ("year:(2020)", "takes one value"),
        ("cat:*", "is not a subject code"),
        ("source:a/b", "is not a source name"),
        ("gr*ph", "'*' is only allowed at the end of a word"),
        ("g*", "a prefix needs at least 2 characters"),
        ("x" * 2001, "limit 2000"),
        ("a\x00b", "NUL"),
        ("(" * 40 + "a" + ")" * 40, "deeper than 32"),
        (" ".join(f"w{i}" for i in range(300)), "more than 256 clauses"),
    ],
)
def test_errors_say_what_is_wrong(q: str, message: str) -> None:
    with pytest.raises(QueryError, match=None) as exc:
        parse_query(q)
    assert message in str(exc.value)


def test_free_text_has_no_syntax() -> None:
    tree = free_text_query('Title: "AND" (OR) -x NOT*')
    assert isinstance(tree, Bool)
    assert [t.text for t in tree.should if isinstance(t, Term)] == ["title", "and", "or", "x", "not"]
    with pytest.raises(QueryError):
        free_text_query("!!! ???")


@pytest.fixture(scope="module")
def kw(tmp_path_factory: pytest.TempPathFactory) -> KeywordIndex:
    return KeywordIndex(Path(tmp_path_factory.mktemp("kw")) / "kw", create=True)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab ()"*:-+ANDORT\\$.y09\u00e9\u4e2d')), max_size=40))
def test_hostile_queries_only_raise_query_error(kw: KeywordIndex, q: str) -> None:
    """Anything a user can type either runs or raises QueryError (never a crash)."""
    try:
        tq = kw.translate(parse_query(q))
    except QueryError:
        return
    kw.search(tq, 5)
