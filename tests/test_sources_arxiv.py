"""The arXiv parsers on real data: OAI-PMH exchanges (our own, in the shape of arXiv's:
real records' metadata from `.abs` files in the `arXiv` format), API Atom responses, all
1,132 `.abs` files and the listings, the daily feed, and bulk-snapshot lines made from real
`.abs` files. Expected values are read off the inputs themselves.

Inputs no capture has are built from real data: the `arXivRaw` OAI format (real `.abs`
content in arXivRaw's element layout inside the OAI envelope), OAI `<error>` and
resumption-token pages (the envelope with the protocol's elements), and the bulk
snapshot (Kaggle's JSON-lines shape filled from real `.abs` files).
"""

from __future__ import annotations

import io
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from conftest import feed_head, open_feed, shared_file
from paperdesk import normalize
from paperdesk.errors import ParseError, UnknownFormatError
from paperdesk.model import SourceRecord
from paperdesk.sources import (
    _arxiv_common,
    arxiv_abs,
    arxiv_atom,
    arxiv_feed,
    arxiv_oai,
    arxiv_snapshot,
    detect,
)
from paperdesk.sources._arxiv_common import rfc2822_to_iso, split_arxiv_authors

OAI_DIR = "arxiv/oai-pmh/"
# Our own exchanges in the shape of arXiv's (tests/data/README.md): arXiv metadata of two
# `.abs` files in the `arXiv` format, a 503 with Retry-After, ListIdentifiers, GetRecord.
LISTRECORDS = OAI_DIR + "listrecords-arXiv-503-then-200.json"
GETRECORD = OAI_DIR + "getrecord-arXiv.json"
LISTIDS = OAI_DIR + "listidentifiers-arXiv.json"
ATOM_DIR = "arxiv/api-atom/"


# -- helpers -------------------------------------------------------------------------------


def oai_body(rel: str, status: int = 200) -> bytes:
    """The response body of the recorded exchange with this HTTP status."""
    exchanges = json.loads(shared_file(rel).read_text())
    return next(e["response"] for e in exchanges if e["status"] == status).encode("utf-8")


def atom_body(name: str) -> bytes:
    """A JSON-wrapped API capture's body as the bytes arXiv sent.

    The capture tool stored the UTF-8 body decoded as Latin-1 (`RamÃ­rez`), so encoding
    it back to Latin-1 restores arXiv's bytes exactly.
    """
    body = json.loads(shared_file(ATOM_DIR + name).read_text())["body"]
    try:
        return body.encode("latin-1")
    except UnicodeEncodeError:
        return body.encode("utf-8")


def records(items: list[SourceRecord | ParseError]) -> list[SourceRecord]:
    errors = [i for i in items if isinstance(i, ParseError)]
    assert not errors, errors
    return [i for i in items if isinstance(i, SourceRecord)]


def parse_all(parser: Any, data: bytes, origin: str = "test") -> list[SourceRecord | ParseError]:
    return list(parser.parse(io.BytesIO(data), origin))


def abs_path(rel: str) -> Path:
    return shared_file("arxiv/abs/" + rel)


def envelope(inner: str) -> bytes:
    """arXiv's real ListRecords envelope around other content (records, token, error)."""
    real = oai_body(LISTRECORDS).decode()
    head = real[: real.index("<ListRecords>")]
    return (head + inner + "\n</OAI-PMH>\n").encode()


def read_abs_fields(path: Path) -> dict[str, Any]:
    """A test-side reading of an .abs file (independent of the parser under test):
    header fields with continuation lines joined, dates, and the abstract."""
    text = path.read_bytes().decode("utf-8")
    parts = text.split("\n\\\\\n")
    header, abstract = parts[1], parts[2]
    fields: dict[str, Any] = {"dates": []}
    key = None
    for line in header.split("\n"):
        if line.startswith(" ") and key:
            fields[key] += "\n" + line
        elif ":" in line:
            key, _, value = line.partition(":")
            value = value.strip()
            if key.startswith("Date"):
                when, _, size = value.partition("(")
                fields["dates"].append((when.strip(), size.rstrip(")").split(",")[0]))
                key = None
            else:
                fields[key] = value
    fields["abstract"] = abstract
    return fields


# -- shared helpers: dates and author lines ---------------------------------------------------


def test_rfc2822_dates_become_iso_utc() -> None:
    assert rfc2822_to_iso("Mon, 2 Apr 2007 19:18:42 GMT") == "2007-04-02T19:18:42Z"
    assert rfc2822_to_iso("Tue, 23 Sep 1997 17:34:41 GMT") == "1997-09-23T17:34:41Z"
    assert rfc2822_to_iso("2 Apr 2007 21:18:42 +0200") == "2007-04-02T19:18:42Z"
    assert rfc2822_to_iso("Mon, 32 Apr 2007 19:18:42 GMT") is None
    assert rfc2822_to_iso("yesterday") is None
    assert rfc2822_to_iso("") is None


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2099, 12, 31)))
def test_rfc2822_split_path_agrees_with_email_utils(when: datetime) -> None:
    """The whitespace split for arXiv's spelling gives what `email.utils` gives."""
    when = when.replace(microsecond=0)
    text = f"{when:%a}, {when.day} {when:%b %Y %H:%M:%S} GMT"
    assert rfc2822_to_iso(text) == _arxiv_common._slow_rfc2822(text) == f"{when:%Y-%m-%dT%H:%M:%SZ}"


def test_split_arxiv_authors_conventions() -> None:
    def names(line: str) -> list[tuple[str, list[str]]]:
        return [(a.name, a.affiliations) for a in split_arxiv_authors(line)]

    assert names("A. Smith, B. Jones and C. Lee (MIT)") == [
        ("A. Smith", []),
        ("B. Jones", []),
        ("C. Lee", ["MIT"]),
    ]
    assert names("A. Smith (1), B. Jones (1 and 2) ((1) MIT, (2) CERN)") == [
        ("A. Smith", ["MIT"]),
        ("B. Jones", ["MIT", "CERN"]),
    ]
    assert names("J. Smith, Jr., K. Doe et al.") == [("J. Smith Jr.", []), ("K. Doe", [])]
    assert names("BELLE Collaboration: A Person, Nother Person") == [
        ("BELLE Collaboration", []),
        ("A Person", []),
        ("Nother Person", []),
    ]
    # TeX braces and escapes never split, and are kept for normalisation to decode
    assert names('M. {M\\"u}ller, F. {Smith, Jr.} and X') == [
        ('M. {M\\"u}ller', []),
        ("F. {Smith, Jr.}", []),
        ("X", []),
    ]
    assert names("") == []


# -- OAI-PMH ------------------------------------------------------------------------------------


def test_oai_listrecords_arxiv_format() -> None:
    body = oai_body(LISTRECORDS)
    assert arxiv_oai.sniff(body[:65536], "listrecords.xml")
    recs = records(parse_all(arxiv_oai, body))
    assert [r.key for r in recs] == ["arxiv:1601.04345", "arxiv:cs/0212040"]
    r = recs[0]
    assert r.url == "https://arxiv.org/abs/1601.04345" and r.arxiv_id == "1601.04345"
    assert r.title == (
        "Double-Averaging Can Fail to Characterize the Long-Term Evolution of\n"
        "  Lidov-Kozai Cycles & Derivation of an Analytical Correction"
    )
    assert [(a.name, a.given, a.family, a.affiliations) for a in r.authors] == [
        ("Liantong Luo", "Liantong", "Luo", ["KIAA-PKU"]),
        ("Boaz Katz", "Boaz", "Katz", ["Weizmann"]),
        ("Subo Dong", "Subo", "Dong", ["KIAA-PKU"]),
    ]
    assert r.categories == ["astro-ph.EP"]
    assert r.doi == "10.1093/mnras/stw475"
    assert r.journal_ref == "MNRAS (May 21, 2016) 458 (3): 3060-3074"
    assert r.comments == "Fig. 3 and Eq. 35 corrected; Matlab codes included as ancillary files"
    assert r.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert r.submitted == "2016-01-17" and r.updated == "2016-01-31"
    assert r.versions == []  # `created` and `updated` do not say which versions lie between
    assert r.extra == {"oai_datestamp": "2016-05-25"}
    # the abstract exactly as sent: leading indent and arXiv's hard line breaks
    assert r.abstract is not None
    assert r.abstract.startswith("  The double-averaging (DA) approximation is widely employed")
    assert "the standard\ntechnique" in r.abstract
    # raw is the <record> element itself, well-formed on its own
    assert r.raw.startswith(b"<record") and r.raw.endswith(b"</record>")
    assert etree.fromstring(r.raw).findtext(".//{*}id") == "1601.04345"
    old = recs[1]
    assert old.source_id == "cs/0212040" and old.categories[:3] == ["cs.LG", "cs.CE", "cs.CV"]
    assert old.extra["report_no"] == "NRC-39163"
    assert old.extra["acm_class"] == "I.2.6; I.5.2; I.5.4; J.2"
    assert [(a.given, a.family) for a in old.authors] == [("Peter D.", "Turney")]
    assert [(v.version, v.date) for v in old.versions] == [("v1", "2002-12-12")]
    assert old.abstract is not None and "decision tree induction software called Q-YIELD" in old.abstract


def test_oai_getrecord_gives_the_same_record() -> None:
    (got,) = records(parse_all(arxiv_oai, oai_body(GETRECORD)))
    listed = records(parse_all(arxiv_oai, oai_body(LISTRECORDS)))[0]
    assert got.to_dict() == listed.to_dict()


def test_oai_page_info_on_list_identifiers_and_the_real_503() -> None:
    page = arxiv_oai.page_info(oai_body(LISTIDS))
    assert page.records == [] and page.token is None and page.error_code is None
    assert page.response_date == "2016-05-26T09:14:22Z"
    assert page.last_datestamp == "2007-03-31"  # the last header in the page
    assert page.max_datestamp == "2008-12-13"  # OAI lists are not in datestamp order
    with pytest.raises(ParseError, match="OAI-PMH"):
        arxiv_oai.page_info(oai_body(LISTRECORDS, status=503))


def arxiv_raw_record(path: Path) -> str:
    """A real `.abs` file's content laid out as an arXivRaw OAI record."""
    f = read_abs_fields(path)
    ident = f["arXiv"]
    x = etree.Element(
        "{http://arxiv.org/OAI/arXivRaw/}arXivRaw", nsmap={None: "http://arxiv.org/OAI/arXivRaw/"}
    )

    def add(tag: str, text: str) -> etree._Element:
        e = etree.SubElement(x, "{http://arxiv.org/OAI/arXivRaw/}" + tag)
        e.text = text
        return e

    add("id", ident)
    add("submitter", f["From"].split("<")[0].strip())
    for n, (when, size) in enumerate(f["dates"], 1):
        v = add("version", "")
        v.set("version", f"v{n}")
        etree.SubElement(v, "{http://arxiv.org/OAI/arXivRaw/}date").text = when
        etree.SubElement(v, "{http://arxiv.org/OAI/arXivRaw/}size").text = size
    for key, tag in (
        ("Title", "title"),
        ("Authors", "authors"),
        ("Categories", "categories"),
        ("Comments", "comments"),
        ("Report-no", "report-no"),
        ("Journal-ref", "journal-ref"),
        ("DOI", "doi"),
    ):
        if key in f:
            add(tag, f[key])
    add("abstract", f["abstract"])
    return (
        f"<record>\n<header>\n <identifier>oai:arXiv.org:{ident}</identifier>\n"
        f" <datestamp>2015-01-03</datestamp>\n <setSpec>physics:hep-th</setSpec>\n</header>\n"
        f"<metadata>\n{etree.tostring(x, encoding='unicode')}\n</metadata>\n</record>\n"
    )


DELETED = (
    '<record>\n<header status="deleted">\n <identifier>oai:arXiv.org:0704.0002</identifier>\n'
    " <datestamp>2015-01-04</datestamp>\n <setSpec>math</setSpec>\n</header>\n</record>\n"
)


def test_oai_arxivraw_versions_deleted_records_and_resumption_token() -> None:
    inner = (
        "<ListRecords>\n"
        + arxiv_raw_record(abs_path("hep-th/papers/9709/9709111.abs"))
        + DELETED
        + arxiv_raw_record(abs_path("arxiv/papers/0704/0704.0001.abs"))
        + '<resumptionToken cursor="0" completeListSize="3">6960524|1001</resumptionToken>\n'
        + "</ListRecords>"
    )
    body = envelope(inner)
    page = arxiv_oai.page_info(body)
    recs = records(page.records)
    assert [r.key for r in recs] == ["arxiv:hep-th/9709111", "arxiv:0704.0001"]
    assert (page.token, page.cursor, page.complete_list_size) == ("6960524|1001", 0, 3)
    assert page.deleted == 1 and page.last_datestamp == "2015-01-03"
    assert page.max_datestamp == "2015-01-04"
    r = recs[0]
    assert [(v.version, v.date, v.size) for v in r.versions] == [
        ("v1", "1997-09-16T14:44:58Z", "11kb"),
        ("v2", "1997-09-23T17:34:41Z", "11kb"),
        ("v3", "1997-11-03T19:27:30Z", "14kb"),
    ]
    assert r.submitted == "1997-09-16T14:44:58Z" and r.updated == "1997-11-03T19:27:30Z"
    assert [(a.name, a.affiliations) for a in r.authors] == [
        ("Andrea Brignole", ["CERN-TH"]),
        ("Ferruccio Feruglio", ["Padua Univ."]),
        ("Fabio Zwirner", ["INFN-Padua"]),
    ]
    assert r.categories == ["hep-th", "hep-ph"]
    assert r.doi == "10.1088/1126-6708/1997/11/001" and r.journal_ref == "JHEP 9711:001,1997"
    assert r.extra["report_no"] == "CERN-TH/97-244, DFPD~97/TH/35"
    assert "submitter" not in r.extra  # the file's From: line has no name
    assert recs[1].title == (
        "Calculation of prompt diphoton production cross sections at Tevatron and\n  LHC energies"
    )
    assert [a.name for a in recs[1].authors] == [
        "C. Bal\\'azs",
        "E. L. Berger",
        "P. M. Nadolsky",
        "C.-P. Yuan",
    ]
    assert recs[1].extra["submitter"] == "Pavel Nadolsky"
    # parse() streams the same records and skips the deleted one
    assert [r.key for r in records(parse_all(arxiv_oai, body))] == [r.key for r in recs]


def test_oai_dc_format() -> None:
    inner = """<GetRecord>
<record>
<header>
 <identifier>oai:arXiv.org:1412.8544</identifier>
 <datestamp>2015-01-03</datestamp>
 <setSpec>cs</setSpec>
</header>
<metadata>
<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/">
 <dc:title>A Kochen-Specker system has at least 22 vectors (extended abstract)</dc:title>
 <dc:creator>Uijlen, Sander</dc:creator>
 <dc:creator>Westerbaan, Bas</dc:creator>
 <dc:subject>Computer Science - Discrete Mathematics</dc:subject>
 <dc:description>  At the heart of the Conway-Kochen Free Will theorem ...</dc:description>
 <dc:description>Comment: In Proceedings QPL 2014, arXiv:1412.8102</dc:description>
 <dc:date>2014-12-29</dc:date>
 <dc:type>text</dc:type>
 <dc:identifier>http://arxiv.org/abs/1412.8544</dc:identifier>
 <dc:identifier>EPTCS 172, 2014, pp. 154-164</dc:identifier>
 <dc:identifier>doi:10.4204/EPTCS.172.11</dc:identifier>
</oai_dc:dc>
</metadata>
</record>
</GetRecord>"""
    (r,) = records(parse_all(arxiv_oai, envelope(inner)))
    assert r.key == "arxiv:1412.8544"
    assert [(a.family, a.given) for a in r.authors] == [("Uijlen", "Sander"), ("Westerbaan", "Bas")]
    assert r.comments == "In Proceedings QPL 2014, arXiv:1412.8102"
    assert r.abstract == "  At the heart of the Conway-Kochen Free Will theorem ..."
    assert r.keywords == ["Computer Science - Discrete Mathematics"]
    assert r.doi == "10.4204/EPTCS.172.11" and r.submitted == "2014-12-29"
    # without the header identifier, the id comes from the abs-page dc:identifier
    bare = inner.replace(" <identifier>oai:arXiv.org:1412.8544</identifier>\n", "")
    assert [x.key for x in records(parse_all(arxiv_oai, envelope(bare)))] == ["arxiv:1412.8544"]


def test_oai_errors() -> None:
    bad = envelope('<error code="idDoesNotExist">No matching identifier in arXiv</error>')
    page = arxiv_oai.page_info(bad)
    assert (page.error_code, page.error_message) == (
        "idDoesNotExist",
        "No matching identifier in arXiv",
    )
    with pytest.raises(ParseError, match="idDoesNotExist"):
        parse_all(arxiv_oai, bad)
    # "no records" is an empty answer, not a failure
    empty = envelope('<error code="noRecordsMatch">no records</error>')
    assert parse_all(arxiv_oai, empty) == []


def test_oai_truncated_xml_names_the_record() -> None:
    body = oai_body(LISTRECORDS)
    cut = body[: body.index(b"<title>Data Engineering")]
    out = []
    with pytest.raises(ParseError) as info:
        for item in arxiv_oai.parse(io.BytesIO(cut), "cut.xml"):
            out.append(item)
    assert [r.key for r in records(out)] == ["arxiv:1601.04345"]  # the whole first record
    assert info.value.origin == "cut.xml" and info.value.record_no == 2
    assert "malformed XML" in str(info.value)


def test_oai_wrong_encoding_is_a_parse_error() -> None:
    body = oai_body(LISTRECORDS).replace(b"Weizmann", "Weizmänn".encode("latin-1"))
    with pytest.raises(ParseError, match="malformed XML"):
        parse_all(arxiv_oai, body)


# -- Atom (arXiv API) ---------------------------------------------------------------------------


def test_atom_entry_fields_and_versions() -> None:
    body = shared_file(ATOM_DIR + "raw-xml/id_list=1111.2011v2.xml").read_bytes()
    assert arxiv_atom.sniff(body, "q.xml") and not arxiv_oai.sniff(body, "q.xml")
    (r,) = records(parse_all(arxiv_atom, body))
    assert r.key == "arxiv:1111.2011"
    assert [(v.version, v.date) for v in r.versions] == [
        ("v1", "2011-11-08T18:48:36Z"),
        ("v2", "2012-04-02T12:38:54Z"),
    ]
    assert r.submitted == "2011-11-08T18:48:36Z" and r.updated == "2012-04-02T12:38:54Z"
    assert r.title == (
        "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large\n"
        "  Connectivity Limit"
    )
    assert [a.name for a in r.authors] == [
        "James M. Murray",
        "Adrian Del Maestro",
        "Zlatko Tesanovic",
    ]
    assert r.categories == ["cond-mat.str-el", "cond-mat.stat-mech"]  # primary first
    assert r.doi == "10.1103/PhysRevB.85.115117"
    assert r.journal_ref == "Phys. Rev. B 85, 115117 (2012)"
    assert r.comments == "8 pages, 3 figures. Published version"
    assert r.extra["pdf"] == "http://arxiv.org/pdf/1111.2011v2"
    assert r.abstract is not None and r.abstract.startswith("  Theoretical description")


def test_atom_affiliations_and_old_style_id() -> None:
    page = arxiv_atom.page_info(atom_body("id_astro-ph_0601001_s0_m100_3150dca9dc76.json"))
    (r,) = records(page.records)
    assert r.key == "arxiv:astro-ph/0601001" and r.latest_version == "v1"
    assert [(a.name, a.affiliations) for a in r.authors] == [
        ("Andrew Gould", ["Ohio State"]),
        ("Susan Dorsher", ["Ohio State"]),
        ("B. Scott Gaudi", ["CfA"]),
        ("Andrzej Udalski", ["Warsaw University Observatory"]),
    ]
    assert r.journal_ref == "ActaAstron.56:1-50,2006" and r.categories == ["astro-ph"]
    assert (page.total_results, page.start_index, page.items_per_page) == (1, 0, 100)


def test_atom_empty_result_and_bad_id() -> None:
    empty = arxiv_atom.page_info(atom_body("id_0000.0000_s0_m100_8b51d9633a68.json"))
    assert empty.records == [] and empty.error is None
    assert (empty.total_results, empty.start_index, empty.items_per_page) == (0, 0, 100)
    bad = atom_body("id_abc_s0_m100_b79c8dcf6bc3.json")
    (err,) = parse_all(arxiv_atom, bad, "abc.xml")
    assert isinstance(err, ParseError) and err.record_no == 1 and err.origin == "abc.xml"
    assert "incorrect id format for abc" in str(err)
    assert arxiv_atom.page_info(bad).error == "arXiv API error: incorrect id format for abc"


def test_atom_search_pages() -> None:
    page = arxiv_atom.page_info(atom_body("q_testing_s10_m10_34e56e15aaac.json"))
    recs = records(page.records)
    assert (page.total_results, page.start_index, page.items_per_page) == (214881, 10, 10)
    assert len(recs) == 10 and len({r.key for r in recs}) == 10
    first = records(arxiv_atom.page_info(atom_body("q_testing_s0_m10_bc5a6c384fe9.json")).records)
    assert [a.name for a in first[1].authors][:3] == [
        "Aurora Ramírez",
        "Mario Berrios",
        "José Raúl Romero",
    ]
    revised = recs[0]
    assert revised.key == "arxiv:2403.16981"
    assert [(v.version, v.date) for v in revised.versions] == [
        ("v1", "2024-03-25T17:42:32Z"),
        ("v2", "2025-05-24T05:50:33Z"),
    ]


def test_atom_every_capture_parses() -> None:
    """Every page holds as many entries as its opensearch numbers promise."""
    paths = sorted(shared_file(ATOM_DIR).glob("*.json")) + sorted(
        shared_file(ATOM_DIR + "raw-xml").glob("*.xml")
    )
    assert len(paths) == 25
    for p in paths:
        body = p.read_bytes() if p.suffix == ".xml" else atom_body(p.name)
        page = arxiv_atom.page_info(body, p.name)
        if p.name.startswith("id_abc"):
            continue  # the bad-id error entry, tested above
        recs = records(page.records)
        assert page.total_results is not None and page.items_per_page is not None
        assert page.start_index is not None
        expected = min(page.items_per_page, max(0, page.total_results - page.start_index))
        assert len(recs) == expected, p.name
        assert all(r.versions and r.submitted and r.title and r.authors for r in recs), p.name


def test_atom_truncated_is_a_parse_error() -> None:
    body = atom_body("q_testing_s0_m10_bc5a6c384fe9.json")
    with pytest.raises(ParseError, match="malformed XML"):
        parse_all(arxiv_atom, body[: len(body) // 2])


# -- .abs files and listings --------------------------------------------------------------------


MISFILED = {"cs/0006007": "cs/0006008"}


def test_every_abs_file_parses() -> None:
    paths = sorted(shared_file("arxiv/abs").rglob("*.abs"))
    assert len(paths) == 1132
    n = 0
    for p in paths:
        data = p.read_bytes()
        out = records(parse_all(arxiv_abs, data, str(p)))
        if not data.strip():  # math-ph/0509037.abs is an empty file in arXiv's test set
            assert out == []
            with pytest.raises(UnknownFormatError, match="empty file"):
                detect(data, p.name)  # named as empty, not guessed (#18 item 7)
            continue
        (r,) = out
        n += 1
        # the id in the file is the one in its path (old style: archive/papers/YYMM/NNNNNNN)
        stem = p.stem if "." in p.stem else f"{p.parts[-4]}/{p.stem}"
        # one file of arXiv's test set holds its neighbour's record: the content wins
        assert r.source_id == MISFILED.get(stem, stem), p
        assert r.raw == data and r.raw_format == "arxiv-abs"
        assert r.title and r.authors and r.categories and r.versions, p
        assert all(v.date and v.date.endswith("Z") for v in r.versions), p
        assert [v.version for v in r.versions] == [f"v{i}" for i in range(1, len(r.versions) + 1)]
        assert detect(data[:65536], p.name).NAME == "arxiv-abs"
        normalize.finish(r)  # every record is storable (limits, ids, names)
    assert n == 1131


def test_abs_old_style() -> None:
    (r,) = records(parse_all(arxiv_abs, abs_path("hep-th/papers/9709/9709111.abs").read_bytes()))
    assert r.key == "arxiv:hep-th/9709111" and r.url == "https://arxiv.org/abs/hep-th/9709111"
    assert [(v.version, v.date, v.size) for v in r.versions] == [
        ("v1", "1997-09-16T14:44:58Z", "11kb"),
        ("v2", "1997-09-23T17:34:41Z", "11kb"),
        ("v3", "1997-11-03T19:27:30Z", "14kb"),
    ]
    assert [(a.name, a.affiliations) for a in r.authors] == [
        ("Andrea Brignole", ["CERN-TH"]),
        ("Ferruccio Feruglio", ["Padua Univ."]),
        ("Fabio Zwirner", ["INFN-Padua"]),
    ]
    assert r.categories == ["hep-th", "hep-ph"]
    assert r.comments == (
        "12 pages, 1 figure, plain LaTeX. An important proof added in section\n"
        "  5. Final version to be published in JHEP"
    )
    assert r.extra == {"report_no": "CERN-TH/97-244, DFPD~97/TH/35"}
    assert r.journal_ref == "JHEP 9711:001,1997" and r.doi == "10.1088/1126-6708/1997/11/001"
    assert r.abstract is not None
    assert r.abstract.startswith("  If the gravitino is light")
    assert r.abstract.endswith("on their possible phenomenological implications.")


def test_abs_new_style_license_msc_and_flags() -> None:
    (r,) = records(parse_all(arxiv_abs, abs_path("arxiv/papers/2304/2304.09157.abs").read_bytes()))
    assert r.key == "arxiv:2304.09157"
    assert [(v.version, v.date, v.size) for v in r.versions] == [
        ("v1", "2023-04-18T17:52:23Z", "8808kb"),
        ("v2", "2024-01-29T23:56:47Z", "7828kb"),
    ]
    assert [a.name for a in r.authors] == ["Wentao Zhan", "Abhirup Datta"]
    assert r.categories == ["stat.ML", "cs.LG", "stat.ME"]
    assert r.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    assert r.extra["submitter"] == "Abhirup Datta"
    (m,) = records(parse_all(arxiv_abs, abs_path("arxiv/papers/1605/1605.09669.abs").read_bytes()))
    assert m.extra["msc_class"] == "68T37, 68T20, 68T27"
    assert m.categories == ["math.OC", "68T37, 68T20, 68T27"]  # as the feed lists them
    assert m.title == (
        "Interactive Fuzzy Goal Programming Based on Taylor Series to Solve\n"
        "  Multiobjective Nonlinear Programming Problems with Interval Type 2 Fuzzy\n"
        "  Numbers"
    )


def test_abs_newer_date_v1_form() -> None:
    """Newer .abs files write the first date as `Date (v1):`; both forms give v1."""
    data = abs_path("arxiv/papers/2304/2304.09157.abs").read_bytes()
    newer = data.replace(b"\nDate: ", b"\nDate (v1): ").replace(b"Date (revised v2)", b"Date (v2)")
    assert newer != data
    old_form = records(parse_all(arxiv_abs, data))[0].versions
    assert records(parse_all(arxiv_abs, newer))[0].versions == old_form


def test_abs_latin1_file() -> None:
    data = abs_path("arxiv/papers/1607/1607.08199.abs").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    (r,) = records(parse_all(arxiv_abs, data))
    assert r.journal_ref is not None
    assert r.journal_ref.startswith("Épijournal de Géométrie Algébrique, Volume 1")
    assert len(r.versions) == 5 and r.updated == "2017-04-05T18:19:17Z"
    assert "Emanuele Macr\\`i" in [a.name for a in r.authors]
    assert r.raw == data  # raw stays the bytes as received


def test_abs_numbered_affiliation_legend() -> None:
    (r,) = records(parse_all(arxiv_abs, abs_path("arxiv/papers/0704/0704.0307.abs").read_bytes()))
    by_name = {a.name: a.affiliations for a in r.authors}
    assert by_name["Eric L. N. Jensen"] == ["Swarthmore College"]
    assert by_name["Saurav Dhital"] == ["Swarthmore College", "Vanderbilt"]
    assert by_name["Gibor Basri"] == ["UC Berkeley"]


def test_abs_listings() -> None:
    monthly = shared_file("arxiv/listings/astro-ph/listings/0602").read_bytes()
    assert arxiv_abs.sniff(monthly[:65536], "0602")
    recs = records(parse_all(arxiv_abs, monthly))
    assert len(recs) == 710 and len({r.key for r in recs}) == 710
    first = recs[0]
    assert first.key == "arxiv:astro-ph/0602001"  # the older `Paper:` id line
    assert first.title == (
        "The Properties and Redshift Evolution of Intermediate-Luminosity\n"
        "  Off-Nuclear X-ray Sources in the Chandra Deep Fields"
    )
    assert [a.name for a in first.authors][-1] == "A. T. Steffen"
    assert first.raw.decode().startswith("\\\\\nPaper: astro-ph/0602001")
    new = records(
        parse_all(arxiv_abs, shared_file("arxiv/listings/math/listings/new.AG").read_bytes())
    )
    assert [r.key for r in new] == ["arxiv:2306.77777", "arxiv:2204.88888"]
    assert new[0].abstract is not None and new[0].abstract.endswith("sofic approximations.")


def test_abs_malformed() -> None:
    (err,) = parse_all(arxiv_abs, b"Title: no separators here\nAuthors: A. B\n", "x.abs")
    assert isinstance(err, ParseError) and err.record_no == 1 and err.origin == "x.abs"
    data = (
        abs_path("hep-th/papers/9709/9709111.abs")
        .read_bytes()
        .replace(b"arXiv:hep-th/9709111", b"arXiv:nonsense")
    )
    (err,) = parse_all(arxiv_abs, data, "x.abs")
    assert isinstance(err, ParseError) and "no arXiv id" in str(err)


# -- bulk snapshot ------------------------------------------------------------------------------


def snapshot_line(path: Path) -> bytes:
    """Kaggle's snapshot shape filled from a real .abs file (test-side conversion)."""
    f = read_abs_fields(path)
    authors = " ".join(f["Authors"].split())
    parsed = []
    for name in re.split(r",\s*|\s+and\s+", re.sub(r"\([^)]*\)", "", authors)):
        if name.strip():
            *given, family = name.split()
            parsed.append([family, " ".join(given), ""])
    obj = {
        "id": f["arXiv"],
        "submitter": f["From"].split("<")[0].strip() or None,
        "authors": f["Authors"],
        "title": f["Title"],
        "comments": f.get("Comments"),
        "journal-ref": f.get("Journal-ref"),
        "doi": f.get("DOI"),
        "report-no": f.get("Report-no"),
        "categories": f["Categories"],
        "license": f.get("License"),
        "abstract": f["abstract"],
        "versions": [{"version": f"v{i}", "created": d} for i, (d, _) in enumerate(f["dates"], 1)],
        "update_date": "2008-11-13",
        "authors_parsed": parsed,
    }
    return orjson.dumps(obj)


def snapshot_sample() -> bytes:
    paths = [abs_path(f"arxiv/papers/0704/0704.{n:04d}.abs") for n in range(1, 11)]
    paths.append(abs_path("hep-th/papers/9709/9709111.abs"))
    return b"\n".join(snapshot_line(p) for p in paths) + b"\n"


def test_snapshot_lines() -> None:
    data = snapshot_sample()
    assert detect(data[:65536], "arxiv-metadata-oai-snapshot.json").NAME == "arxiv-snapshot"
    recs = records(parse_all(arxiv_snapshot, data))
    assert [r.key for r in recs][:3] == ["arxiv:0704.0001", "arxiv:0704.0002", "arxiv:0704.0003"]
    assert len(recs) == 11
    r = recs[0]
    assert [(v.version, v.date) for v in r.versions] == [
        ("v1", "2007-04-02T19:18:42Z"),
        ("v2", "2007-07-24T20:10:27Z"),
    ]
    assert r.submitted == "2007-04-02T19:18:42Z" and r.updated == "2007-07-24T20:10:27Z"
    assert [(a.name, a.given, a.family) for a in r.authors] == [
        ("C. Bal\\'azs", "C.", "Bal\\'azs"),
        ("E. L. Berger", "E. L.", "Berger"),
        ("P. M. Nadolsky", "P. M.", "Nadolsky"),
        ("C.-P. Yuan", "C.-P.", "Yuan"),
    ]
    assert r.categories == ["hep-ph"] and r.doi == "10.1103/PhysRevD.76.013009"
    assert r.journal_ref == "Phys.Rev.D76:013009,2007"
    assert r.extra == {
        "update_date": "2008-11-13",
        "submitter": "Pavel Nadolsky",
        "report_no": "ANL-HEP-PR-07-12",
    }
    assert r.raw == data.split(b"\n")[0]
    old = recs[-1]
    assert old.key == "arxiv:hep-th/9709111" and old.updated == "1997-11-03T19:27:30Z"


def test_snapshot_without_authors_parsed_splits_the_line() -> None:
    line = orjson.loads(snapshot_line(abs_path("hep-th/papers/9709/9709111.abs")))
    del line["authors_parsed"]
    (r,) = records(parse_all(arxiv_snapshot, orjson.dumps(line)))
    assert [(a.name, a.affiliations) for a in r.authors][0] == ("Andrea Brignole", ["CERN-TH"])


def test_snapshot_bad_lines_are_numbered() -> None:
    good = snapshot_sample().split(b"\n")
    bad_type = orjson.loads(good[2])
    bad_type["versions"] = "v1"
    lines = [
        good[0],
        good[1][:50],  # truncated JSON
        orjson.dumps(bad_type),  # wrong type
        good[3].replace(b'"title":"', b'"title":"\xe9'),  # Latin-1 byte: not UTF-8
        good[4],
    ]
    out = parse_all(arxiv_snapshot, b"\n".join(lines), "snap.jsonl")
    assert [type(o).__name__ for o in out] == [
        "SourceRecord",
        "ParseError",
        "ParseError",
        "ParseError",
        "SourceRecord",
    ]
    assert [o.record_no for o in out if isinstance(o, ParseError)] == [2, 3, 4]
    assert all(o.origin == "snap.jsonl" for o in out if isinstance(o, ParseError))


# -- daily feed ---------------------------------------------------------------------------------


def test_feed_first_2000_lines() -> None:
    data = feed_head(2000)
    assert detect(data[:65536], "feed.jsonl").NAME == "arxiv-feed"
    recs = records(parse_all(arxiv_feed, data))
    assert len(recs) == 2000
    r = recs[0]
    assert r.key == "arxiv:2503.11677" and r.url == "https://arxiv.org/abs/2503.11677"
    assert r.title == (
        "Simulation of prosthetic vision with PRIMA system and enhancement of face representation"
    )
    assert [a.name for a in r.authors] == [
        "Jungyeon Park",
        "Anna Kochnev Goldstein",
        "Yueming Zhou",
        "Nathan Jensen",
        "Daniel Palanker",
    ]
    assert r.categories == ["cs.HC", "cs.CV"] and r.comments is None
    assert r.feed_date == "2025-03-18" and r.extra["pdf"] == "https://arxiv.org/pdf/2503.11677"
    assert r.abstract is not None
    assert r.abstract.startswith(
        "Objective. Patients implanted with the PRIMA photovoltaic subretinal\n"
    )
    assert r.raw == data.split(b"\n")[0]
    assert recs[1].key == "arxiv:2503.11685" and recs[1].categories == ["cs.AR", "cs.CV", "eess.IV"]
    assert all(rec.feed_date and rec.categories and rec.abstract for rec in recs)
    for rec in recs:
        normalize.finish(rec)


def test_feed_msc_and_acm_codes_are_kept_as_given() -> None:
    recs = {r.source_id: r for r in records(parse_all(arxiv_feed, feed_head(100)))}
    r = recs["2503.11954"]  # line 28 of the feed
    assert r.categories == [
        "eess.IV",
        "cs.AI",
        "cs.CV",
        "cs.IT",
        "cs.LG",
        "math.IT",
        "94A29, 94A08, 94B05, 68T01, 68P30",
        "I.4.2; E.4; I.2.10; I.5.4; I.5.1; I.4.1",
    ]
    assert recs["2503.12180"].categories == ["cs.RO", "cs.CV", "68T45"]


def test_feed_cate_shape() -> None:
    with open_feed() as fh:
        # the first line of that shape with a comment
        line = next(x for x in fh if b'"cate"' in x and b'"comment": null' not in x)
    (r,) = records(parse_all(arxiv_feed, line))
    d = orjson.loads(line)
    assert r.source_id == d["id"] == "2506.05590"
    assert r.categories == [d["cate"]] == ["stat.ML"]
    assert r.extra["pdf"] == d["url"] == "http://arxiv.org/pdf/2506.05590v1"
    assert r.comments == "42 Pages, 13 figures, 3 tables" and r.feed_date == "2025-06-09"


def test_feed_bad_lines() -> None:
    lines = feed_head(3).split(b"\n")[:3]
    d = orjson.loads(lines[1])
    d["authors"] = "Omkar Kokane"
    out = parse_all(
        arxiv_feed, b"\n".join([lines[0], b"{not json", orjson.dumps(d), lines[2]]), "f"
    )
    assert [o.record_no if isinstance(o, ParseError) else o.key for o in out] == [
        "arxiv:2503.11677",
        2,
        3,
        records(parse_all(arxiv_feed, lines[2]))[0].key,
    ]


def test_json_sniffers_tell_the_shapes_apart() -> None:
    feed = feed_head(3)
    snap = snapshot_sample()
    assert arxiv_feed.sniff(feed, "x") and not arxiv_snapshot.sniff(feed, "x")
    assert arxiv_snapshot.sniff(snap, "x") and not arxiv_feed.sniff(snap, "x")
    others = [
        shared_file(rel)
        for rel in (
            "openreview/papers.jsonl",
            "openreview/signatures.jsonl",
            "openreview/api-v1-notes.json",
            "semanticscholar/Paper.json",
            "crossref/test-works/test_works_with_one_id.yaml",
            "dblp-acm/ACM.csv",
            "arxiv/taxonomy/arXiv_categories.json",
        )
    ]
    for path in others:
        head = path.read_bytes()[:65536]
        for parser in (arxiv_feed, arxiv_snapshot, arxiv_abs, arxiv_oai, arxiv_atom):
            assert not parser.sniff(head, path.name), (parser.NAME, path)
    # the XML sniffers do not claim each other's documents, nor the JSON ones
    oai, atom = oai_body(LISTRECORDS), atom_body("q_testing_s0_m10_bc5a6c384fe9.json")
    assert detect(oai[:65536], "x").NAME == "arxiv-oai"
    assert detect(atom[:65536], "x").NAME == "arxiv-atom"
    for parser in (arxiv_feed, arxiv_snapshot, arxiv_abs):
        assert not parser.sniff(oai, "x") and not parser.sniff(atom, "x"), parser.NAME
