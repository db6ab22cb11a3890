"""Works: generic titles, errata/parts/comments kept apart and linked, abstract-only copies.

Real DBLP–ACM and arXiv-feed rows (the DBLP–ACM ones from the development records of
`bench/resolve_works.py`, none from its held-out part)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from loopback import serve
from paperdesk.catalog import paper
from paperdesk.model import SourceRecord
from paperdesk.resolve.pairs import MATCH_THRESHOLD, related_kind, score
from paperdesk.resolve.works import cluster_records, make_doc, make_docs, norm_text
from paperdesk.resolve.works_curate import work_id_for
from paperdesk.resolve.works_run import resolve_works
from paperdesk.resolve.works_text import is_generic, title_kinds, venue_agreement
from paperdesk.store import open_store
from paperdesk.web.app import create_app
from test_resolve_works import dblp_acm, feed, rec

# The opening two sentences of 2503.19551's abstract, as arXiv has them.
OPENING = (
    "Large language models (LLMs) achieve strong performance across diverse tasks,\n"
    "largely driven by high-quality web data used in pre-training. However, recent\n"
    "studies indicate this data source is rapidly depleting."
)
# The rest of that abstract reworded by hand (same content, other sentences).
REWORDED = (
    " We ask whether synthetic corpora scale as predictably as raw pre-training text. To"
    " study this, we present SynthLLM, a framework that turns pre-training documents into"
    " varied synthetic data of high quality, using a graph algorithm to pull high-level"
    " concepts out of several documents and combine them. Our mathematical experiments show"
    " that data made by SynthLLM follows a rectified scaling law for models of many sizes,"
    " that the gains level off close to 300B tokens, and that bigger models need fewer"
    " tokens to reach their best: an 8B model is best at 1T tokens, a 3B model needs 4T."
    " SynthLLM also beats other ways of generating and augmenting synthetic data, so"
    " synthetic data is a scalable, dependable substitute for organic pre-training corpora."
)


def _groups(records: list[SourceRecord]) -> set[frozenset[str]]:
    return {frozenset(records[i].key for i in g) for g in cluster_records(records)}


def test_kind_words_of_real_titles() -> None:
    fold = str.lower
    assert title_kinds(fold("Fast Ramanujan--type Series for Logarithms. Part II"))[0] == {"part:2"}
    assert title_kinds(fold("Panel: Future Directions - The VLDB Broadening Strategy, Part 1"))[0] == {
        "part:1"
    }
    kinds, core = title_kinds(fold('Reply to "Emergent LLM behaviors are observationally equivalent"'))
    assert kinds == {"reply"} and norm_text(core) == "emergent llm behaviors are observationally equivalent"
    assert title_kinds(fold("Comment on The Illusion of Thinking"))[0] == {"comment"}
    assert title_kinds(fold("Corrigendum: Deep nets"))[0] == {"erratum"}
    # Not kinds: a method named 'response surface', a part-of-speech tagger.
    assert title_kinds(fold("Response surface methodology for tuning"))[0] == frozenset()
    assert title_kinds(fold("Part-of-speech tagging of tweets"))[0] == frozenset()
    assert is_generic(norm_text("Guest Editorial")) and is_generic(norm_text("Book review column"))
    assert is_generic(norm_text("Editor's Notes")) and not is_generic(norm_text("XPath processing in a nutshell"))
    a, b = make_docs(
        [rec("x", "1", title="t", venue="VLDB J."), rec("y", "1", title="t", venue="Very Large Data Bases")]
    )
    c, d = make_docs(
        [rec("x", "2", title="t", venue="VLDB"), rec("y", "2", title="t", venue="The VLDB Journal &mdash; x")]
    )
    assert venue_agreement(a.venue, a.venue_kind, b.venue, b.venue_kind) == 1
    assert venue_agreement(c.venue, c.venue_kind, d.venue, d.venue_kind) == -1


def test_generic_titles_need_agreeing_authors_and_years() -> None:
    # Five 'Guest editorial's of the VLDB Journal: only the one by the same editors in the
    # same year is the DBLP record's twin (title similarity alone merged them before).
    records = dblp_acm(
        {"journals/vldb/Halevy02", "765219", "765530", "journals/vldb/AbbadiSW01", "767142"}
    )
    assert _groups(records) == {
        frozenset({"dblp:journals/vldb/AbbadiSW01", "acm:767142"}),
        frozenset({"dblp:journals/vldb/Halevy02"}),
        frozenset({"acm:765219"}),
        frozenset({"acm:765530"}),
    }


def test_part_two_stays_apart_from_part_one() -> None:
    # DBLP and ACM list part II; a reading list holds part I under the same title but
    # for its numeral (before, 'part i' and 'part ii' were one title to the matcher).
    records = dblp_acm({"journals/sigmod/HalkidiBV02a", "601862"})
    part_one = rec(
        "mylist",
        "halkidi1",
        title="Clustering Validity Checking Methods: Part I",
        authors=["Maria Halkidi", "Yannis Batistakis", "Michalis Vazirgiannis"],
        year=2002,
    )
    records.append(part_one)
    assert _groups(records) == {
        frozenset({"dblp:journals/sigmod/HalkidiBV02a", "acm:601862"}),
        frozenset({"mylist:halkidi1"}),
    }


def test_a_comment_is_not_the_paper_and_is_linked_to_it() -> None:
    f = feed({"2506.06941", "2506.09250"})
    # As a reading list holds them: titles and authors, no ids, no abstracts.
    plain = [
        rec("mylist", k, title=r.title, authors=[a.name for a in r.authors], year=r.year)
        for k, r in f.items()
    ]
    original, comment = make_docs(plain)
    assert score(original, comment) == 0.0
    assert related_kind(comment, original) == ("comment", True)
    assert len(cluster_records(plain)) == 2


def test_abstract_only_copy_with_its_opening_joins_its_paper() -> None:
    paper_rec = feed({"2503.19551"})["2503.19551"]
    assert paper_rec.abstract and paper_rec.abstract.startswith(OPENING)
    names = [a.name for a in paper_rec.authors]
    copy = rec("profile", "p1", abstract=OPENING + REWORDED, authors=names[:2])
    a, b = make_doc(paper_rec), make_doc(copy)
    assert a.lead and a.lead == b.lead
    assert score(a, b) >= MATCH_THRESHOLD
    # The same opening before another paper's text (boilerplate openings are common) is no match.
    other = feed({"2503.11692"})["2503.11692"]
    assert other.abstract
    impostor = rec("profile", "p2", abstract=OPENING + " " + other.abstract, authors=names[:1])
    assert score(a, make_doc(impostor)) < MATCH_THRESHOLD
    assert _groups([paper_rec, copy, impostor]) == {
        frozenset({paper_rec.key, "profile:p1"}),
        frozenset({"profile:p2"}),
    }


def test_store_links_the_comment_on_the_paper_page(tmp_path: Path) -> None:
    f = feed({"2506.06941", "2506.09250", "2503.19551"})
    paper_rec = f["2503.19551"]
    copy = rec(
        "profile", "p1", abstract=OPENING + REWORDED, authors=[a.name for a in paper_rec.authors][:2]
    )
    db = tmp_path / "p.db"
    with open_store(db) as store:
        store.put_records([f["2506.06941"], f["2503.19551"]], origin="t")
        resolve_works(store)
        # Next day: the comment, and an abstract-only copy of a catalogued paper.
        store.put_records([f["2506.09250"], copy], origin="t")
        resolve_works(store)
        w_paper = work_id_for(store, "arxiv:2506.06941")
        w_comment = work_id_for(store, "arxiv:2506.09250")
        assert w_paper and w_comment and w_paper != w_comment
        assert work_id_for(store, "profile:p1") == work_id_for(store, "arxiv:2503.19551")
        data = paper(store, w_paper)
        assert [(r["work_id"], r["relation"]) for r in data["related"]] == [(w_comment, "Comment")]
        back = paper(store, w_comment)["related"]
        assert [(r["work_id"], r["relation"]) for r in back] == [(w_paper, "Comments on")]
        # A full run rebuilds the links.
        resolve_works(store, full=True)
        assert [r["relation"] for r in paper(store, w_paper)["related"]] == ["Comment"]
    with serve(create_app(db)) as base:
        html = urllib.request.urlopen(f"{base}/papers/{w_paper}", timeout=10).read().decode()
    assert "Related records" in html
    assert f'Comment: <a class="tex" href="/papers/{w_comment}">' in html


def test_one_paper_in_two_libraries_words_meets_itself() -> None:
    # DBLP–ACM development pairs the matcher missed: a title reworded by the library, a
    # subtitle given without a colon plus a misspelt family name, a dropped digit.
    pairs = [
        ("conf/sigmod/Aggarwal03", "872826"),
        ("journals/sigmod/Rosneblatt94", "190649"),
        ("journals/sigmod/SilberschatzSU96", "381886"),
    ]
    records = dblp_acm({x for p in pairs for x in p})
    assert _groups(records) == {frozenset({f"dblp:{d}", f"acm:{a}"}) for d, a in pairs}
    # Aggarwal's other 2003 framework for evolving data streams shares most of the words
    # but not all of their stems: another paper.
    by_key = {r.key: r for r in records}
    sibling = rec(
        "mylist", "clustream", title="A Framework for Clustering Evolving Data Streams",
        authors=["Charu C. Aggarwal"], year=2003, venue="VLDB",
    )
    a, b = make_docs([by_key["dblp:conf/sigmod/Aggarwal03"], sibling])
    assert score(a, b) < MATCH_THRESHOLD
    # The same reworded title by other authors, or a year later, names nothing.
    for kw in ({"authors": ["Jiawei Han"], "year": 2003}, {"authors": ["Charu C. Aggarwal"], "year": 2004}):
        other = rec("mylist", "x", title="A framework for diagnosing changes in evolving data streams", **kw)
        assert score(a, make_doc(other)) < MATCH_THRESHOLD


def test_spelled_numbers_session_labels_and_column_years() -> None:
    def doc(title: str, year: int = 1999, who: str = "Opher Etzion") -> object:
        return make_doc(rec("x", title, title=title, authors=[who], year=year, venue="SIGMOD Record"))

    fourth = doc("Report on the 4th International Workshop on Next Generation Systems")
    assert score(fourth, doc("Report on the fourth international workshop on next generation systems")) >= MATCH_THRESHOLD
    assert score(fourth, doc("Report on the fifth international workshop on next generation systems")) < MATCH_THRESHOLD
    # 'Tutorial: X' in one library is 'X (tutorial session)' in another.
    tut = doc("Tutorial: Query Processing in Sensor Networks", 2004, "Johannes Gehrke")
    assert tut.title == "query processing in sensor networks" and tut.note == "tutorial"
    assert score(tut, doc("Query processing in sensor networks (tutorial session)", 2004, "Johannes Gehrke")) >= MATCH_THRESHOLD
    # A column recurs every issue: the same editor's column of another year is another item.
    col = doc("Reminiscences on Influential Papers", 2001, "Kenneth A. Ross")
    assert score(col, doc("Reminiscences on influential papers", 2001, "Kenneth A. Ross")) >= MATCH_THRESHOLD
    assert score(col, doc("Reminiscences on influential papers", 2002, "Kenneth A. Ross")) < MATCH_THRESHOLD


def test_front_matter_listed_by_its_phrase_alone_meets_its_topic() -> None:
    # DBLP lists the issue's introduction as "Guest Editor's Introduction", ACM as "Data
    # management issues in electronic commerce: guest editor's introduction": one item, by
    # the same editor in the same year and journal. The other editors' introduction of
    # that year stays apart.
    records = dblp_acm({"journals/sigmod/Dogac02", "507340", "journals/sigmod/MeersmanS02"})
    docs = {d.key: d for d in make_docs(records)}
    assert docs["acm:507340"].title == "data management issues in electronic commerce"
    assert docs["acm:507340"].title_head == "guest editor s introduction"
    assert _groups(records) == {
        frozenset({"dblp:journals/sigmod/Dogac02", "acm:507340"}),
        frozenset({"dblp:journals/sigmod/MeersmanS02"}),
    }
