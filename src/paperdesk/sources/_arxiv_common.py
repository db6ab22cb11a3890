"""What the arXiv parsers share: author-string splitting, arXiv dates, ids and URLs.

arXiv writes authors as one free-text line in `.abs` files, the `arXivRaw` OAI format and
the bulk snapshot (`A. Smith, B. Jones and C. Lee (MIT)`), and its dates in RFC 2822
(`Mon, 2 Apr 2007 19:18:42 GMT`). Each format module would otherwise grow its own slightly
different copy of these rules; keeping them here makes every arXiv source split the same
author line into the same `Author` list, which the author-resolution stage relies on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.utils import parsedate_tz
from typing import Any, BinaryIO, cast

import orjson
from lxml import etree

from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord
from paperdesk.normalize.ids import split_arxiv_id
from paperdesk.sources._jsonio import read_json

ABS_URL = "https://arxiv.org/abs/"

_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}


def rfc2822_to_iso(text: str | None) -> str | None:
    """`Mon, 2 Apr 2007 19:18:42 GMT` → `2007-04-02T19:18:42Z`; None when unreadable.

    arXiv's own spelling is read by splitting on whitespace (the bulk snapshot holds
    millions of these dates, and `email.utils` costs several times more); anything
    unusual — another zone, no weekday — goes through `email.utils.parsedate_tz` and is
    converted to UTC.
    """
    if not text:
        return None
    parts = text.split()
    if len(parts) == 6 and parts[5] == "GMT":
        _, day, mon, year, hms, _ = parts
        month = _MONTHS.get(mon.lower())
        if (
            month
            and day.isdigit()
            and len(day) <= 2
            and 1 <= int(day) <= 31
            and year.isdigit()
            and len(year) == 4
            and len(hms) == 8
            and hms[2] == ":"
            and hms[5] == ":"
            and hms.replace(":", "").isdigit()
        ):
            return f"{year}-{month:02d}-{int(day):02d}T{hms}Z"
    return _slow_rfc2822(text)


def _slow_rfc2822(text: str) -> str | None:
    try:
        parsed = parsedate_tz(text)
        if parsed is None:
            return None
        offset = parsed[9] or 0
        stamp = datetime(*parsed[:6], tzinfo=UTC).timestamp() - offset
        return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError, TypeError, IndexError):
        return None


def abs_url(aid: str) -> str:
    """The canonical abstract page of an arXiv id (without version)."""
    return ABS_URL + aid


def new_record(aid: str, raw: bytes, raw_format: str, **fields: Any) -> SourceRecord:
    """An arXiv SourceRecord: key `arxiv:<id>`, the abs page as link, the given fields."""
    return SourceRecord(
        source="arxiv",
        source_id=aid,
        arxiv_id=aid,
        raw=raw,
        raw_format=raw_format,
        url=ABS_URL + aid,
        **fields,
    )


def add_class_codes(rec: SourceRecord) -> None:
    """Append the MSC-class / ACM-class lines (kept in `extra` as written) to `categories`,
    after the arXiv ones: `SourceRecord.categories` holds every subject code a source
    gives, and the subjects stage splits them (`68T37, 68T20` → MSC codes) the same way
    for every format, the daily feed included, which mixes them into its category list."""
    for key in ("msc_class", "acm_class"):
        value = rec.extra.get(key)
        if value and value not in rec.categories:
            rec.categories.append(value)


def version_list(latest: str | None) -> list[str]:
    """`v1` … `vN` for a latest version `vN` (formats that only name the latest one)."""
    if not latest or not latest[1:].isdigit():
        return []
    n = int(latest[1:])
    if n < 1 or n > 1000:  # no arXiv paper has anywhere near 1000 versions
        return []
    return [f"v{i}" for i in range(1, n + 1)]


def parsed_author(
    family: str, given: str | None, suffix: str | None = None, affiliations: list[str] | None = None
) -> Author:
    """An `Author` from a source that already splits names (OAI `arXiv`, `authors_parsed`).

    `name` is rebuilt in reading order (`C. -P. Yuan`, suffix last) because these sources
    never give the original string per author.
    """
    name = " ".join(p for p in (given, family, suffix) if p)
    return Author(
        name=name or family,
        given=given or None,
        family=family or None,
        affiliations=[a for a in (affiliations or []) if a],
    )


# -- JSON lines (snapshot and daily feed) ----------------------------------------------


def json_records(stream: BinaryIO, origin: str) -> Iterator[tuple[int, bytes, Any | ParseError]]:
    """`(record_no, raw, value)` per JSON line; a bad line's value is a ParseError naming it.

    Both formats are JSON lines, but a user may also save a JSON array of the same objects:
    its items are records too (numbered by position, raw re-serialised).
    """
    kind, lines = read_json(stream, origin)
    for line in lines:
        if line.error is not None:
            yield line.record_no, line.raw, ParseError(line.error, origin, line.record_no)
        elif kind == "document" and isinstance(line.value, list):
            for i, item in enumerate(line.value, 1):
                yield i, orjson.dumps(item), item
        else:
            yield line.record_no, line.raw, line.value


def parse_json_lines(
    stream: BinaryIO, origin: str, build: Callable[[dict[str, Any], bytes], SourceRecord]
) -> Iterator[SourceRecord | ParseError]:
    """`build(obj, raw)` for every JSON line; a bad line or a record of the wrong shape is
    yielded as a ParseError with its line number (JSON types are untrusted: `build` may
    raise TypeError/ValueError/AttributeError/IndexError/KeyError on them)."""
    for no, raw, value in json_records(stream, origin):
        if isinstance(value, ParseError):
            yield value
            continue
        if not isinstance(value, dict):
            yield ParseError(f"expected a JSON object, got {type(value).__name__}", origin, no)
            continue
        try:
            yield build(value, raw)
        except ParseError as exc:
            yield ParseError(exc.message, origin, no)
        except (TypeError, ValueError, AttributeError, IndexError, KeyError) as exc:
            yield ParseError(f"unexpected value: {exc!r}", origin, no)


def first_json_object(head: bytes) -> dict[str, Any] | bytes | None:
    """The first line of a JSON-lines head as a dict; its bytes when the 64 KiB head cut
    it (sniffers then look for key names); None when it is not a JSON object line."""
    first = head.lstrip().split(b"\n", 1)[0]
    if not first.startswith(b"{"):
        return None
    try:
        d = orjson.loads(first)
    except orjson.JSONDecodeError:
        return first
    return d if isinstance(d, dict) else None


def opt_str(d: dict[str, Any], key: str) -> str | None:
    """A string field kept exactly as sent (empty → None); any other JSON type is refused
    with TypeError, which the parsers turn into a ParseError for that record."""
    v = d.get(key)
    if v is None or v == "":
        return None
    if type(v) is str:
        return v
    raise TypeError(f"{key!r} should be a string, not {type(v).__name__}")


def json_arxiv_id(d: dict[str, Any]) -> tuple[str, str | None]:
    """`(id, "vN" or None)` of a JSON-lines record's `id`; ParseError when it holds no
    arXiv id."""
    parts = split_arxiv_id(opt_str(d, "id"))
    if parts is None:
        raise ParseError(f"no arXiv id (id={str(d.get('id'))[:80]!r})")
    return parts


# -- XML (OAI-PMH and Atom) ------------------------------------------------------------


def xml_events(stream: BinaryIO, tags: tuple[str, ...]) -> etree.iterparse:
    """`end` events for `tags`, streamed, with every network and entity feature off.

    The inputs are untrusted downloads: no DTD loading, no entity expansion (billion
    laughs, XXE), no network, and lxml's default limits on node sizes (no `huge_tree`).
    """
    return etree.iterparse(
        stream,
        events=("end",),
        tag=tags,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
    )


def xml_elements(
    stream: BinaryIO, origin: str, tags: tuple[str, ...], record_tag: str, root_tag: str
) -> Iterator[etree._Element]:
    """Stream the `tags` elements of a document whose root must be `root_tag`.

    Malformed XML (truncated download, bad bytes for the declared encoding) raises
    ParseError naming the record being read; so does a document of another kind.
    """
    capped = _CappedReader(stream)
    context = xml_events(cast(BinaryIO, capped), tags)  # lxml needs only read()
    records = 0
    try:
        for _, elem in context:
            if elem.tag == record_tag:
                records += 1
                capped.mark()
            yield elem
        root = context.root
    except etree.LxmlError as exc:
        raise ParseError(f"malformed XML: {exc}", origin, records + 1) from None
    except _TooBig:
        raise ParseError(
            f"XML record larger than {MAX_ELEMENT_BYTES} bytes: rejected while reading it",
            origin, records + 1,
        ) from None
    if root is None or root.tag != root_tag:
        raise ParseError(f"not the expected document: no <{root_tag}> root element", origin)


# The most bytes of XML one record (an OAI `<record>`, an Atom `<entry>`) may take, checked
# while reading, before the tree holds them: lxml already caps one text node at 10 MB
# (no `huge_tree`), this caps a record of many small nodes, which take ~10x their bytes
# as a tree (32 MiB of them peaked at 388 MiB). A 3,000-author record is ~0.5 MB.
MAX_ELEMENT_BYTES = 4 * 1024 * 1024


class _TooBig(Exception):
    pass


class _CappedReader:
    """The stream lxml reads, counting bytes since the last finished record."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._since = 0

    def mark(self) -> None:
        self._since = 0

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size if size is not None and size >= 0 else 1 << 16)
        self._since += len(data)
        if self._since > MAX_ELEMENT_BYTES + (1 << 16):  # + one read: lxml reads ahead
            raise _TooBig
        return data


def free(elem: etree._Element) -> None:
    """Drop a finished element and its already-read siblings, so memory stays bounded."""
    elem.clear(keep_tail=False)
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


def xml_text(elem: etree._Element, tag: str, strip: bool = True) -> str | None:
    """Child text; stripped for codes, kept as sent (indent, line breaks) for prose."""
    child = next(elem.iterchildren(tag), None)  # 2x faster than find(): no path parsing
    if child is None:
        return None
    return _text_of(_all_text(child) if len(child) else child.text or "", strip)


def child_texts(elem: etree._Element) -> dict[str, str]:
    """The text of each child element by tag (the first of a tag), read in one pass:
    records read a dozen fields each, and one loop costs less than a dozen look-ups."""
    out: dict[str, str] = {}
    for child in elem:
        tag = child.tag
        if type(tag) is str and tag not in out:  # comments and PIs have no str tag
            out[tag] = _all_text(child) if len(child) else child.text or ""
    return out


def _all_text(elem: etree._Element) -> str:
    """The text of an element that has nodes inside. An entity reference the parser did
    not expand (`&foo;`: entities are never resolved) is kept as written with the text
    after it, so a title holding one is not cut there (lxml's `.text` stops at it; the
    title was stored as null). Without an entity, `.text` as before."""
    if not any(isinstance(node, etree._Entity) for node in elem):
        return elem.text or ""
    parts = [elem.text or ""]
    for node in elem:
        if isinstance(node, etree._Entity):
            parts.append(node.text)
        elif type(node.tag) is str:
            parts.append("".join(node.itertext()))
        parts.append(node.tail or "")
    return "".join(parts)


def pick(texts: dict[str, str], tag: str, strip: bool = True) -> str | None:
    """A field of `child_texts`, as `xml_text` would give it."""
    text = texts.get(tag)
    return None if not text else _text_of(text, strip)


def _text_of(text: str, strip: bool) -> str | None:
    if strip:
        return text.strip() or None
    return text if text.strip() else None


def to_int(text: str | None) -> int | None:
    """An integer attribute or text, None when absent or not a (reasonable) number."""
    if text is None or len(text) > 30:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


# -- author lines ------------------------------------------------------------------------

_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "2nd", "3rd"}
_DROP = {"et al", "et al.", "et. al.", "others", "and others"}
_ET_AL = (" et al.", " et al", " et. al.", " et. al")
_AND = re.compile(r"\s+(?:and|&)\s+", re.IGNORECASE)
_LEGEND = re.compile(r"\(\s*([0-9a-zA-Z*]{1,4})\s*\)")
# "(1 Dip. Astro., Bologna; 2 INAF, Bologna)" or "(1 - Swarthmore College; 2 - Caltech)"
_BARE_LEGEND = re.compile(r"\s*1\s*[-:)]?\s+[^\d\s]")
_BARE_LEGEND_2 = re.compile(r"[;,]\s*2\s*[-:)]?\s+[^\d\s]")
_BARE_SPLIT = re.compile(r"(?:^|[;,])\s*(\d{1,2})\s*[-:)]?\s+(?=[^\d\s])")
_REFS = re.compile(r"[0-9a-zA-Z*]{1,4}(?:\s*(?:,|and|&)\s*[0-9a-zA-Z*]{1,4})*")
_REF_SPLIT = re.compile(r"\s*(?:,|\band\b|&)\s*")


def split_arxiv_authors(line: str | None) -> list[Author]:
    """Split an arXiv author line into authors with their affiliations.

    arXiv's conventions (help/prep "Authors"): names separated by commas or ` and `
    (also `&`, and `:` after a collaboration name); an affiliation in parentheses right
    after the name it belongs to, `A. Smith (MIT), B. Jones (CERN)`; or numbered,
    `A. Smith (1), B. Jones (1 and 2) ((1) MIT, (2) CERN)`. Commas inside parentheses or
    TeX braces never split. `et al.` is dropped; `Jr.`/`III` rejoin the previous name.
    Names keep their TeX (`Macr\\\\`i`): decoding accents is normalisation's job.
    """
    if not line:
        return []
    text = " ".join(line.split())
    items = _tokenise(text)
    legend: dict[str, str] = {}
    people: list[tuple[str, list[str]]] = []
    for name, groups in items:
        own: list[str] = []
        for g in groups:
            if g.lstrip().startswith("("):
                legend.update(_parse_legend(g, _LEGEND))
            elif _BARE_LEGEND.match(g) and _BARE_LEGEND_2.search(g):
                legend.update(_parse_legend(g, _BARE_SPLIT))
            elif g.strip():
                own.append(g.strip())
        name = _strip_et_al(name.strip(" ,;:")).strip(" ,;:")
        if not name:
            if own and people:  # "A. Smith, (MIT)": an affiliation after a stray comma
                people[-1][1].extend(own)
            continue
        if name.lower() in _DROP:
            continue
        if name.lower() in _SUFFIXES and people:
            prev_name, prev_groups = people[-1]
            people[-1] = (f"{prev_name} {name}", prev_groups + own)
            continue
        people.append((name, own))
    authors = []
    for name, groups in people:
        affs: list[str] = []
        for g in groups:
            if _REFS.fullmatch(g):
                refs = [r for r in _REF_SPLIT.split(g) if r]
                if legend and all(r in legend for r in refs):
                    affs.extend(legend[r] for r in refs)
                    continue
                if all(r.isdigit() for r in refs):
                    continue  # "(1,2)" pointing at a legend the line does not carry
            affs.append(g)
        authors.append(Author(name=name, affiliations=affs))
    return authors


def _strip_et_al(name: str) -> str:
    """`K. Doe et al.` → `K. Doe` (a suffix test: a regex here is quadratic on long names)."""
    low = name.lower()
    for suffix in _ET_AL:
        if low.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _tokenise(text: str) -> list[tuple[str, list[str]]]:
    """Top-level items of an author line: (name text, [parenthesised groups])."""
    items: list[tuple[str, list[str]]] = []
    buf: list[str] = []
    groups: list[str] = []
    i, n = 0, len(text)
    brace = 0

    def flush() -> None:
        items.append(("".join(buf), list(groups)))
        buf.clear()
        groups.clear()

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:  # a TeX escape: `\(` or `\,` is never structure
            buf.append(text[i : i + 2])
            i += 2
            continue
        if c == "{":
            brace += 1
        elif c == "}" and brace:
            brace -= 1
        elif brace == 0:
            if c == "(":
                depth, j = 1, i + 1
                while j < n and depth:
                    if text[j] == "(":
                        depth += 1
                    elif text[j] == ")":
                        depth -= 1
                    j += 1
                groups.append(text[i + 1 : j - 1] if depth == 0 else text[i + 1 : j])
                i = j
                continue
            if c in ",;" or (c == ":" and text[i + 1 : i + 2] == " "):
                flush()
                i += 1
                continue
            if c == " ":
                m = _AND.match(text, i)
                if m:
                    flush()
                    i = m.end()
                    continue
        buf.append(c)
        i += 1
    flush()
    return items


def _parse_legend(group: str, split: re.Pattern[str]) -> dict[str, str]:
    """`(1) MIT, (2) CERN` or `1 MIT; 2 CERN` → {"1": "MIT", "2": "CERN"}."""
    pieces = split.split(group)  # [before, key1, text1, key2, text2, ...]
    legend: dict[str, str] = {}
    for k in range(1, len(pieces) - 1, 2):
        value = pieces[k + 1].strip().strip(",;").strip()
        if value:
            legend[pieces[k]] = value
    return legend
