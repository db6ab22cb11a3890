"""The shipped arXiv taxonomy and the split of category lists into subjects and codes."""

from __future__ import annotations

import itertools
import json

import pytest

from conftest import open_feed, shared_file
from paperdesk.subjects.taxonomy import code_scheme, load, split_categories


@pytest.fixture(scope="module")
def tax():
    return load()


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("math.IT", "cs.IT"),
        ("math.MP", "math-ph"),
        ("stat.TH", "math.ST"),
        ("q-fin.EC", "econ.GN"),
        ("cs.SY", "eess.SY"),
        ("cs.NA", "math.NA"),
        ("cmp-lg", "cs.CL"),
        ("adap-org", "nlin.AO"),
        ("funct-an", "math.FA"),
        ("alg-geom", "math.AG"),
        ("q-alg", "math.QA"),
        ("chao-dyn", "nlin.CD"),
        ("solv-int", "nlin.SI"),
        ("supr-con", "cond-mat.supr-con"),
    ],
)
def test_aliases_and_subsumed_archives_canonicalise(tax, alias, canonical):
    assert tax.canonical(alias) == canonical
    assert tax.categories[alias].is_alias
    assert alias in tax.categories[canonical].aliases
    assert not tax.categories[canonical].is_alias


def test_groups_archives_and_names(tax):
    assert tax.group_name("cs.CL") == "Computer Science"
    assert tax.group_name("math-ph") == "Physics"  # its own archive, physics group
    assert tax.group_name("math.MP") == "Physics"  # via its canonical twin
    assert tax.group_name("stat.ML") == "Statistics"
    assert tax.group_name("econ.GN") == "Economics"
    assert tax.group_name("eess.SY") == "Electrical Engineering and Systems Science"
    assert tax.group_name("q-bio.NC") == "Quantitative Biology"
    assert tax.group_name("alg-geom") == "Mathematics"
    assert tax.categories["cond-mat.str-el"].archive == "cond-mat"
    assert tax.categories["cs.CV"].name == "Computer Vision and Pattern Recognition"


def test_legacy_codes_are_known_but_not_active(tax):
    for code in ("cmp-lg", "solv-int", "funct-an", "cond-mat", "astro-ph", "q-bio"):
        assert not tax.categories[code].active, code
    assert tax.categories["cs.CL"].active
    assert "cmp-lg" not in [c.id for c in tax.subjects()]  # browsing shows canonical only
    assert "cond-mat" in [c.id for c in tax.subjects()]  # bare legacy code stands for itself


def test_every_arxiv_category_is_shipped(tax):
    """Against arXiv's own list: every real (non-test) category, same name, same status."""
    src = json.loads(shared_file("arxiv/taxonomy/arXiv_categories.json").read_text())
    for e in src:
        if e["archive"] == "test" or e["subject_class"] == "none":
            continue
        if e["subject_class"] == "" and e["definitive"] == 0:
            assert e["archive"] in tax.archives  # an archive, not a category (cs, math, …)
            continue
        code = f"{e['archive']}.{e['subject_class']}" if e["subject_class"] else e["archive"]
        assert tax.categories[code].name == e["category_name"]
    assert "test.dis-nn" not in tax.categories


def test_split_separates_acm_and_msc_codes(tax):
    got = split_categories(
        ["cs.CL", "math.IT", "I.2.7; K.4.1", "68T50 (Primary) 68T07, 68Q32 (Secondary)", "cs.IT"],
        tax,
    )
    assert got.subjects == ["cs.CL", "cs.IT"]  # alias folded, duplicate dropped, order kept
    assert got.primary == "cs.CL"
    assert [(c.scheme, c.code) for c in got.codes] == [
        ("acm", "I.2.7"),
        ("acm", "K.4.1"),
        ("msc", "68T50"),
        ("msc", "68T07"),
        ("msc", "68Q32"),
    ]


def test_split_handles_odd_inputs(tax):
    assert split_categories("cs.LG", tax).subjects == ["cs.LG"]  # feed lines with `cate`
    assert split_categories(None, tax).subjects == []
    assert split_categories(["CS.AI", "Hep-Th"], tax).subjects == ["cs.AI", "hep-th"]
    odd = split_categories(["'; DROP TABLE x;--", "A.I", "62-08", "68Txx"], tax)
    assert odd.subjects == []
    assert {c.code: c.scheme for c in odd.codes}["62-08"] == "msc"
    assert {c.code: c.scheme for c in odd.codes}["68Txx"] == "msc"
    assert code_scheme("I.4.m") == "acm"
    assert code_scheme("hep-th/9901001") == "other"


def test_real_feed_lists_split_cleanly(tax):
    """On real feed lines (the first 20k): every list yields a primary, no arXiv-looking
    code is left among the other codes, and ACM/MSC codes are recognised as such."""
    schemes: dict[str, int] = {"acm": 0, "msc": 0, "other": 0}
    with open_feed() as fh:
        for line in itertools.islice(fh, 20_000):
            rec = json.loads(line)
            cats = rec.get("categories") or rec.get("cate")
            got = split_categories(cats, tax)
            first = cats if isinstance(cats, str) else cats[0]
            assert got.primary == tax.canonical(first), cats
            for c in got.codes:
                schemes[c.scheme] += 1
                assert not any(c.code.startswith(a + ".") for a in tax.archives), c
    assert schemes["acm"] > 50 and schemes["msc"] > 50
    assert schemes["other"] < 0.05 * (schemes["acm"] + schemes["msc"]), schemes
