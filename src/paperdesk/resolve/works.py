"""Works: which source records describe the same paper.

The pipeline has dedupe-style stages that pass one data shape along (`Doc`, a record
reduced to what matching needs):

1. identity keys (`identity_keys`): DOI → arXiv id without version → OpenReview id → other
   stable ids. Records sharing a key are one work, whatever their text says.
2. content matching for everything else: candidate pairs from MinHash/LSH blocking on
   title and abstract shingles (`paperdesk.resolve.blocking`), scored by
   `paperdesk.resolve.pairs.score`, kept above `MATCH_THRESHOLD`.
3. clustering under constraints (`paperdesk.resolve.cluster`): two records with different
   values of the same identifier type (two DOIs, two arXiv ids) never join, nor do records
   a curator split; curated merges always join.

`cluster_records` runs all three over a list of records (pure: no store); the store-backed
incremental run lives in `paperdesk.resolve.works_run` and reuses these same functions.
"""

from __future__ import annotations

import html
import re
import unicodedata
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from paperdesk.model import SourceRecord
from paperdesk.normalize.ids import arxiv_id as _arxiv_id
from paperdesk.normalize.ids import normalize_doi
from paperdesk.resolve.works_text import (
    first_page,
    front_matter_tail,
    is_generic,
    lead_key,
    lead_text,
    title_kinds,
    venue_words,
)

# The identifier types checked first, in this order; any other `ids` entry follows, sorted.
ID_ORDER = ("doi", "arxiv", "openreview")
# `ids` entries that are not paper identities (they name a person, a list or a file).
_NOT_IDENTITY = {"orcid", "email", "bibtex", "file", "list", "url"}
# arXiv mints DOIs of this form for every paper: they are the arXiv id, not a publisher DOI.
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$")

_DIGITS = re.compile(r"\d+")
_BRACKETED = re.compile(r"\([^()]{0,80}\)|\[[^\[\]]{0,80}\]")
_LABEL = re.compile(
    r"\s*(tutorial|panel|keynote(?: address| talk)?|invited talk|demo|demonstration)\s*:\s*",
    re.IGNORECASE,
)
_LABEL_INITIALS = frozenset(" TtPpKkIiDd")
_SUBTITLE = re.compile(r"\s*(?::|\?(?=\s+\S)|\s-{1,2}\s|\s—\s)\s*")
# Words that carry no identity: dropped from token sets (not from the title string).
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or our that the "
    "their this to we with which via using based towards toward these those".split()
)
ABSTRACT_WORDS = 400
"""Abstract words kept for matching: enough to tell papers apart, bounded against huge input."""


@dataclass
class Doc:
    """One record as the matcher sees it (the data shape between stages)."""

    key: str
    """The record key `SOURCE:ID`."""
    ids: list[tuple[str, str]]
    """Identity keys in `ID_ORDER` (type, normalised value)."""
    title: str = ""
    """Folded, punctuation-free title ('' when the record has none)."""
    title_head: str = ""
    """The folded title before its first ':' or ' - ' when it has a subtitle: BibTeX entries
    and citations often shorten 'Flash3D: Feed-Forward …' to 'Flash3D'."""
    title_tokens: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    """Sorted unique crc32 of title words (stopwords dropped)."""
    abstract_shingles: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    """Sorted unique hashes of abstract word bigrams (stopwords dropped first)."""
    surnames: frozenset[str] = frozenset()
    """Folded family names of the authors."""
    name_tokens: frozenset[str] = frozenset()
    """Every folded name word (2+ letters): a family name found here counts as shared, so
    'Rafael Camps' meets 'Rafael Camps Paré' whose family name the source split otherwise."""
    year: int | None = None
    source: str = ""
    title_marks: frozenset[str] = frozenset()
    """Numbers in the title, and '++': what tells 'BioASQ 2024' from 'BioASQ 2025',
    'EuroLLM-9B' from 'EuroLLM-22B' and 'Co-Seg++' from 'Co-Seg' (a sequel, not a copy)."""
    kinds: frozenset[str] = frozenset()
    """What the title says the record is besides a paper (`title_kinds`): 'erratum',
    'part:2', 'reply', 'comment', 'abstract-of'. Records of different kinds are different
    works (an erratum is not the paper it corrects), linked as related instead."""
    core: str = ""
    """With `kinds`: the folded title without its kind words ('erratum to', '(part II)'),
    which names the paper it refers to ('' without kinds)."""
    generic: bool = False
    """The title is front matter or a column ('Guest editorial', 'Book review column'):
    many different items carry it, so the title alone says nothing."""
    venue: str = ""
    """Folded venue words, abbreviations expanded, publishers and kind words dropped."""
    venue_kind: str = ""
    """'journal' or 'conference' when the venue names one ('' without a venue)."""
    pages: str = ""
    """The first page ('' when not given)."""
    lead: int = 0
    """A stable key of the abstract's opening two sentences (0 when too short): a copy
    whose opening is word for word the paper's, the rest reworded, still meets it."""
    sketch: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    """Bottom-k hashes of the abstract's content words: estimates how alike two whole
    abstracts are in vocabulary (rewording keeps words, not word pairs)."""
    note: str = ""
    """The title's bracketed notes, folded ('demo abstract'): dropped from `title`, but
    when one library lists a paper and its demo under one title they tell them apart."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Docs travel from worker processes by the batch: plain values and raw bytes
        # unpickle several times faster than a dataclass __dict__ holding numpy arrays.
        return (
            _doc_from,
            (
                self.key,
                self.ids,
                self.title,
                self.title_head,
                self.title_tokens.astype(np.uint32).tobytes(),
                self.abstract_shingles.astype(np.uint32).tobytes(),
                "\x1f".join(self.surnames),
                "\x1f".join(self.name_tokens),
                self.year,
                self.source,
                "\x1f".join(self.title_marks),
                "\x1f".join(self.kinds),
                self.core,
                self.generic,
                self.venue,
                self.venue_kind,
                self.pages,
                self.lead,
                self.sketch.astype(np.uint32).tobytes(),
                self.note,
            ),
        )


def _split(joined: str) -> frozenset[str]:
    return frozenset(joined.split("\x1f")) if joined else frozenset()


def _doc_from(
    key: str,
    ids: list[tuple[str, str]],
    title: str,
    title_head: str,
    tokens: bytes,
    shingles: bytes,
    surnames: str,
    name_tokens: str,
    year: int | None,
    source: str,
    marks: str,
    kinds: str = "",
    core: str = "",
    generic: bool = False,
    venue: str = "",
    venue_kind: str = "",
    pages: str = "",
    lead: int = 0,
    sketch: bytes = b"",
    note: str = "",
) -> Doc:
    return Doc(
        key,
        ids,
        title,
        title_head,
        np.frombuffer(tokens, dtype=np.uint32),
        np.frombuffer(shingles, dtype=np.uint32),
        _split(surnames),
        _split(name_tokens),
        year,
        source,
        _split(marks),
        _split(kinds),
        core,
        generic,
        venue,
        venue_kind,
        pages,
        lead,
        np.frombuffer(sketch, dtype=np.uint32),
        note,
    )


class AuthorView(Protocol):
    """What the matcher reads of an author (a `paperdesk.model.Author` or a lighter view)."""

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str | None: ...


class RecordView(Protocol):
    """What the matcher reads of a record: a `SourceRecord`, or a light view of a stored
    one (`paperdesk.resolve.works_match.RecordLite`: decoding full records cost more than
    featurising them)."""

    @property
    def key(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def source_id(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def title_text(self) -> str | None: ...
    @property
    def abstract(self) -> str | None: ...
    @property
    def abstract_text(self) -> str | None: ...
    @property
    def authors(self) -> Sequence[AuthorView]: ...
    @property
    def doi(self) -> str | None: ...
    @property
    def arxiv_id(self) -> str | None: ...
    @property
    def ids(self) -> dict[str, str]: ...
    @property
    def year(self) -> int | None: ...
    @property
    def venue(self) -> str | None: ...
    @property
    def journal_ref(self) -> str | None: ...
    @property
    def extra(self) -> dict[str, Any]: ...


def identity_keys(record: RecordView) -> list[tuple[str, str]]:
    """The record's stable paper identifiers, strongest first, normalised.

    The arXiv DOI (10.48550/arXiv.N) is folded into the arXiv key so a preprint cited by
    its DOI meets the same preprint cited by its id.
    """
    found: dict[str, str] = {}
    doi = normalize_doi(record.doi) if record.doi else None
    if record.source == "doi" and not doi:
        doi = normalize_doi(record.source_id)
    arx = _arxiv_id(record.arxiv_id) if record.arxiv_id else None
    if record.source == "arxiv" and not arx:
        arx = _arxiv_id(record.source_id)
    if doi:
        m = _ARXIV_DOI.match(doi)
        if m:
            arx = arx or _arxiv_id(m.group(1))
        else:
            found["doi"] = doi
    if arx:
        found["arxiv"] = arx
    if record.source == "openreview":
        found["openreview"] = record.source_id
    for k, v in record.ids.items():
        kind = k.strip().lower()
        if not v or kind in _NOT_IDENTITY or kind in found:
            continue
        if kind == "doi":
            v = normalize_doi(v) or ""
        elif kind == "arxiv":
            v = _arxiv_id(v) or ""
        if v:
            found[kind] = str(v).strip()
    ordered = [(k, found[k]) for k in ID_ORDER if k in found]
    ordered += sorted((k, v) for k, v in found.items() if k not in ID_ORDER)
    return ordered


def fold(text: str) -> str:
    """Lower case without accents; the common ASCII case skips Unicode work (it is hot).

    Only the non-ASCII runs are decomposed: ASCII characters are unchanged by NFKD and
    never reorder with combining marks, so this equals decomposing the whole text, without
    a Python step per character of a long abstract holding one 'é'."""
    if text.isascii():
        return text.lower()
    return _NON_ASCII.sub(_strip_marks, text).lower()


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _strip_marks(m: re.Match[str]) -> str:
    decomposed = unicodedata.normalize("NFKD", m.group())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_SEP = "\x1f"  # joins many names into one string normalised at once (it is kept as is)
# Punctuation (ASCII and the common Unicode marks) becomes a space; letters of any script
# stay, so titles in Chinese or Greek still compare by their own words.
_PUNCT = str.maketrans(
    {
        c: " "
        for c in [chr(i) for i in range(128) if not chr(i).isalnum()]
        + [chr(i) for i in range(0x2000, 0x2070)]
        + list("«»‹›¡¿·×÷§¶°±")
        if c != _SEP
    }
)
_ABSTRACT_CHARS = 6 * ABSTRACT_WORDS * 2
"""Characters of an abstract read at most (ample for ABSTRACT_WORDS words)."""


def norm_text(text: str | None) -> str:
    """Accent-folded lower-case words separated by single spaces."""
    if not text:
        return ""
    if "&" in text:  # some libraries (ACM) ship HTML entities in titles and names
        text = html.unescape(text)
    return " ".join(fold(text).translate(_PUNCT).split())


_HASH_CACHE: dict[str, int] = {}
_STOP_HASHES = np.array(sorted({zlib.crc32(w.encode()) for w in STOPWORDS}), dtype=np.uint32)


def _word_hashes(words: list[str]) -> np.ndarray:
    """Stable 32-bit hashes (crc32, not Python's salted hash: they are stored between runs)."""
    cache = _HASH_CACHE
    try:
        return np.fromiter(map(cache.__getitem__, words), dtype=np.uint32, count=len(words))
    except KeyError:
        if len(cache) > 2_000_000:  # bound memory on endless vocabularies
            cache.clear()
        for w in words:
            if w not in cache:
                cache[w] = zlib.crc32(w.encode())
        return np.fromiter(map(cache.__getitem__, words), dtype=np.uint32, count=len(words))


def _norm_many(texts: list[str]) -> list[list[str]]:
    """`norm_text(t).split()` for many short strings in one pass (author names are hot)."""
    joined = _SEP.join(t.replace(_SEP, " ") for t in texts)
    if "&" in joined:
        joined = html.unescape(joined)
    return [part.split() for part in fold(joined).translate(_PUNCT).split(_SEP)]


def surname_keys(record: RecordView) -> tuple[frozenset[str], frozenset[str]]:
    """Folded family names and all folded name words (robust to initials and name order)."""
    return _surname_sets([record])[0]


def _surname_sets(records: Sequence[RecordView]) -> list[tuple[frozenset[str], frozenset[str]]]:
    """`surname_keys` of many records, their names normalised in one pass."""
    authors = [a for r in records for a in r.authors]
    names = _norm_many([a.name for a in authors]) if authors else []
    families = _norm_many([a.family or "" for a in authors]) if authors else []
    out = []
    at = 0
    for r in records:
        fams: set[str] = set()
        words: set[str] = set()
        for name, family in zip(
            names[at : at + len(r.authors)], families[at : at + len(r.authors)], strict=True
        ):
            words.update([w for w in name if len(w) > 1])
            k = (
                (family[0] if len(family) == 1 else "".join(family))
                if family
                else (name[-1] if name else "")
            )
            if k:
                fams.add(k)
                words.add(k)
        at += len(r.authors)
        out.append((frozenset(fams), frozenset(words)))
    return out


def make_doc(record: RecordView) -> Doc:
    """Reduce a record to the matcher's features."""
    return make_docs([record])[0]


def make_docs(records: Sequence[RecordView]) -> list[Doc]:
    """Reduce many records to the matcher's features at once: the text work is per record,
    while hashing words and building the sorted sets runs once over the whole batch (per
    record, numpy's call overhead cost more than the arithmetic)."""
    parts = []
    t_lists: list[list[str]] = []
    a_lists: list[list[str]] = []
    for record in records:
        raw_title = record.title_text or record.title or ""
        # Kind words first: '(part II)' is bracketed but names another item.
        folded = fold(raw_title) if raw_title else ""
        kinds, core = title_kinds(folded) if folded else (frozenset(), "")
        # Bracketed notes are the library's, not the paper's: '(Panel Abstract)', '(demo)';
        # so is a trailing 'Guest Editors' Foreword' (both kept as the `note`).
        # So is a leading session label: 'Tutorial: Data access' is 'Data access (tutorial
        # session)' in another library.
        m = _LABEL.match(raw_title) if raw_title[:1] in _LABEL_INITIALS else None
        label = m.group(1) if m and len(raw_title) - m.end() >= 8 else ""
        named_raw = raw_title[m.end() :] if m and label else raw_title
        bare = _BRACKETED.sub(" ", named_raw)
        has_notes = bare != raw_title
        named, front = front_matter_tail(fold(bare) if has_notes else folded) if folded else ("", "")
        title = norm_text(named if bare.strip() else raw_title)
        head = _SUBTITLE.split(named_raw, maxsplit=1)
        title_head = norm_text(head[0]) if len(head) > 1 else ""
        if front and (not title_head or title_head == norm_text(named)):
            # 'Data management issues in e-commerce: guest editor's introduction' is listed
            # by another library as 'Guest Editor's Introduction' alone: the phrase is the
            # other name it goes by (generic, so authors, year and venue must agree).
            phrase = norm_text(front)
            title_head = phrase if is_generic(phrase) else title_head
        t_lists.append(title.split())
        abstract = (record.abstract_text or record.abstract or "")[:_ABSTRACT_CHARS]
        a_lists.append(_words(abstract))
        venue = getattr(record, "venue", None) or getattr(record, "journal_ref", None) or ""
        parts.append(
            (
                record,
                title,
                title_head,
                "++" in raw_title,
                kinds,
                norm_text(_BRACKETED.sub(" ", core)) if kinds else "",
                venue_words(_words(venue)) if venue else ("", ""),
                first_page(getattr(record, "extra", None)),
                lead_key(_words(lead_text(abstract))),
                " ".join(
                    [norm_text(label)]
                    + [norm_text(n) for n in _BRACKETED.findall(named_raw)]
                    + [norm_text(front)]
                ).strip()
                if has_notes or front
                else "",
            )
        )
    t_sets = _hash_sets(t_lists, pairs=False)
    a_sets, sketches = _abstract_sets(a_lists)
    docs = []
    for (
        (record, title, title_head, plus, kinds, core, (venue, venue_kind), pages, lead, note),
        t_set,
        a_set,
        sketch,
        (fams, name_words),
    ) in zip(parts, t_sets, a_sets, sketches, _surname_sets(records), strict=True):
        docs.append(
            Doc(
                key=record.key,
                ids=identity_keys(record),
                title=title,
                title_head=title_head if title_head != title else "",
                title_tokens=t_set,
                abstract_shingles=a_set,
                surnames=fams,
                name_tokens=name_words,
                year=record.year,
                source=record.source,
                title_marks=frozenset(_DIGITS.findall(title) + (["++"] if plus else [])),
                kinds=kinds,
                core=core,
                generic=is_generic(title),
                venue=venue,
                venue_kind=venue_kind,
                pages=pages,
                lead=lead,
                sketch=sketch,
                note=note,
            )
        )
    return docs


SKETCH = 64
"""Content-word hashes kept per abstract for `sketch` (bottom-k: k of the smallest)."""


def _abstract_sets(lists: list[list[str]]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Abstract bigram sets and unigram bottom-k sketches."""
    return _hash_sets2(lists, pairs=True, cap=ABSTRACT_WORDS, sketch=SKETCH)


MIN_SKETCH = 20
"""Abstracts with fewer content words get no sketch (too short to compare)."""


def _words(text: str) -> list[str]:
    """`norm_text(text).split()` without joining the words only to split them again."""
    if not text:
        return []
    if "&" in text:
        text = html.unescape(text)
    return fold(text).translate(_PUNCT).split()


def _hash_sets(lists: list[list[str]], pairs: bool, cap: int = 0) -> list[np.ndarray]:
    """Per list, the sorted unique hashes of its words once stopwords are dropped
    (`pairs`: of its adjacent remaining words; a one-word list keeps its word; `cap`: of
    its first `cap` remaining words), computed for all lists in one pass."""
    return _hash_sets2(lists, pairs, cap, 0)[0]


def _hash_sets2(
    lists: list[list[str]], pairs: bool, cap: int = 0, sketch: int = 0
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """`_hash_sets`, and with `sketch` > 0 also each list's `sketch` smallest unique word
    hashes (a bottom-k sketch of its word set; empty under MIN_SKETCH words) from the same
    hashed words."""
    n = len(lists)
    lens = np.fromiter(map(len, lists), dtype=np.int64, count=n)
    flat = _word_hashes([w for words in lists for w in words])
    owner = np.repeat(np.arange(n, dtype=np.uint64), lens)
    keep = ~np.isin(flat, _STOP_HASHES)
    if cap:
        # Rank of each kept word within its list: keep the first `cap`.
        kept = np.cumsum(keep)
        before = np.concatenate(([0], kept))[np.cumsum(lens) - lens]
        keep &= kept - np.repeat(before, lens) <= cap
    flat, owner = flat[keep], owner[keep]
    lens = np.bincount(owner.astype(np.int64), minlength=n)
    sketches: list[np.ndarray] = []
    if sketch:
        words = _unique_sets(owner, flat, n)
        sketches = [u[:sketch].copy() if len(u) >= MIN_SKETCH else u[:0].copy() for u in words]
    if pairs:
        x = (flat[:-1].astype(np.uint64) * np.uint64(0x9E3779B1)) ^ flat[1:].astype(np.uint64)
        inside = owner[:-1] == owner[1:]
        own = owner[:-1][inside]
        vals = (x ^ (x >> np.uint64(29))).astype(np.uint32)[inside]
        single = np.nonzero(lens == 1)[0]
        if len(single):
            starts = np.cumsum(lens) - lens
            own = np.concatenate([own, single.astype(np.uint64)])
            vals = np.concatenate([vals, flat[starts[single]]])
    else:
        own, vals = owner, flat
    return [u.copy() for u in _unique_sets(own, vals, n)], sketches


def _unique_sets(own: np.ndarray, vals: np.ndarray, n: int) -> list[np.ndarray]:
    """Per owner 0..n-1, the sorted unique `vals` it owns (views into one array)."""
    code = np.sort((own << np.uint64(32)) | vals.astype(np.uint64))
    if len(code):  # (np.unique hashes large arrays: several times slower than a sort)
        code = code[np.concatenate(([True], code[1:] != code[:-1]))]
    bounds = np.searchsorted(code >> np.uint64(32), np.arange(n + 1, dtype=np.uint64))
    uniq = (code & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return [uniq[bounds[i] : bounds[i + 1]] for i in range(n)]


def cluster_records(
    records: Sequence[SourceRecord],
    *,
    threshold: float | None = None,
    must_link: Iterable[tuple[str, str]] = (),
    cannot_link: Iterable[tuple[str, str]] = (),
) -> list[list[int]]:
    """Group records into works: lists of indexes into `records`, one list per work.

    Pure function (no store): the benchmark and tests call it directly; the incremental
    store-backed run (`paperdesk.resolve.works_run.resolve_works`) uses the same stages.
    """
    from paperdesk.resolve.cluster import Clusterer
    from paperdesk.resolve.pairs import MATCH_THRESHOLD, candidate_scores

    docs = make_docs(records)
    thr = MATCH_THRESHOLD if threshold is None else threshold
    cl = Clusterer(docs)
    pos = {d.key: i for i, d in enumerate(docs)}
    for a, b in cannot_link:
        if a in pos and b in pos:
            cl.forbid(pos[a], pos[b])
    for a, b in must_link:
        if a in pos and b in pos:
            cl.union(pos[a], pos[b], force=True)
    cl.link_identities()
    pairs = candidate_scores(docs)
    for s, i, j in sorted(pairs, reverse=True):
        if s < thr:
            break
        cl.union(i, j)
    return cl.groups()
