"""arXiv's own `.abs` metadata files: one paper per file.

Layout (arXiv's on-disk format since 1991, both id styles)::

    ------------------------------------------------------------------------------
    \\\\
    arXiv:hep-th/9709111
    From: Name <e-mail>
    Date: Tue, 16 Sep 1997 14:44:58 GMT   (11kb)
    Date (revised v2): Tue, 23 Sep 1997 17:34:41 GMT   (11kb)

    Title: On the effective interactions ...
    Authors: Andrea Brignole (CERN-TH), Ferruccio Feruglio (Padua Univ.), Fabio
      Zwirner (INFN-Padua)
    Categories: hep-th hep-ph
    Comments: ...
    \\\\
      abstract, as submitted
    \\\\

Header fields continue on lines that start with a space. Newer files write the first
date as `Date (v1):`. Old files are Latin-1 rather than UTF-8, so a file that is not valid
UTF-8 is read as Latin-1 (every byte decodes, and that is what those files are).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import SourceRecord, Version
from paperdesk.normalize.ids import split_arxiv_id
from paperdesk.sources._arxiv_common import (
    add_class_codes,
    new_record,
    rfc2822_to_iso,
    split_arxiv_authors,
)

NAME = "arxiv-abs"

# Far above any real .abs file or listing (monthly listings are a few MiB): reading a
# bigger input whole would let a hostile input exhaust memory.
MAX_BYTES = 64 * 1024 * 1024

_SNIFF = re.compile(rb"(?:^|\n)\\\\\r?\n(?:arXiv|Paper)[^:\n]{0,40}:[ \t]*\S")
_RULE = re.compile(r"-{70,}\r?")  # arXiv rules are 77-78 dashes wide
_ID_LINE = re.compile(r"(?:arXiv|Paper)[^:]{0,40}:")
_FIELD = re.compile(r"([A-Za-z][A-Za-z-]*(?: \([^)\n]{0,40}\))?):[ \t]?(.*)")
_DATE_KEY = re.compile(r"Date(?: \((?:revised )?(v\d+)\))?")


def sniff(head: bytes, filename: str) -> bool:
    """The `\\\\` separator line followed by `arXiv:<id>` (or the older `Paper:`).

    An empty file named `*.abs` is claimed too (the name is the only evidence left):
    arXiv's own test set has one, and it holds no record rather than an unknown format.
    """
    if not head.strip():
        return filename.lower().endswith(".abs")
    return _SNIFF.search(head[:4096]) is not None


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    """The record of an `.abs` file, or each record of a listing; an empty file has none.

    arXiv's listing files (`new.AG`, `pastweek.CO`, monthly `0602`) are `.abs` records
    between rules of dashes, with mailing headers in between: every block that starts
    with the `\\\\` + id lines is a record, the rest is skipped.
    """
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ParseError(f"larger than {MAX_BYTES} bytes: not an .abs file", origin)
    try:
        text, codec = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, codec = data.decode("latin-1"), "latin-1"
    lines = text.split("\n")  # not splitlines(): raw must re-encode to the exact bytes
    blocks = _blocks(lines)
    if len(blocks) == 1:  # a plain .abs file: its raw payload is the file itself
        try:
            yield parse_record(blocks[0], data)
        except ParseError as exc:
            yield ParseError(exc.message, origin, 1)
        return
    for no, block in enumerate(blocks, 1):
        try:
            yield parse_record(block, "\n".join(block).encode(codec))
        except ParseError as exc:
            yield ParseError(exc.message, origin, no)


def _blocks(lines: list[str]) -> list[list[str]]:
    """The record blocks: between rules of dashes, opening with `\\\\` then an id line."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in [*lines, "-" * 78]:
        if _RULE.fullmatch(line):
            body = [x for x in current if x.strip()]
            if len(body) >= 2 and _is_sep(body[0]) and _ID_LINE.match(body[1]):
                blocks.append(current)
            current = []
        else:
            current.append(line)
    if not blocks and any(x.strip() for x in lines):
        # no record shape at all: report it (an unrecognised file must not pass silently)
        blocks.append(lines)
    return blocks


def _is_sep(line: str) -> bool:
    """`\\\\` alone, or the listing form `\\\\ ( https://arxiv.org/abs/… , 14kb)`."""
    s = line.rstrip()
    return s == "\\\\" or s.startswith("\\\\ (")


def parse_record(lines: list[str], raw: bytes) -> SourceRecord:
    """The record of one `.abs` block (raises ParseError without origin when malformed)."""
    seps = [i for i, line in enumerate(lines) if _is_sep(line)]
    if not seps:
        raise ParseError("not an .abs record: missing the '\\\\' separator lines")
    end_head = seps[1] if len(seps) > 1 else len(lines)
    head = [x.rstrip("\r") for x in lines[seps[0] + 1 : end_head]]
    body = []
    if len(seps) > 1:
        end = seps[2] if len(seps) > 2 else len(lines)
        body = [x.rstrip("\r") for x in lines[seps[1] + 1 : end]]
    while body and (not body[-1].strip() or body[-1].startswith("%")):
        body.pop()  # trailing blank lines and listing decorations (`%%--%%--`)
    fields = _fields(head)

    ident = None
    for key, value in fields:
        if key == "arXiv" or key.startswith("Paper"):
            ident = value.strip()
            break
    parts = split_arxiv_id(ident)
    if parts is None:
        raise ParseError(f"no arXiv id in the header (got {ident!r})")
    aid, _ = parts

    rec = new_record(aid, raw, NAME, abstract="\n".join(body) if body else None)
    rec.versions = _versions(fields)
    if rec.versions:
        rec.submitted = rec.versions[0].date
        rec.updated = rec.versions[-1].date
    extra = rec.extra
    for key, value in fields:
        if key == "Title":
            rec.title = value
        elif key == "Authors":
            rec.authors = split_arxiv_authors(value)
        elif key == "Categories":
            rec.categories = value.split()
        elif key == "Comments":
            rec.comments = value
        elif key == "Journal-ref":
            rec.journal_ref = value
        elif key == "DOI":
            rec.doi = value.strip()
        elif key == "License":
            rec.license = value.strip()
        elif key == "Report-no":
            extra["report_no"] = value
        elif key == "MSC-class":
            extra["msc_class"] = value
        elif key == "ACM-class":
            extra["acm_class"] = value
        elif key == "Proxy":
            extra["proxy"] = value
        elif key == "From":
            submitter = value.split("<", 1)[0].strip()
            if submitter:
                extra["submitter"] = submitter
    add_class_codes(rec)
    return rec


def _fields(head: list[str]) -> list[tuple[str, str]]:
    """`Key: value` pairs in order; a line starting with whitespace continues the last value
    (kept with its line break and indent, as the source wrote it)."""
    fields: list[tuple[str, str]] = []
    for line in head:
        if not line.strip():
            continue
        if line[0] in " \t" and fields:
            key, value = fields[-1]
            fields[-1] = (key, f"{value}\n{line.rstrip()}")
            continue
        m = _FIELD.match(line)
        if m:
            fields.append((m.group(1), m.group(2).rstrip()))
    return fields


def _versions(fields: list[tuple[str, str]]) -> list[Version]:
    """`Date:` / `Date (v1):` / `Date (revised v2):` lines → versions with ISO date and size."""
    versions: list[Version] = []
    for key, value in fields:
        m = _DATE_KEY.fullmatch(key)
        if not m:
            continue
        label = m.group(1) or f"v{len(versions) + 1}"
        when, size = value.strip(), None
        cut = when.rfind("(")
        if when.endswith(")") and cut >= 0:  # "Tue, 16 Sep 1997 14:44:58 GMT   (11kb,D)"
            when, size = when[:cut].rstrip(), when[cut + 1 : -1].split(",", 1)[0].strip() or None
        versions.append(Version(label, rfc2822_to_iso(when), size))
    versions.sort(key=lambda v: int(v.version[1:]))
    return versions
