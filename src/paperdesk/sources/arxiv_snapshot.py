"""The arXiv bulk metadata snapshot (the Kaggle `arxiv-metadata-oai-snapshot.json`):
JSON lines, one paper each, ~2.7M lines / ~4 GB, usually read gzipped.

    {"id": "0704.0001", "submitter": "Pavel Nadolsky",
     "authors": "C. Bal\\'azs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan",
     "title": "…", "comments": "…", "journal-ref": "…", "doi": "…", "report-no": "…",
     "categories": "hep-ph", "license": null, "abstract": "…",
     "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}, …],
     "update_date": "2008-11-13",
     "authors_parsed": [["Balázs", "C.", ""], ["Berger", "E. L.", ""], …]}

Throughput matters here (the whole ingest must reach 10k records/s on 2 cores), so each
line costs one `orjson.loads`, a few dict look-ups and the split date fast path; the
author line is only split by rules when `authors_parsed` is missing. `authors_parsed`
entries are `[keyname, forenames, suffix, affiliation…]` as arXiv's own parser makes them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord, Version
from paperdesk.sources._arxiv_common import (
    ABS_URL,
    first_json_object,
    json_arxiv_id,
    opt_str,
    parse_json_lines,
    rfc2822_to_iso,
    split_arxiv_authors,
)

NAME = "arxiv-snapshot"


def sniff(head: bytes, filename: str) -> bool:
    """A JSON object line with the snapshot's own keys: `authors_parsed`, or `versions`
    holding `created` stamps next to `update_date`."""
    d = first_json_object(head)
    if isinstance(d, bytes):
        return b'"authors_parsed"' in d or (b'"update_date"' in d and b'"versions"' in d)
    if d is None or "id" not in d:
        return False
    return "authors_parsed" in d or ("versions" in d and "update_date" in d)


def parse(stream: BinaryIO, origin: str) -> Iterator[SourceRecord | ParseError]:
    """One record per line; a bad line is yielded as a ParseError with its line number."""
    return parse_json_lines(stream, origin, _record)


def _record(d: dict[str, Any], raw: bytes) -> SourceRecord:
    aid = json_arxiv_id(d)[0]
    versions = []
    for v in d.get("versions") or ():
        label = v.get("version")
        if type(label) is not str:
            raise TypeError("each version needs a 'version' label string")
        versions.append(Version(label, rfc2822_to_iso(opt_str(v, "created"))))
    # `new_record`'s fields spelt out: a call with keywords, not a `**fields` dict
    rec = SourceRecord(
        source="arxiv",
        source_id=aid,
        arxiv_id=aid,
        raw=raw,
        raw_format=NAME,
        url=ABS_URL + aid,
        title=opt_str(d, "title"),
        abstract=opt_str(d, "abstract"),
        comments=opt_str(d, "comments"),
        journal_ref=opt_str(d, "journal-ref"),
        doi=opt_str(d, "doi"),
        license=opt_str(d, "license"),
        categories=(opt_str(d, "categories") or "").split(),
        versions=versions,
    )
    if versions:
        rec.submitted = versions[0].date
        rec.updated = versions[-1].date
    update_date = opt_str(d, "update_date")
    if update_date:
        rec.extra["update_date"] = update_date
        rec.updated = rec.updated or update_date
    for key, extra_key in (("submitter", "submitter"), ("report-no", "report_no")):
        value = opt_str(d, key)
        if value:
            rec.extra[extra_key] = value
    parsed = d.get("authors_parsed")
    if parsed:
        rec.authors = [_author(p) for p in parsed]
    else:
        rec.authors = split_arxiv_authors(opt_str(d, "authors"))
    return rec


def _author(p: list[str]) -> Author:
    """`[keyname, forenames, suffix, affiliation…]` → Author (name in reading order).

    The hot loop of the snapshot (~6 authors a record): the common 3-item shape is
    unpacked directly, everything else takes the general path.
    """
    if type(p) is not list:
        raise TypeError("authors_parsed entries should be lists")
    affs: list[str] = []
    if len(p) == 3:
        family, given, suffix = p
    else:
        family = p[0] if p else ""
        given = p[1] if len(p) > 1 else ""
        suffix = p[2] if len(p) > 2 else ""
        affs = [a for a in p[3:] if type(a) is str and a]
    if type(family) is not str or type(given) is not str or type(suffix) is not str:
        raise TypeError("authors_parsed entries should hold strings")
    name = f"{given} {family}" if given else family
    if suffix:
        name = f"{name} {suffix}"
    return Author(name, given or None, family or None, affs)
