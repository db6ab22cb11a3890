"""The non-arXiv parsers on real captures (OpenReview v1, papercopilot, Crossref and
Semantic Scholar cassettes, DBLP–ACM CSVs) and on small hand-written files for what no
capture has (OpenReview v2, OpenAlex, BibTeX accents, malformed inputs).

Expected values are either read from the input with an independent path (plain json /
csv / the cassette) or, where a single value is named, checked by hand against the file.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import html
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassettes import bodies, exchanges
from conftest import DATA, feed_file, shared_file
from paperdesk import normalize, sources
from paperdesk.errors import ParseError, UnknownFormatError
from paperdesk.model import SourceRecord
from paperdesk.normalize import LIMITS
from paperdesk.sources import (
    bibtex,
    crossref,
    generic,
    openalex,
    openreview,
    papercopilot,
    semanticscholar,
)

MINE = {
    "openreview",
    "papercopilot",
    "crossref",
    "openalex",
    "semanticscholar",
    "bibtex",
    "generic",
}


def run(parser, data: bytes, origin: str = "input") -> list[SourceRecord | ParseError]:
    return list(parser.parse(io.BytesIO(data), origin))


def records(out: list[SourceRecord | ParseError]) -> list[SourceRecord]:
    bad = [o for o in out if isinstance(o, ParseError)]
    assert not bad, bad[:3]
    return [normalize.finish(o) for o in out if isinstance(o, SourceRecord)]


def detected(path: Path) -> str:
    with path.open("rb") as fh:
        return sources.detect(fh.read(64 * 1024), path.name).NAME


def ms_iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- OpenReview ------------------------------------------------------------------------


def test_openreview_v1_real_notes_only_submissions_become_records() -> None:
    path = shared_file("openreview/api-v1-notes.json")
    data = path.read_bytes()
    doc = json.loads(data)
    subs = [s for venue in doc for s in venue["submissions"]]
    replies = [n for s in subs for n in s["notes"]]
    assert replies and all(n["forum"] != n["id"] for n in replies)

    recs = records(run(openreview, data, str(path)))
    assert [r.key for r in recs] == [f"openreview:{s['forum']}" for s in subs]
    first = recs[0]
    assert first.key == "openreview:HkghWScuoQ"
    assert first.title == "Targeted Dropout"
    assert [a.name for a in first.authors] == [
        "Aidan N. Gomez", "Ivan Zhang", "Kevin Swersky", "Yarin Gal", "Geoffrey E. Hinton",
    ]  # fmt: skip
    assert first.extra["authorids"] == subs[0]["content"]["authorids"]
    assert first.url == "https://openreview.net/forum?id=HkghWScuoQ"
    assert first.submitted == ms_iso(subs[0]["cdate"]) == "2018-10-20T11:44:03Z"
    assert first.updated == ms_iso(subs[0]["tmdate"])
    assert first.year == 2018
    assert first.extra["venueid"] == "NIPS.cc/2018/Workshop/CDNNRIA"
    assert first.extra["pdf"].startswith("https://openreview.net/pdf/")
    assert len(first.extra["revisions"]) == len(subs[0]["revisions"])
    assert recs[1].extra["tldr"] == subs[1]["content"]["TL;DR"]
    assert all(r.abstract == s["content"]["abstract"] for r, s in zip(recs, subs, strict=True))
    # raw is the submission note itself (with its nested replies, as received)
    assert json.loads(first.raw)["id"] == "HkghWScuoQ"
    assert first.raw_format == "openreview"
    assert detected(path) == "openreview"


def test_openreview_v1_as_json_lines_and_api_response_shape(tmp_path: Path) -> None:
    doc = json.loads(shared_file("openreview/api-v1-notes.json").read_bytes())
    notes = []
    for s in doc[0]["submissions"]:
        notes.append({k: v for k, v in s.items() if k not in ("notes", "revisions")})
        notes.extend(s["notes"])  # replies, flattened as the API lists them
    lines = b"\n".join(json.dumps(n).encode() for n in notes) + b"\n"
    from_lines = records(run(openreview, lines))
    from_api = records(run(openreview, json.dumps({"notes": notes, "count": len(notes)}).encode()))
    want = ["openreview:HkghWScuoQ", "openreview:r1eLk2mKiX"]
    assert [r.key for r in from_lines] == [r.key for r in from_api] == want
    # a JSON-lines record keeps its line byte for byte
    assert from_lines[0].raw == json.dumps(notes[0]).encode()


def test_openreview_v2_hand_written_notes() -> None:
    path = DATA / "openreview" / "api-v2-notes.json"
    recs = records(run(openreview, path.read_bytes(), str(path)))
    assert [r.key for r in recs] == ["openreview:05T81ScPFb", "openreview:k9QvT2mWbN"]
    flash = recs[0]
    assert flash.title.startswith("Flash3D: Feed-Forward")
    assert [a.name for a in flash.authors][0] == "Stanislaw Szymanowicz"
    assert flash.extra["authorids"][2] == "~Chuanxia_Zheng1"
    assert flash.keywords == ["Novel View Synthesis", "3D Gaussian Splatting"]
    assert flash.venue == "3DV 2025 Poster"
    assert flash.extra["venueid"] == "3DV/2025/Conference"
    assert flash.published == ms_iso(1730419200000) == "2024-11-01T00:00:00Z"
    assert flash.license == "CC BY 4.0"
    assert flash.extra["pdf"].startswith("https://openreview.net/pdf/0a1b")
    assert recs[1].abstract is None and recs[1].title  # abstract-less paper still kept
    assert detected(path) == "openreview"


# -- papercopilot ----------------------------------------------------------------------


def test_papercopilot_real_list_keys_on_the_forum_id() -> None:
    path = shared_file("openreview/papers.jsonl")
    lines = [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    with path.open("rb") as fh:
        recs = records(list(papercopilot.parse(fh, str(path))))
    assert len(recs) == len(lines) == 3569
    assert [r.key for r in recs] == [f"openreview:{x['openreview_id']}" for x in lines]
    r0 = recs[0]
    assert r0.key == "openreview:05T81ScPFb"
    assert r0.title == lines[0]["title"]
    assert [a.name for a in r0.authors] == lines[0]["authors"]
    assert r0.keywords == [
        "Novel View Synthesis",
        "3D Gaussian Splatting",
        "Monocular 3D Reconstruction",
    ]
    assert r0.venue == "3dv2025" and r0.year == 2025
    assert r0.ids == {"papercopilot": "3dv2025:05T81ScPFb", "openreview": "05T81ScPFb"}
    assert r0.raw_format == "papercopilot" and r0.raw == path.read_bytes().splitlines()[0]
    no_abstract = [r for r, x in zip(recs, lines, strict=True) if not x["abstract"]]
    assert no_abstract and all(r.abstract is None and r.title for r in no_abstract)
    assert detected(path) == "papercopilot"
    # the same paper from OpenReview's API lands on the same key
    v2 = records(run(openreview, (DATA / "openreview" / "api-v2-notes.json").read_bytes()))
    assert v2[0].key == r0.key


def test_papercopilot_signatures_file_is_not_taken_for_papers() -> None:
    path = shared_file("openreview/signatures.jsonl")
    with path.open("rb") as fh:
        head = fh.read(64 * 1024)
    assert not papercopilot.sniff(head, path.name)
    assert not openreview.sniff(head, path.name)
    with pytest.raises(UnknownFormatError):
        sources.detect(head, path.name)


# -- Crossref --------------------------------------------------------------------------


def crossref_cassettes() -> list[Path]:
    root = shared_file("crossref")
    return sorted(root.rglob("*.yaml"))


def test_crossref_single_work_from_cassette() -> None:
    path = shared_file("crossref/test-works/test_works_with_one_id.yaml")
    (body,) = list(bodies(path))
    msg = json.loads(body)["message"]
    (rec,) = records(run(crossref, body, str(path)))
    assert rec.key == "doi:10.1371/journal.pone.0033693" == f"doi:{msg['DOI'].lower()}"
    assert rec.url == "https://doi.org/10.1371/journal.pone.0033693"
    assert rec.title.startswith("Methylphenidate Exposure Induces Dopamine Neuron Loss")
    assert rec.venue == "PLoS ONE"
    assert rec.published == "2012-03-21" and rec.year == 2012
    assert rec.journal_ref == "PLoS ONE 7(3):e33693"
    assert [a.name for a in rec.authors] == [f"{a['given']} {a['family']}" for a in msg["author"]]
    assert rec.authors[0].family == "Sadasivan"
    assert rec.extra["type"] == "journal-article"
    assert json.loads(rec.raw) == msg  # the work, cut out of its response wrapper


def test_crossref_every_works_response_parses_and_others_are_refused() -> None:
    seen_works = refused = 0
    with_orcid = with_jats = 0
    for path in crossref_cassettes():
        for ex in exchanges(path):
            if ex.status != 200 or "json" not in ex.content_type:
                continue
            doc = json.loads(ex.body)
            mtype = doc.get("message-type")
            if mtype in ("work", "work-list"):
                msg = doc["message"]
                want = msg["items"] if mtype == "work-list" else [msg]
                got = records(run(crossref, ex.body, path.name))
                assert [r.doi for r in got] == [w["DOI"].lower() for w in want]
                assert crossref.sniff(ex.body[:65536], path.name)
                seen_works += len(got)
                with_orcid += sum(1 for r in got for a in r.authors if a.orcid)
                for r in got:
                    if "abstract_jats" in r.extra:
                        with_jats += 1
                        assert "<jats:" not in (r.abstract or "")
            elif mtype is not None:
                assert not crossref.sniff(ex.body[:65536], path.name)
                with pytest.raises(ParseError, match="holds no works"):
                    run(crossref, ex.body, path.name)
                refused += 1
    assert seen_works > 500 and refused > 10 and with_orcid > 100 and with_jats > 50


def test_crossref_jats_abstract_becomes_text_and_original_is_kept() -> None:
    path = shared_file("crossref/test-cursor/test_cursor.yaml")
    recs = [r for body in bodies(path) for r in records(run(crossref, body))]
    rec = next(r for r in recs if r.doi == "10.59350/7mtwq-q3661")
    assert rec.extra["abstract_jats"].startswith("<jats:p>In addition to this Swing-based")
    assert rec.abstract.startswith("In addition to this Swing-based screenshot of JChemPaint")
    assert rec.authors[0].orcid == "0000-0001-7542-0286"
    assert rec.license == "https://creativecommons.org/licenses/by/4.0/legalcode"
    assert rec.submitted == "2008-06-18"  # `posted`: a preprint / blog post


def test_crossref_content_negotiation_citeproc_and_bibtex() -> None:
    path = shared_file(
        "crossref/test-content_negotation/test_content_negotiation_citeproc_json.yaml"
    )
    (body,) = list(bodies(path, json_only=False))
    assert crossref.sniff(body[:65536], "x.json")
    (rec,) = records(run(crossref, body))
    assert rec.key == "doi:10.1126/science.169.3946.635"
    assert rec.venue == "Science" and rec.year == 1970

    path = shared_file("crossref/test-content_negotation/test_content_negotiation.yaml")
    bib = next(ex.body for ex in exchanges(path) if "x-bibtex" in ex.content_type)
    assert sources.detect(bib, "response").NAME == "bibtex"
    (rec,) = records(run(bibtex, bib))
    assert rec.key == "bibtex:Frank_1970"
    assert rec.doi == "10.1126/science.169.3946.635"
    assert rec.published == "1970-08" and rec.venue == "Science"
    assert [(a.given, a.family) for a in rec.authors] == [("Henry S.", "Frank")]


# -- OpenAlex --------------------------------------------------------------------------


def test_openalex_page_rebuilds_abstracts_from_the_inverted_index(tmp_path: Path) -> None:
    path = DATA / "openalex" / "works-page.json"
    page = json.loads(path.read_bytes())
    recs = records(run(openalex, path.read_bytes(), str(path)))
    assert [r.key for r in recs] == ["openalex:W2741809807", "openalex:W2963403868"]
    oa, attn = recs
    assert oa.abstract.startswith("Despite growing interest in Open Access (OA) to scholarly")
    assert oa.abstract.endswith("determines OA status for 67 million articles.")
    # every word of the index sits at its positions in the rebuilt text
    words = oa.abstract.split(" ")
    for word, positions in page["results"][0]["abstract_inverted_index"].items():
        assert all(words[p] == word for p in positions)
    assert oa.doi == "10.7717/peerj.4375"
    assert oa.ids == {"openalex": "W2741809807", "pmid": "29456894", "pmcid": "PMC5815332",
                      "mag": "2741809807"}  # fmt: skip
    assert oa.authors[0].orcid == "0000-0003-1613-5981"
    assert oa.authors[0].affiliations == ["Impactstory"]
    assert oa.authors[1].affiliations == ["Impactstory, Sanford, NC, USA"]  # raw string fallback
    assert oa.venue == "PeerJ" and oa.year == 2018 and oa.published == "2018-02-13"
    assert oa.categories[0] == "scientometrics and bibliometrics research"
    assert attn.arxiv_id == "1706.03762" and attn.doi is None
    assert attn.categories == ["Computer science", "Transformer"]  # concepts by score
    assert detected(path) == "openalex"
    # the same works one a line (the snapshot's shape)
    lines = b"\n".join(json.dumps(w).encode() for w in page["results"])
    assert [r.key for r in records(run(openalex, lines))] == [r.key for r in recs]


def test_openalex_hostile_inverted_index_is_a_record_error() -> None:
    work = {"id": "https://openalex.org/W1", "abstract_inverted_index": {"x": [10**12]}}
    (err,) = run(openalex, json.dumps(work).encode(), "w.json")
    assert isinstance(err, ParseError) and "implausibly large" in err.message
    assert openalex.rebuild_abstract({"b": [1], "a": [0, 3]}) == "a b a"


# -- Semantic Scholar ------------------------------------------------------------------


def test_semanticscholar_paper_with_external_ids() -> None:
    path = shared_file("semanticscholar/Paper.json")
    data = path.read_bytes()
    paper = json.loads(data)
    (rec,) = records(run(semanticscholar, data, str(path)))
    assert rec.key == "s2:2d5673caa9e6af3a7b82a43f19ee920992db07ad"
    assert rec.title == "Computing Machinery and Intelligence"
    assert rec.doi == "10.1093/mind/lix.236.433"
    assert rec.ids["dblp"] == "journals/x/Turing50" and rec.ids["corpusid"] == "14636783"
    assert rec.year == 1950 and rec.published == "1950-10-01"
    assert rec.journal_ref == "Mind LIX, 433-460"
    assert [a.name for a in rec.authors] == ["A. Turing"]
    assert rec.categories == paper["fieldsOfStudy"]
    # 2.7 MB with 1000 nested citations: those are cut from raw to fit the store's limit
    assert len(data) > LIMITS["raw"] >= len(rec.raw)
    assert rec.extra["raw_trimmed"] == ["citations", "references", "embedding"]
    assert json.loads(rec.raw)["paperId"] == paper["paperId"]
    assert detected(path) == "semanticscholar"


def test_semanticscholar_arxiv_ids_from_real_citing_papers() -> None:
    paper = json.loads(shared_file("semanticscholar/Paper.json").read_bytes())
    cites = paper["citations"]
    recs = records(run(semanticscholar, json.dumps({"data": cites}).encode()))
    assert len(recs) == len(cites)
    by_key = {r.key: r for r in recs}
    with_arxiv = [c for c in cites if (c.get("externalIds") or {}).get("ArXiv")]
    assert len(with_arxiv) > 100
    for c in with_arxiv:
        assert by_key[f"s2:{c['paperId']}"].arxiv_id == c["externalIds"]["ArXiv"]


@pytest.mark.parametrize(
    ("cassette", "count"),
    [
        ("test_search_paper.yaml", 100),
        ("test_get_papers_not_found_warning.yaml", 3),  # one null in the batch
        ("test_get_recommended_papers.yaml", 100),
        ("test_empty_paginated_results.yaml", 0),
    ],
)
def test_semanticscholar_cassette_pages(cassette: str, count: int) -> None:
    path = shared_file(f"semanticscholar/{cassette}")
    (body,) = list(bodies(path))
    doc = json.loads(body)
    recs = records(run(semanticscholar, body, cassette))
    assert len(recs) == count
    items = doc if isinstance(doc, list) else doc.get("data") or doc.get("recommendedPapers") or []
    assert [r.source_id for r in recs] == [i["paperId"] for i in items if i]


def test_semanticscholar_unresolved_references_are_skipped() -> None:
    path = shared_file("semanticscholar/test_get_paper_references.yaml")
    total = resolved = 0
    for body in bodies(path, ok_only=False):
        data = json.loads(body)["data"]
        total += len(data)
        resolved += sum(1 for d in data if d["citedPaper"]["paperId"])
        got = records(run(semanticscholar, body))
        assert [r.source_id for r in got] == [
            d["citedPaper"]["paperId"] for d in data if d["citedPaper"]["paperId"]
        ]
    assert total > resolved > 0


def test_semanticscholar_author_search_is_not_papers() -> None:
    path = shared_file("semanticscholar/test_search_author.yaml")
    (body,) = list(bodies(path))
    assert not semanticscholar.sniff(body[:65536], path.name)
    out = run(semanticscholar, body)
    assert out and all(isinstance(o, ParseError) for o in out)


# -- BibTeX ----------------------------------------------------------------------------


def test_bibtex_latex_accents_decoded_raw_kept() -> None:
    path = DATA / "bibtex" / "accents.bib"
    text = path.read_text()
    recs = records(run(bibtex, path.read_bytes(), str(path)))
    assert [r.key for r in recs] == ["bibtex:goedel1931", "bibtex:mezard2002", "bibtex:erdos2024"]
    goedel, mezard, erdos = recs
    assert goedel.title.startswith("Über formal unentscheidbare Sätze der Principia Mathematica")
    assert goedel.venue == "Monatshefte für Mathematik und Physik"
    assert goedel.doi == "10.1007/bf01700692"
    assert (goedel.authors[0].given, goedel.authors[0].family) == ("Kurt", "Gödel")
    assert goedel.raw.decode().startswith("@article{goedel1931,")
    assert goedel.raw.decode() in text  # the entry's text exactly as written
    assert [a.display for a in mezard.authors] == [
        "Marc Mézard",
        "Giorgio Parisi",
        "Riccardo Zecchina",
    ]
    assert mezard.published == "2002-08" and mezard.keywords == [
        "satisfiability",
        "statistical physics",
    ]
    assert "$K$" in mezard.abstract  # abstracts keep their LaTeX for display
    assert [a.name for a in erdos.authors] == [
        "Paul Erdős", "François Châtelet", "Émile Borel", "Charles-Jean de la Vallée Poussin",
    ]  # fmt: skip
    assert erdos.authors[3].family == "de la Vallée Poussin"
    assert erdos.title == "A 50% Better Bound on α-Mixing"  # `%` is not a comment in .bib
    assert erdos.arxiv_id == "2401.01234" and erdos.categories == ["math.PR"]
    assert erdos.source == "bibtex"
    assert erdos.venue == "Journal of the American Mathematical Society"  # @string resolved
    assert detected(path) == "bibtex"


def test_bibtex_malformed_entries_are_numbered() -> None:
    path = DATA / "malformed" / "broken.bib"
    out = run(bibtex, path.read_bytes(), str(path))
    kinds = [(type(o).__name__, getattr(o, "record_no", None) or o.key) for o in out]
    assert kinds == [
        ("SourceRecord", "bibtex:good1"),
        ("ParseError", 2),
        ("SourceRecord", "bibtex:good3"),
        ("ParseError", 4),
    ]
    assert "line 7" in out[1].message and "duplicate citation key 'good3'" in out[3].message
    assert str(out[1]).startswith(f"{path}, record 2:")


def test_bibtex_latin1_file_falls_back_and_says_so() -> None:
    data = "@article{k1, author={M\u00fcller, J\u00fcrgen}, title={Caf\u00e9}}".encode("latin-1")
    (rec,) = records(run(bibtex, data))
    assert rec.authors[0].name == "Jürgen Müller" and rec.title == "Café"
    assert rec.extra["encoding"] == "latin-1" and rec.raw == data


# -- generic JSONL / CSV ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["DBLP2.csv", "ACM.csv"])
def test_generic_dblp_acm_csv(name: str) -> None:
    path = shared_file(f"dblp-acm/{name}")
    raw = path.read_bytes()
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8"), newline="")))
    raw_lines = {
        row["id"]: line for row, line in zip(rows, raw.splitlines(keepends=True)[1:], strict=True)
    }
    with path.open("rb") as fh:
        recs = records(list(generic.parse(fh, str(path))))
    source = name.removesuffix(".csv").lower()
    assert [r.key for r in recs] == [f"{source}:{row['id']}" for row in rows]
    for r, row in zip(recs, rows, strict=True):
        assert r.title == html.unescape(row["title"]).strip()
        assert r.venue == (html.unescape(row["venue"]).strip() or None)
        assert r.year == int(row["year"])
        names = html.unescape(" ".join(row["authors"].split()))
        assert ", ".join(a.name for a in r.authors) == names
        assert r.raw.endswith(raw_lines[row["id"]])
    assert detected(path) == "generic"


def test_generic_dblp_acm_matches_join_and_unicode_names() -> None:
    dblp = {
        r.source_id: r
        for r in records(run(generic, shared_file("dblp-acm/DBLP2.csv").read_bytes(), "DBLP2.csv"))
    }
    acm = {
        r.source_id: r
        for r in records(run(generic, shared_file("dblp-acm/ACM.csv").read_bytes(), "ACM.csv"))
    }
    mapping = list(
        csv.DictReader(io.StringIO(shared_file("dblp-acm/DBLP-ACM_perfectMapping.csv").read_text()))
    )
    assert len(mapping) == 1131
    assert all(m["idDBLP"] in dblp and m["idACM"] in acm for m in mapping)
    sander = dblp["conf/vldb/ZhouS03"]
    assert [a.name for a in sander.authors] == ["Jörg Sander", "Jianjun Zhou"]
    # ACM writes HTML character references; they are decoded before splitting on `;`
    buechner = [r for r in acm.values() if "B&#252;chner" in r.raw.decode()]
    assert buechner and all(any(a.name == "Alex G. Büchner" for a in r.authors) for r in buechner)
    with pytest.raises(ParseError, match="none of the known columns"):
        run(generic, shared_file("dblp-acm/DBLP-ACM_perfectMapping.csv").read_bytes(), "map.csv")


def test_generic_jsonl_defaults_and_shapes() -> None:
    path = DATA / "generic" / "mylist.jsonl"
    recs = records(run(generic, path.read_bytes(), str(path)))
    assert [r.key for r in recs] == ["mylist:42", "mylist:43", "mylist:7", "mylist:4"]
    r42, r43, r7, r4 = recs
    assert [a.name for a in r42.authors] == ["Jane Doe", "John Smith"]
    assert r42.year == 2023 and r42.categories == ["cs.IR", "cs.LG"]
    assert r42.doi == "10.1145/3583780.3614999" and r42.extra == {"pages": "12-21"}
    assert r43.title is None and r43.authors == [] and r43.abstract_text
    assert r43.published == "2024-05-01" and r43.year == 2024
    assert r7.arxiv_id == "2401.01234" and r7.authors[1].orcid == "0000-0002-1825-0097"
    assert [(a.given, a.family) for a in r4.authors] == [("Hans", "Müller"), ("Jo", "Smith")]
    assert r4.raw == path.read_bytes().splitlines()[3]
    assert detected(path) == "generic"


def test_generic_csv_multiline_fields_and_exact_raw() -> None:
    path = DATA / "generic" / "notes.csv"
    data = path.read_bytes()
    (rec,) = records(run(generic, data, str(path)))
    assert rec.key == "notes:1"  # no source: file stem; no id: row number
    assert rec.title == "Multi-line\nabstract row"
    assert "\u2028" in rec.abstract and rec.abstract.startswith("First line.\r\nSecond line")
    assert rec.categories == ["cs.CL", "cs.AI"] and rec.year == 2025
    assert rec.raw == data  # header + the row's lines, byte for byte


def test_generic_csv_wrong_encoding_and_bad_rows() -> None:
    path = DATA / "malformed" / "latin1.csv"
    out = run(generic, path.read_bytes(), str(path))
    ok = [o for o in out if isinstance(o, SourceRecord)]
    errs = [o for o in out if isinstance(o, ParseError)]
    assert [r.key for r in ok] == ["latin1:1", "latin1:2"]
    assert ok[0].title == "Café culture" and ok[0].extra["encoding_fallback"] == "cp1252"
    assert ok[0].authors[0].name == "Müller, Hans"
    assert ok[0].raw.endswith(b'1,Caf\xe9 culture,"M\xfcller, Hans; Smith, Jo",2001\n')
    assert [(e.record_no, e.origin) for e in errs] == [(3, str(path))]
    assert "5 fields" in errs[0].message


def test_generic_bad_json_lines_named_by_line() -> None:
    path = DATA / "malformed" / "bad-lines.jsonl"
    out = run(generic, path.read_bytes(), str(path))
    summary = [(o.key if isinstance(o, SourceRecord) else o.record_no) for o in out]
    assert summary == ["mylist:1", 2, "mylist:3", 5]
    assert "not valid JSON" in out[1].message


class _Pipe(io.RawIOBase):
    """A non-seekable stream, like stdin or a socket."""

    def __init__(self, data: bytes):
        self._data = data

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        n = min(len(b), len(self._data), 7)  # short reads on purpose
        b[:n] = self._data[:n]
        self._data = self._data[n:]
        return n


@pytest.mark.parametrize(
    ("parser", "rel"),
    [
        (generic, "generic/notes.csv"),
        (generic, "generic/mylist.jsonl"),
        (openalex, "openalex/works-page.json"),
        (bibtex, "bibtex/accents.bib"),
    ],
)
def test_parsers_read_pipes_and_gzip_streams(parser, rel: str) -> None:  # type: ignore[no-untyped-def]
    data = (DATA / rel).read_bytes()
    want = [r.key for r in records(run(parser, data, rel))]
    piped = records(list(parser.parse(io.BufferedReader(_Pipe(data)), rel)))
    gz = gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data)))
    zipped = records(list(parser.parse(gz, rel)))  # type: ignore[arg-type]
    assert [r.key for r in piped] == [r.key for r in zipped] == want


# -- detection: every real input goes to its own parser --------------------------------


def _arxiv_heads() -> Iterator[tuple[str, bytes]]:
    feed = feed_file()
    with feed.open("rb") as fh:
        yield feed.name, fh.read(64 * 1024)
    for rel in ("arxiv/abs", "arxiv/api-atom"):
        for p in sorted(shared_file(rel).rglob("*.*"))[:5]:
            yield p.name, p.read_bytes()[: 64 * 1024]


def test_my_sniffers_leave_arxiv_inputs_alone() -> None:
    for name, head in _arxiv_heads():
        for parser in (openreview, papercopilot, crossref, openalex, semanticscholar, bibtex):
            assert not parser.sniff(head, name), (parser.NAME, name)


def test_detect_sends_each_capture_to_its_parser() -> None:
    cases = {
        "openreview/api-v1-notes.json": "openreview",
        "openreview/papers.jsonl": "papercopilot",
        "semanticscholar/Paper.json": "semanticscholar",
        "semanticscholar/Author.json": "semanticscholar",
        "dblp-acm/DBLP2.csv": "generic",
    }
    for rel, name in cases.items():
        assert detected(shared_file(rel)) == name, rel
    for path in crossref_cassettes()[:40]:
        for body in bodies(path):
            got = (
                sources.detect(body[:65536], "response.json").NAME
                if crossref.sniff(body[:65536], "")
                else None
            )
            if got:
                assert got == "crossref", path
    assert MINE <= set(sources.PARSERS)


def test_get_imports_only_the_parser_asked_for() -> None:
    """An ingest worker asks for one parser by name and must not pay for importing the
    other eleven (lxml, bibtexparser …); every name still gives its own parser."""
    import subprocess
    import sys

    code = (
        "import sys; from paperdesk import sources; p = sources.get('arxiv-feed'); "
        "print(p.NAME, sorted(m for m in sys.modules if m.startswith('paperdesk.sources.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split(" ", 1) == [
        "arxiv-feed",
        "['paperdesk.sources._arxiv_common', 'paperdesk.sources._jsonio', "
        "'paperdesk.sources.arxiv_feed']\n",
    ]
    for name, parser in sources.PARSERS.items():
        assert sources.get(name) is parser
    with pytest.raises(UnknownFormatError, match="known: arxiv-abs"):
        sources.get("arxiv_feed")


def test_json_lines_with_a_broken_first_line_still_stream() -> None:
    data = b'{"id": "1", "title": broken\n\n{"id": "2", "title": "Fine"}\n'
    out = run(generic, data, "list.jsonl")
    assert isinstance(out[0], ParseError) and out[0].record_no == 1
    assert [o.key for o in out[1:]] == ["list:2"] and out[1].raw == b'{"id": "2", "title": "Fine"}'
    # a pretty-printed document whose first line opens it is still one document
    doc = b'[\n{"id": "9", "title": "Alone"}\n]\n'
    assert [r.key for r in records(run(generic, doc, "one.json"))] == ["one:9"]


def test_crossref_public_data_file_items_shape() -> None:
    path = shared_file("crossref/test-works/test_works_with_one_id.yaml")
    work = json.loads(next(bodies(path)))["message"]
    dump = json.dumps({"items": [work, work | {"DOI": "10.1371/JOURNAL.PONE.0000001"}]}).encode()
    assert sources.detect(dump[:65536], "0.json").NAME == "crossref"
    got = records(run(crossref, dump))
    assert [r.key for r in got] == [
        "doi:10.1371/journal.pone.0033693",
        "doi:10.1371/journal.pone.0000001",
    ]


def test_an_items_raw_payload_does_not_depend_on_its_page() -> None:
    """A re-harvest recognises unchanged notes by payload digest: a note must have the
    same raw bytes alone on a page and among others."""
    notes = json.loads((DATA / "openreview" / "api-v2-notes.json").read_bytes())["notes"]
    alone = records(run(openreview, json.dumps({"notes": notes[:1], "count": 1}).encode()))
    among = records(run(openreview, json.dumps({"notes": notes, "count": 3}, indent=2).encode()))
    assert alone[0].key == among[0].key and alone[0].raw == among[0].raw


def test_generic_csv_unclosed_quote_is_an_error_not_a_silent_merge() -> None:
    out = run(generic, b'id,title\n1,"never closed\n2,ok\n3,fine\n', "open.csv")
    assert len(out) == 1 and isinstance(out[0], ParseError)
    assert out[0].record_no == 1 and "ran over 3 lines" in out[0].message
