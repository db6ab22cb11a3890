"""Citation exports read back by real parsers — bibtexparser (BibTeX), rispy (RIS, the
format Zotero and EndNote import) and citeproc-py (CSL-JSON, formatted with a CSL style
with Python warnings turned into errors) — on every work of the store of every shape, on
the hostile record of #18 item 6 and on generated hostile text."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import bibtexparser
import pytest
import rispy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import shapes_store
from paperdesk import catalog
from paperdesk.export import (
    DERIVED_NOTE,
    cite_key,
    kind_of,
    to_bibtex,
    to_csl,
    to_ris,
    valid_arxiv_id,
)
from paperdesk.store import open_store

DATA = Path(__file__).parent / "data" / "shapes"
BIB_FIELDS = {"title", "author", "year", "date", "journal", "booktitle", "howpublished", "volume",
              "number", "pages", "publisher", "eprint", "archivePrefix", "eprinttype", "primaryClass", "doi",
              "url", "note"}
RIS_KEYS = {"type_of_reference", "title", "authors", "year", "date", "secondary_title", "custom3", "publisher",
            "volume", "number", "start_page", "doi", "name_of_database", "accession_number",
            "urls", "abstract", "keywords", "notes"}


def parse_bib(text: str) -> dict[str, Any]:
    lib = bibtexparser.parse_string(text)
    assert not lib.failed_blocks, text
    assert len(lib.entries) == 1 and not lib.strings and not lib.comments, text
    (entry,) = lib.entries
    assert set(entry.fields_dict) <= BIB_FIELDS, set(entry.fields_dict) - BIB_FIELDS
    return {"type": entry.entry_type, "key": entry.key, **{k: f.value for k, f in entry.fields_dict.items()}}


def parse_ris(text: str) -> dict[str, Any]:
    (rec,) = rispy.loads(text)
    assert "unknown_tag" not in rec, rec
    assert set(rec) <= RIS_KEYS, set(rec) - RIS_KEYS
    return rec


def cite_with_citeproc(item: dict[str, Any]) -> str:
    """Formats the item with citeproc-py's bundled style; any warning fails."""
    import citeproc
    from citeproc import (
        Citation,
        CitationItem,
        CitationStylesBibliography,
        CitationStylesStyle,
        formatter,
    )
    from citeproc.source.json import CiteProcJSON

    style_path = Path(citeproc.__file__).parent / "data" / "styles" / "harvard-cite-them-right.csl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = CiteProcJSON([json.loads(json.dumps(item))])
        bib = CitationStylesBibliography(CitationStylesStyle(str(style_path), validate=False), source, formatter.plain)
        bib.register(Citation([CitationItem(item["id"])]))
        return "".join(str(x) for x in bib.bibliography())


def check_all(work: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
    return parse_bib(to_bibtex(work)), parse_ris(to_ris(work)), to_csl(work), cite_with_citeproc(to_csl(work))


def feed_work(n: int) -> dict[str, Any]:
    d = json.loads((DATA / "feed.jsonl").read_text().splitlines()[n])
    return {
        "work_id": "W1", "title": d["title"], "year": int(d["feed_date"][:4]),
        "authors": [{"name": a} for a in d["authors"]], "arxiv_id": d["id"],
        "url": d["abs"], "abstract": d["summary"],
        "subjects": [{"code": c, "predicted": False} for c in d["categories"]],
        "records": [{"source": "arxiv", "categories": d["categories"]}],
    }


def test_preprints_are_misc_the_way_arxiv_writes_them() -> None:
    for n in (0, 1, 17, 33):
        work = feed_work(n)
        bib, ris, csl, cited = check_all(work)
        assert bib["type"] == "misc" and bib["key"] == cite_key(work)
        assert bib["eprint"] == work["arxiv_id"] and bib["archivePrefix"] == "arXiv"
        assert bib["eprinttype"] == "arXiv"
        assert bib["primaryClass"] == work["subjects"][0]["code"]
        assert bib["url"] == f"https://arxiv.org/abs/{work['arxiv_id']}"
        assert "journal" not in bib and bib["author"].count(" and ") == len(work["authors"]) - 1
        assert ris["type_of_reference"] == "GEN" and ris["accession_number"] == f"arXiv:{work['arxiv_id']}"
        assert len(ris["authors"]) == len(work["authors"])
        assert csl["type"] == "article" and csl["number"] == f"arXiv:{work['arxiv_id']}"
        assert csl["publisher"] == "arXiv" and "arXiv" in cited


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    db = shapes_store.build(tmp_path_factory.mktemp("export"), index=False)
    with open_store(db) as store:
        ids = [f"W{w}" for (w,) in store.conn.execute("SELECT DISTINCT work_id FROM work_records")]
        return [catalog.paper(store, w) for w in ids]


def test_every_work_of_every_shape_exports_and_parses(shapes: list[dict[str, Any]]) -> None:
    kinds: dict[str, set[str]] = {}
    for work in shapes:
        bib, ris, csl, cited = check_all(work)
        kinds.setdefault(kind_of(work)["kind"], set()).update(r["source"] for r in work["records"])
        assert bib["title"].strip("{}") and ris["title"] and csl["title"] and cited
        if work["display_title_from"] != "title":  # untitled: the derived title, said so
            assert bib["title"] == "{" + work["display_title"] + "}" and bib["note"] == DERIVED_NOTE
            assert ris["notes"] == [DERIVED_NOTE] and csl["note"].splitlines()[-1] == DERIVED_NOTE
    assert {"journal", "conference", "preprint", "other"} <= set(kinds), kinds
    assert "arxiv" in kinds["preprint"] and "openreview" in kinds["conference"]
    assert {"doi", "bibtex"} <= kinds["journal"]


def test_types_follow_what_the_work_is(shapes: list[dict[str, Any]]) -> None:
    by_type = {}
    for w in shapes:
        for r in w["records"]:
            by_type.setdefault((r["source"], r["type"]), w)
    journal = by_type[("doi", "journal-article")]
    assert parse_bib(to_bibtex(journal))["type"] == "article"
    assert parse_bib(to_bibtex(journal))["journal"] == journal["records"][0]["venue"]
    assert parse_ris(to_ris(journal))["type_of_reference"] == "JOUR"
    assert to_csl(journal)["type"] == "article-journal" and to_csl(journal)["container-title"]
    proc = by_type[("doi", "proceedings-article")]
    assert parse_bib(to_bibtex(proc))["type"] == "inproceedings" and "booktitle" in parse_bib(to_bibtex(proc))
    assert parse_ris(to_ris(proc))["type_of_reference"] == "CONF"
    assert to_csl(proc)["type"] == "paper-conference"
    dblp = by_type[("bibtex", "inproceedings")]
    assert parse_bib(to_bibtex(dblp))["type"] == "inproceedings"
    orv = next(w for w in shapes if w["records"][0]["source"] == "openreview")
    assert parse_bib(to_bibtex(orv))["booktitle"] == orv["records"][0]["venue"]
    posted = by_type[("doi", "posted-content")]
    assert parse_bib(to_bibtex(posted))["type"] == "misc" and to_csl(posted)["type"] == "article"
    entry = by_type[("doi", "reference-entry")]  # Oxford Bibliographies: Zotero's bookSection
    bib, ris, csl = parse_bib(to_bibtex(entry)), parse_ris(to_ris(entry)), to_csl(entry)
    assert (bib["type"], ris["type_of_reference"], csl["type"]) == ("incollection", "CHAP", "chapter")
    venue = entry["records"][0]["venue"]
    assert bib["booktitle"] == ris["secondary_title"] == csl["container-title"] == venue
    assert bib["publisher"] == ris["publisher"] == csl["publisher"] == entry["records"][0]["publisher"]
    data = by_type[("doi", "dataset")]  # a CRAN package: Zotero's dataset (RIS, CSL)
    bib, ris, csl = parse_bib(to_bibtex(data)), parse_ris(to_ris(data)), to_csl(data)
    assert (bib["type"], ris["type_of_reference"], csl["type"]) == ("misc", "DATA", "dataset")
    assert ris["publisher"] == csl["publisher"] == data["records"][0]["publisher"] and bib["doi"]


def test_what_zotero_reads_is_where_it_reads_it(shapes: list[dict[str, Any]]) -> None:
    """The fields Zotero's import translators (BibTeX.js, RIS.js, CSL JSON.js) read, where
    they read them, on every work of every shape: the full date also in biblatex's `date`
    (BibTeX.js prefers it to `year`, so the day survives), a conference paper's container
    in RIS `C3` (proceedings title) as well as `T2` (conference name), its publisher in
    `PB`, a published work's arXiv id in CSL `note` as `arXiv: ID` (Zotero's Extra), and
    a work of unknown kind as CSL `document` (Zotero would file `article` as a preprint)."""
    seen: set[str] = set()
    for work in shapes:
        what = kind_of(work)
        bib, ris, csl, _ = check_all(work)
        parts = csl.get("issued", {}).get("date-parts", [[]])[0]
        if len(parts) == 3:
            assert bib["date"] == "{:04d}-{:02d}-{:02d}".format(*parts) and bib["year"] == str(parts[0])
            assert ris["date"] == "{:04d}/{:02d}/{:02d}".format(*parts)
            seen.add("day")
        elif len(parts) == 1:
            assert "date" not in bib and bib["year"] == str(parts[0])
            seen.add("year")
        if what["kind"] == "conference":
            assert ris["custom3"] == ris["secondary_title"] == csl["container-title"] == what["container"]
            assert bib["booktitle"]
            if what["publisher"]:
                assert ris["publisher"] == csl["publisher"] == what["publisher"]
                seen.add("conference publisher")
        arxiv = valid_arxiv_id(work.get("arxiv_id"))
        if arxiv and what["kind"] != "preprint":
            assert f"arXiv: {arxiv}" in csl["note"].splitlines()
            assert bib["eprint"] == arxiv and ris["accession_number"] == f"arXiv:{arxiv}"
            seen.add("published on arXiv")
        if what["kind"] == "other":
            assert (bib["type"], ris["type_of_reference"], csl["type"]) == ("misc", "GEN", "document")
            seen.add("other")
    assert seen == {"day", "year", "conference publisher", "published on arXiv", "other"}, seen


def test_a_published_arxiv_paper_keeps_its_id_in_every_format() -> None:
    work = {**feed_work(2), "records": [{"source": "arxiv", "journal_ref": "Proceedings of CVPR 2026"}]}
    bib, ris, csl, cited = check_all(work)
    assert bib["type"] == "inproceedings" and bib["eprint"] == work["arxiv_id"]
    assert ris["type_of_reference"] == "CONF" and ris["custom3"] == "Proceedings of CVPR 2026"
    assert ris["name_of_database"] == "arXiv" and ris["accession_number"] == f"arXiv:{work['arxiv_id']}"
    assert csl["type"] == "paper-conference" and csl["note"] == f"arXiv: {work['arxiv_id']}"
    assert "number" not in csl and cited


def test_hostile_record_cannot_inject_fields_or_end_records(shapes: list[dict[str, Any]]) -> None:
    """The hostile record as ingested (ingest already keeps only the valid part of its ids)."""
    (work,) = [w for w in shapes if w["records"][0]["source"] == "evil"]
    bib_text = to_bibtex(work)
    bib = parse_bib(bib_text)
    assert sum(line.lstrip().startswith("@") for line in bib_text.splitlines()) == 1
    assert "note" not in bib and bib["url"].startswith("https://arxiv.org/abs/")  # not javascript:
    assert bib["type"] == "article" and bib["journal"] == "Journal of Nothing ER - TY - JOUR TI - injected"
    assert "@misc" in bib["title"]  # the injection attempt is text inside the title
    ris_text = to_ris(work)
    assert ris_text.count("ER  - ") == 1 and ris_text.count("TY  - ") == 1
    ris = parse_ris(ris_text)
    assert ris["type_of_reference"] == "JOUR" and len(ris["authors"]) == 2
    assert ris["secondary_title"] == "Journal of Nothing ER - TY - JOUR TI - injected"
    assert "urls" in ris and all(u.startswith("https://arxiv.org/") for u in ris["urls"])
    csl = to_csl(work)
    assert csl["URL"].startswith("https://arxiv.org/") and cite_with_citeproc(csl)


def test_raw_hostile_ids_are_dropped_not_escaped() -> None:
    """#18 item 6 against the exporter alone: an arXiv id with `}` and a newline, a DOI with
    a brace, a venue with RIS's record end, a javascript: URL."""
    work = {"work_id": "W7", "title": "T", "authors": [{"name": "A B"}], "year": 2024,
            "arxiv_id": "2401.00001}, note = {pwned}\n", "doi": "10.1/x}\n@misc{y,",
            "url": "javascript:alert(1)", "abstract": "x\nER  - \nTY  - JOUR",
            "subjects": [{"code": "cs.LG}, x={", "predicted": False}],
            "records": [{"source": "doi", "type": "journal-article",
                         "venue": "J\nER  - \nTY  - JOUR\nTI  - injected\r\n\u2028KW  - k"}]}
    bib = parse_bib(to_bibtex(work))
    assert set(bib) == {"type", "key", "title", "author", "year", "journal"}, bib
    ris_text = to_ris(work)
    assert ris_text.count("ER  - ") == 1 and ris_text.count("TY  - ") == 1
    assert ris_text.count("\n") == len(ris_text.splitlines()) and "\u2028" not in ris_text
    ris = parse_ris(ris_text)
    assert set(ris) == {"type_of_reference", "title", "authors", "year", "secondary_title", "abstract"}
    csl = to_csl(work)
    assert not {"URL", "DOI", "number"} & set(csl) and cite_with_citeproc(csl)


TEXT = st.lists(st.sampled_from(list("ab }{\\\n\r%&#@$=,\"'") + ["\u2028", "\x0b", "ER  - ", "TY  - ", "@misc{", "note = {"]), max_size=30).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=TEXT, author=TEXT, venue=TEXT, abstract=TEXT, ident=TEXT, url=TEXT,
       journal=st.booleans())
@example(title="", author="", venue="a", abstract="", ident="\\\\", url="", journal=True)  # `{\\}`
def test_any_text_in_any_field_parses_back(title: str, author: str, venue: str, abstract: str,
                                           ident: str, url: str, journal: bool) -> None:
    work = {"work_id": "W9", "title": title, "display_title": None, "abstract": abstract,
            "authors": [{"name": author}] if author.strip() else [], "year": 2024,
            "arxiv_id": ident, "doi": ident, "url": url, "venue": venue,
            "records": [{"source": "doi", "type": "journal-article" if journal else "dataset",
                         "venue": venue, "volume": ident, "pages": title}]}
    bib, ris, csl, _ = check_all(work)
    assert bib.get("eprint") is None and bib.get("doi") is None  # never valid ids here
    assert "note" not in bib or bib["note"] == DERIVED_NOTE
    assert to_ris(work).count("\nER  - ") == 1


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=40)
       | st.lists(st.sampled_from(["a", " ", "\n", "\t", "\x0b", "\x1c", "\x85", "\xa0", "\u2028",
                                   "\u200b", "\ufeff", "\x00", "\x7f", "\ue000", "\U0001f600"]),
                  max_size=20).map("".join))
def test_one_line_is_its_definition(text: str) -> None:
    """The fast path for printable text gives what the character-by-character rule gives:
    every whitespace one space, control/format/surrogate/private characters dropped."""
    import unicodedata

    from paperdesk.export import one_line

    kept = "".join(" " if c.isspace() else c for c in text
                   if c.isspace() or unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co"))
    assert one_line(text) == " ".join(kept.split())
