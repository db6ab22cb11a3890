"""BibTeX files, read with bibtexparser v2.

Key `bibtex:<citation key>`. An entry that names an arXiv eprint or a DOI keeps the
`bibtex` source (the file is what the user gave us) but fills `arxiv_id` / `doi`, so the
works layer can join it to the arXiv / Crossref record of the same paper.
Names are split by bibtexparser's `SeparateCoAuthors` + `SplitNameParts` middlewares
(`von Last, Jr, First` forms included); LaTeX accents and macros (`{\\"o}`, `\\'e`) in
names, title and venue are decoded to Unicode with pylatexenc. The abstract keeps its
LaTeX (the normaliser reduces it for indexing), and `raw` keeps the entry's source text
exactly as written.
Record numbers count entries (and entries that failed to parse) in file order, so an
error names the N-th `@entry` of the file; `@string`, `@preamble` and comments are not
counted. A file that is not UTF-8 is read as Latin-1 (the usual legacy BibTeX encoding)
and the records say so in `extra["encoding"]`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import bibtexparser
from bibtexparser import middlewares
from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock
from pylatexenc.latex2text import LatexNodes2Text

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize.ids import arxiv_id, normalize_doi
from paperdesk.sources._jsonio import year_of

NAME = "bibtex"

# A .bib file is read whole (bibtexparser has no streaming API); real ones are megabytes.
MAX_BYTES = 256 * 1024 * 1024

_SNIFF = re.compile(rb"(?:^|\n)[ \t]*@[ \t]*[A-Za-z]+[ \t]*[{(]")
_LATEX = LatexNodes2Text()
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}

# bibtexparser logs every failed block itself; we report them as ParseErrors instead.
logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)


def sniff(head: bytes, filename: str) -> bool:
    """An `@type{` line before anything that looks like JSON, XML or CSV."""
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"[", b"<"):
        return False
    m = _SNIFF.search(head)
    return m is not None and m.start() < 8192


# Control bytes no text file holds (tab, line feed, form feed and carriage return are
# text); a NUL alone means binary, as for git and grep.
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 12, 13))


def looks_binary(data: bytes) -> bool:
    """True for binary data: a NUL byte, or more than 1 % control bytes, in the first
    64 KiB (BibTeX in any 8-bit encoding or UTF-8 has neither)."""
    head = data[:65536]
    if b"\x00" in head:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL))
    return controls * 100 > len(head)


def decode_latex(value: str | None) -> str | None:
    """Unicode text from a LaTeX-bearing field value (accents, macros, braces)."""
    if value is None:
        return None
    # In a .bib value `%` is a literal percent sign, not a LaTeX comment.
    s = re.sub(r"(?<!\\)%", r"\\%", value)
    try:
        out = _LATEX.latex_to_text(s)
    except Exception:  # pylatexenc on hostile input: keep the text as written
        out = value
    out = " ".join(out.split())
    return out or None


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ParseError(f"BibTeX file larger than {MAX_BYTES} bytes", origin)
    if looks_binary(data):  # `--format bibtex` on an image, a PDF …: store nothing
        raise ParseError("binary data, not BibTeX text: nothing was stored", origin)
    encoding = "utf-8"
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        encoding = "latin-1"
        source = data.decode("latin-1")
    try:
        library = bibtexparser.parse_string(
            source,
            append_middleware=[middlewares.SeparateCoAuthors(), middlewares.SplitNameParts()],
        )
    except Exception as exc:  # the splitter itself gave up: the whole file is unreadable
        raise ParseError(f"not readable as BibTeX: {exc}", origin) from None
    no = 0
    for block in library.blocks:
        if not isinstance(block, Entry | ParsingFailedBlock):
            continue
        no += 1
        if isinstance(block, DuplicateBlockKeyBlock):
            yield ParseError(f"duplicate citation key {block.key!r}", origin, no)
        elif isinstance(block, ParsingFailedBlock):
            line = f" (line {block.start_line + 1})" if block.start_line is not None else ""
            err = block.error
            reason = getattr(err, "abort_reason", None) or getattr(err, "message", None)
            msg = " ".join(str(reason or err or "malformed entry").split())[:300]
            yield ParseError(f"malformed BibTeX entry{line}: {msg}", origin, no)
        else:
            rec = _record(block, encoding)
            if rec is None:
                yield ParseError("entry has no citation key", origin, no)
            else:
                yield rec


def _value(v: Any) -> str | None:
    if isinstance(v, str):
        s = v.strip()
        return s or None
    return None


def _authors(value: Any) -> list[Author]:
    out: list[Author] = []
    if not isinstance(value, list):
        s = _value(value)
        return [Author(name=decode_latex(s) or s)] if s else []
    for parts in value:
        if isinstance(parts, str):
            if parts.strip():
                out.append(Author(name=decode_latex(parts) or parts.strip()))
            continue
        first = decode_latex(" ".join(parts.first))
        last = decode_latex(" ".join(parts.von + parts.last))
        jr = decode_latex(" ".join(parts.jr))
        family = f"{last}, {jr}" if last and jr else last
        name = " ".join(p for p in (first, last, jr) if p)
        if name:
            out.append(Author(name=name, given=first, family=family))
    return out


def _record(entry: Entry, encoding: str) -> SourceRecord | None:
    key = (entry.key or "").strip()
    if not key:
        return None
    fields = {k.lower(): f.value for k, f in entry.fields_dict.items()}
    get = lambda name: _value(fields.get(name))  # noqa: E731
    eprint = get("eprint")
    prefix = (get("archiveprefix") or get("eprinttype") or "").lower()
    ax = arxiv_id(eprint) if eprint and (prefix in ("", "arxiv")) else None
    ax = (
        ax
        or arxiv_id(get("arxiv"))
        or (arxiv_id(get("url")) if "arxiv.org" in (get("url") or "") else None)
    )
    doi = normalize_doi(get("doi"))
    year = year_of(get("year"))
    month = (get("month") or "").lower()[:3]
    month_no = _MONTHS.get(month) or (
        int(month) if month.isdigit() and 1 <= int(month) <= 12 else None
    )
    published = f"{year:04d}-{month_no:02d}" if year and month_no else (str(year) if year else None)
    venue = decode_latex(
        get("journal") or get("booktitle") or get("journaltitle") or get("publisher")
    )
    keywords = [k.strip() for k in re.split(r"[;,]", get("keywords") or "") if k.strip()]
    extra: dict[str, Any] = {"entry_type": entry.entry_type.lower()}
    for name in ("volume", "number", "pages", "publisher", "note", "isbn", "issn"):
        v = get(name)
        if v:
            extra[name] = v
    if encoding != "utf-8":
        extra["encoding"] = encoding
    return SourceRecord(
        source="bibtex",
        source_id=key,
        raw=(entry.raw or "").encode(encoding, errors="replace"),
        raw_format=NAME,
        url=get("url") or (f"https://doi.org/{doi}" if doi else None),
        title=decode_latex(get("title")),
        abstract=get("abstract"),
        authors=_authors(fields.get("author")),
        published=published,
        year=year,
        doi=doi,
        arxiv_id=ax,
        journal_ref=get("journal-ref") or get("journalref"),
        venue=venue,
        comments=get("comment") or get("comments"),
        keywords=keywords,
        categories=[c for c in (get("primaryclass") or "").split() if c],
        extra=extra,
    )
