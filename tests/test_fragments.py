"""The list entry and the work parts built in Python (`paperdesk.web.fragments`): hostile
values in every field come out as text, links only to http(s) originals, tags balanced,
and what each field holds is what a reader sees."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from html_check import Balanced, parse
from paperdesk.web.fragments import author_list, subject_list, work_entry, work_title

HOSTILE = st.sampled_from(['"><script>alert(1)</script>', "</article><b>", "a & b", "x' onmouseover='y",
                           "javascript:alert(1)", "<img src=x onerror=1>", "plain"])


@settings(max_examples=150, deadline=None)
@given(wid=HOSTILE, name=HOSTILE, aid=HOSTILE, code=HOSTILE, subject=HOSTILE, label=HOSTILE,
       url=HOSTILE | st.just("https://arxiv.org/abs/2401.00001"), title=HOSTILE, abstract=HOSTILE,
       path=HOSTILE, derived=st.sampled_from(["title", "abstract", "none"]))
def test_hostile_fields_stay_text(wid: str, name: str, aid: str, code: str, subject: str, label: str,
                                  url: str, title: str, abstract: str, path: str, derived: str) -> None:
    w: dict[str, Any] = {
        "work_id": wid, "display_title": title, "display_title_from": derived, "markup": "latex",
        "abstract": abstract, "authors": [{"name": name, "author_id": aid}, {"name": name, "author_id": None}],
        "subjects": [{"code": code, "name": subject, "predicted": True, "probability": 0.42}],
        "sources": [{"label": label, "url": url}],
    }
    page = parse(str(work_entry(w, "tok", path)), Balanced)
    assert not any(t in ("script", "img", "b") for t, _ in page.tags)
    for tag, attrs in page.tags:
        assert not any(k.startswith("on") for k in attrs), attrs
        if tag == "a" and attrs.get("rel") == "noopener nofollow":
            assert attrs["href"] == "https://arxiv.org/abs/2401.00001"
    text = "".join(page.text)
    for value in (title, name, code, label, abstract):
        assert value in text
    assert ("title from the abstract" in text) == (derived == "abstract")
    hidden = {a["name"]: a["value"] for t, a in page.tags if t == "input"}
    assert hidden == {"csrf": "tok", "item": wid, "next": path}


def test_authors_past_the_limit_are_counted_and_predictions_say_so() -> None:
    people = [{"name": f"Person {i}", "author_id": f"a{i}"} for i in range(15)]
    html = str(author_list(people, 12))
    assert html.count("<a href=") == 12 and "and 3 more" in html
    html = str(subject_list([{"code": "cs.LG", "name": "Machine Learning", "predicted": True,
                              "probability": 0.875}, {"code": "cs.AI", "name": "AI"}]))
    assert 'class="subject predicted">cs.LG <small>(predicted 88%)</small>' in html
    assert 'class="subject">cs.AI</a>' in html


def test_a_title_with_markup_is_rendered_without_links() -> None:
    w = {"display_title": r"\emph{Fast} sampling \href{https://x.example}{here}",
         "display_title_from": "title", "markup": "latex"}
    html = str(work_title(w))
    assert "<em>Fast</em>" in html and "<a " not in html


def test_author_works_head_each_year_and_link_only_http_originals() -> None:
    from paperdesk.web.fragments import author_works

    rec = {"source": "arxiv", "year": 2025, "primary_subject": "cs.LG", "venue": "<i>NeurIPS</i>",
           "abstract": "An abstract -- with a dash.", "url": "https://arxiv.org/abs/2501.00001"}
    works = [
        {"work_id": "W1", "year": 2025, "display_title": "One", "display_title_from": "title", "records": [rec]},
        {"work_id": None, "year": 2025, "display_title": "Two", "display_title_from": "title",
         "records": [{**rec, "url": "javascript:alert(1)", "primary_subject": None}]},
        {"work_id": "W3", "year": None, "display_title": "[Derived]", "display_title_from": "abstract",
         "records": [{**rec, "primary_subject": None, "abstract": None}]},
    ]
    page = parse(str(author_works(works)), Balanced)
    text = "".join(page.text)
    assert [t for t, _ in page.tags if t == "h3"] == ["h3", "h3"] and "Undated" in text
    links = [a["href"] for t, a in page.tags if t == "a"]
    assert links == ["/papers/W1", "https://arxiv.org/abs/2501.00001", "/papers/W3",
                     "https://arxiv.org/abs/2501.00001"]
    assert "<i>NeurIPS</i>" in text and "original" in text and "\u2013" in text
    assert sum(t == "details" for t, _ in page.tags) == 2


def test_an_author_pages_abstract_in_its_sources_markup() -> None:
    """An OpenReview abstract is Markdown on the author page, as in the daily list."""
    from paperdesk.web.fragments import author_works

    rec = {"source": "openreview", "year": 2024, "abstract": "We **prove** it.", "url": None}
    w = {"work_id": "W1", "year": 2024, "display_title": "T", "display_title_from": "title", "records": [rec]}
    assert "<strong>prove</strong>" in str(author_works([{**w, "markup": "markdown"}]))
    assert "**prove**" in str(author_works([{**w, "markup": "latex"}]))
