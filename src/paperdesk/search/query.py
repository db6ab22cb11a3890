"""Our query language, parsed into a small tree that the keyword index translates.

We parse ourselves (instead of handing strings to tantivy's parser) so that every error
is a `QueryError` that names what is wrong and where, and so the syntax stays ours if the
engine changes. Grammar (operators are upper case; lower-case `and`/`or` are words):

    query   := or ( EOF )
    or      := and ( "OR" and )*
    and     := unary ( ["AND"] unary )*
    unary   := ("NOT" | "-") unary | "+" unary | primary
    primary := "(" or ")" | FIELD ":" value | PHRASE | WORD | WORD"*"
    value   := PHRASE | WORD | WORD"*" | "(" or ")" | YEAR | YEAR".."YEAR | ".."YEAR | YEAR".."

Meaning: juxtaposed free words are ranked alternatives (at least one must match, documents
with more matches rank higher, like Lucene); `AND`/`+` makes a clause required, `NOT`/`-`
excludes it. Field clauses (`author:`, `year:`, `cat:` …) are required filters, because a
user who types a field means it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from paperdesk.errors import QueryError

MAX_QUERY_CHARS = 2_000
MAX_CLAUSES = 256
MAX_DEPTH = 32

TEXT_FIELDS = {"title": "title", "abstract": "abstract", "author": "authors", "authors": "authors"}
FIELDS = sorted({*TEXT_FIELDS, "subject", "cat", "year", "source"})


@dataclass(frozen=True)
class Term:
    """A word (`prefix=True` for `word*`); field None = title, abstract and authors."""

    field: str | None
    text: str
    prefix: bool = False


@dataclass(frozen=True)
class Phrase:
    field: str | None
    text: str


@dataclass(frozen=True)
class YearRange:
    lo: int | None
    hi: int | None


@dataclass(frozen=True)
class Subject:
    """`cs.CV` (exact, case-insensitive), `cs.*` (archive) or `cs.C*` (code prefix)."""

    code: str
    prefix: bool = False


@dataclass(frozen=True)
class Source:
    name: str


@dataclass
class Bool:
    must: list[Node] = field(default_factory=list)
    should: list[Node] = field(default_factory=list)
    must_not: list[Node] = field(default_factory=list)


Node = Term | Phrase | YearRange | Subject | Source | Bool

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<lparen>\()
  | (?P<rparen>\))
  | (?P<phrase>"(?:[^"\\]|\\.)*")
  | (?P<badquote>")
  | (?P<field>[A-Za-z_]+):
  | (?P<word>[^\s()"]+)
    """,
    re.VERBOSE,
)


@dataclass
class _Tok:
    kind: str
    text: str
    pos: int


def _lex(q: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(q):
        m = _TOKEN.match(q, pos)
        if m is None:  # pragma: no cover - the word class matches anything left
            raise QueryError(f"unexpected character {q[pos]!r} at position {pos + 1}")
        kind = m.lastgroup or "ws"
        text = m.group(0)
        if kind == "badquote":
            raise QueryError(f'unterminated quote starting at position {pos + 1}: add a closing "')
        if kind == "word" and text in ("AND", "OR", "NOT"):
            kind = text
        elif kind == "word" and text in ("-", "+"):
            raise QueryError(f"'{text}' at position {pos + 1} must be followed by a term")
        elif kind == "word" and text[0] in "-+" and pos + 1 < len(q):
            toks.append(_Tok("MINUS" if text[0] == "-" else "PLUS", text[0], pos))
            kind, text, pos = "word", text[1:], pos + 1
            m2 = _TOKEN.match(q, pos)
            if m2 is not None and m2.lastgroup == "field":
                kind, text = "field", m2.group(0)
                pos = m2.end()
                toks.append(_Tok(kind, text[:-1].lower(), pos - len(text)))
                continue
            toks.append(_Tok(kind, text, pos))
            pos = m.end()
            continue
        if kind == "field" and text[:-1].lower() not in FIELDS:
            after = q[m.end() : m.end() + 1]
            if not after or after.isspace():
                kind, text = "word", text[:-1]  # "DehazeMamba: SAR-guided …" is prose
        if kind != "ws":
            toks.append(_Tok(kind, text[:-1].lower() if kind == "field" else text, pos))
        pos = m.end()
    return toks


_YEAR = re.compile(r"(\d{4})?(\.\.)?(\d{4})?")
_SUBJECT = re.compile(r"[A-Za-z][A-Za-z0-9.\-_]*\*?|[A-Za-z0-9.\-_ ]+")


class _Parser:
    def __init__(self, q: str):
        self.q = q
        self.toks = _lex(q)
        self.i = 0
        self.clauses = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def where(self, t: _Tok | None) -> str:
        return "at the end of the query" if t is None else f"at position {t.pos + 1}"

    def count(self) -> None:
        self.clauses += 1
        if self.clauses > MAX_CLAUSES:
            raise QueryError(f"query has more than {MAX_CLAUSES} clauses")

    def parse(self) -> Node:
        node = self.or_(0)
        t = self.peek()
        if t is not None:
            if t.kind == "rparen":
                raise QueryError(f"unmatched ')' at position {t.pos + 1}")
            raise QueryError(f"unexpected {t.text!r} {self.where(t)}")  # pragma: no cover
        return node

    def or_(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise QueryError(f"query nests parentheses deeper than {MAX_DEPTH} levels")
        t = self.peek()
        if t is not None and t.kind == "OR":
            raise QueryError(f"OR {self.where(t)} needs a term on its left")
        parts = [self.and_(depth)]
        while (t := self.peek()) is not None and t.kind == "OR":
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind in ("OR", "AND", "rparen"):
                raise QueryError(f"OR at position {t.pos + 1} needs a term on its right")
            parts.append(self.and_(depth))
        if len(parts) == 1:
            return parts[0]
        return Bool(should=parts)

    def and_(self, depth: int) -> Node:
        items: list[tuple[str, Node]] = []  # occur: must / should / not
        force_next = False
        while (t := self.peek()) is not None and t.kind not in ("OR", "rparen"):
            if t.kind == "AND":
                self.take()
                nxt = self.peek()
                if not items:
                    raise QueryError(f"AND at position {t.pos + 1} needs a term on its left")
                if nxt is None or nxt.kind in ("OR", "AND", "rparen"):
                    raise QueryError(f"AND at position {t.pos + 1} needs a term on its right")
                occ, node = items[-1]
                if occ == "should":
                    items[-1] = ("must", node)
                force_next = True
                continue
            occ, node = self.unary(depth)
            if force_next and occ == "should":
                occ = "must"
            force_next = False
            items.append((occ, node))
        if not items:
            raise QueryError(f"expected a search term {self.where(self.peek())}")
        if len(items) == 1 and items[0][0] != "not":
            return items[0][1]
        b = Bool()
        for occ, node in items:
            {"must": b.must, "should": b.should, "not": b.must_not}[occ].append(node)
        if b.should and b.must:
            # Free words next to required clauses still must match at least one of them.
            b.must.append(b.should[0] if len(b.should) == 1 else Bool(should=b.should))
            b.should = []
        return b

    def unary(self, depth: int) -> tuple[str, Node]:
        t = self.peek()
        assert t is not None
        if t.kind in ("NOT", "MINUS"):
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind in ("OR", "AND", "rparen", "NOT", "MINUS", "PLUS"):
                raise QueryError(f"{t.text} at position {t.pos + 1} must be followed by a term")
            return "not", self.primary(depth)
        if t.kind == "PLUS":
            self.take()
            return "must", self.primary(depth)
        node = self.primary(depth)
        filt = not isinstance(node, Term | Phrase | Bool) or getattr(node, "field", None) is not None
        return ("must" if filt else "should"), node

    def primary(self, depth: int) -> Node:
        t = self.take()
        if t.kind == "lparen":
            return self.group(t, depth)
        if t.kind == "rparen":
            raise QueryError(f"unmatched ')' at position {t.pos + 1}")
        if t.kind == "phrase":
            self.count()
            return Phrase(None, _unquote(t.text, t.pos))
        if t.kind == "word":
            self.count()
            return _word(None, t.text, t.pos)
        if t.kind == "field":
            return self.fielded(t, depth)
        raise QueryError(f"{t.text} at position {t.pos + 1} must be followed by a term")

    def group(self, t: _Tok, depth: int) -> Node:
        nxt = self.peek()
        if nxt is not None and nxt.kind == "rparen":
            raise QueryError(f"empty parentheses at position {t.pos + 1}")
        node = self.or_(depth + 1)
        close = self.peek()
        if close is None or close.kind != "rparen":
            raise QueryError(f"unclosed '(' at position {t.pos + 1}: add a ')'")
        self.take()
        return node

    def fielded(self, t: _Tok, depth: int) -> Node:
        name = t.text
        if name not in FIELDS:
            raise QueryError(
                f"unknown field '{name}:' at position {t.pos + 1}; known fields: "
                + ", ".join(f + ":" for f in FIELDS)
                + ' (put text with a colon in "quotes")'
            )
        v = self.peek()
        if v is None or v.kind not in ("word", "phrase", "lparen") or self.q[t.pos + len(name) + 1 : v.pos].strip() != "" or v.pos != t.pos + len(name) + 1:
            raise QueryError(f"field '{name}:' at position {t.pos + 1} has no value")
        self.take()
        self.count()
        if name in TEXT_FIELDS:
            f = TEXT_FIELDS[name]
            if v.kind == "lparen":
                return _with_field(self.group(v, depth), f)
            if v.kind == "phrase":
                return Phrase(f, _unquote(v.text, v.pos))
            return _word(f, v.text, v.pos)
        if v.kind == "lparen":
            raise QueryError(f"field '{name}:' at position {t.pos + 1} takes one value, not a group")
        raw = _unquote(v.text, v.pos) if v.kind == "phrase" else v.text
        if name == "year":
            return _year(raw, v.pos)
        if name == "source":
            if not re.fullmatch(r"[A-Za-z0-9_.\-]+", raw):
                raise QueryError(f"source:{raw} at position {v.pos + 1} is not a source name")
            return Source(raw.lower())
        return _subject(raw, v.pos)


def _unquote(text: str, pos: int) -> str:
    inner = re.sub(r"\\(.)", r"\1", text[1:-1]).strip()
    if not inner:
        raise QueryError(f"empty phrase \"\" at position {pos + 1}")
    return inner


def _word(fieldname: str | None, text: str, pos: int) -> Term:
    prefix = text.endswith("*")
    core = text.rstrip("*") if prefix else text
    if "*" in core or "?" in core and prefix:
        raise QueryError(
            f"'{text}' at position {pos + 1}: '*' is only allowed at the end of a word (prefix search)"
        )
    if prefix and len(core) < 2:
        raise QueryError(f"'{text}' at position {pos + 1}: a prefix needs at least 2 characters")
    return Term(fieldname, core, prefix)


def _with_field(node: Node, f: str) -> Node:
    """`title:(a OR "b c")` → the field applies to every word inside the group."""
    if isinstance(node, Term):
        return Term(f, node.text, node.prefix) if node.field is None else node
    if isinstance(node, Phrase):
        return Phrase(f, node.text) if node.field is None else node
    if isinstance(node, Bool):
        return Bool(
            [_with_field(n, f) for n in node.must],
            [_with_field(n, f) for n in node.should],
            [_with_field(n, f) for n in node.must_not],
        )
    return node


def _year(raw: str, pos: int) -> YearRange:
    m = _YEAR.fullmatch(raw)
    if not m or not (m.group(1) or m.group(3)) or (m.group(3) and not m.group(2)):
        raise QueryError(
            f"year:{raw} at position {pos + 1} is not a year or range "
            "(use year:2021, year:2020..2024, year:2020.. or year:..2024)"
        )
    lo = int(m.group(1)) if m.group(1) else None
    hi = int(m.group(3)) if m.group(3) else (lo if not m.group(2) else None)
    if lo is not None and hi is not None and lo > hi:
        raise QueryError(f"year:{raw} at position {pos + 1}: the range ends before it starts")
    return YearRange(lo, hi)


def _subject(raw: str, pos: int) -> Subject:
    if not _SUBJECT.fullmatch(raw) or raw.count("*") > 1:
        raise QueryError(
            f"cat:{raw} at position {pos + 1} is not a subject code (e.g. cat:cs.CV, cat:cs.*)"
        )
    if raw.endswith("*"):
        core = raw[:-1].lower()
        if not core:
            raise QueryError(f"cat:{raw} at position {pos + 1}: give at least the archive, e.g. cat:cs.*")
        return Subject(core, True)
    return Subject(raw.lower())


def parse_query(q: str) -> Node:
    """Parse a user query; raises QueryError with a message meant for the user."""
    if len(q) > MAX_QUERY_CHARS:
        raise QueryError(f"query is {len(q)} characters long (limit {MAX_QUERY_CHARS})")
    if "\x00" in q:
        raise QueryError("query contains a NUL character")
    if not q.strip():
        raise QueryError("empty query")
    return _Parser(q).parse()


_FREE_WORD = re.compile(r"\w+", re.UNICODE)


def free_text_query(text: str, max_words: int = 64) -> Node:
    """A ranked OR of the words of arbitrary text (a claim, a pasted abstract), with no
    query syntax: quotes, colons and operators in the text are just words."""
    words = [w.lower() for w in _FREE_WORD.findall(text)][:max_words]
    if not words:
        raise QueryError("the text has no words to search for")
    return Bool(should=[Term(None, w) for w in words])
