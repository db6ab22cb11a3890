"""Text-mode LaTeX / Markdown → safe HTML (paperdesk.web.texmarkup), on real abstracts from
the committed feed slice and on hostile text: only known tags, balanced, links only to
http(s), math left for KaTeX, linear time."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from html_check import Balanced, parse
from paperdesk.web.texmarkup import render

DATA = Path(__file__).parent / "data" / "shapes"
ALLOWED = {"em", "strong", "code", "u", "sup", "sub", "span", "a"}
SPAN_CLASSES = {"sc", "dollar", "url", "cite", "footnote"}


class Checker(Balanced):
    """Fails on any tag or attribute the renderer may not write, or unbalanced tags."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in ALLOWED, tag
        a = dict(attrs)
        if tag == "a":
            assert set(a) == {"href", "rel"} and a["rel"] == "nofollow noopener ugc", a
            assert (a["href"] or "").lower().startswith(("http://", "https://")), a
            assert not any(c.isspace() for c in a["href"] or ""), a
            assert "a" not in self.stack, "nested link"
            self.links.append(a["href"] or "")
        elif tag == "span":
            assert set(a) == {"class"} and a["class"] in SPAN_CLASSES, a
        else:
            assert not a, (tag, a)
        super().handle_starttag(tag, attrs)


def check(html: str) -> Checker:
    return parse(html, Checker)


def text_of(html: str) -> str:
    return "".join(check(html).text)


def test_text_macros_become_emphasis_and_links() -> None:
    html = render(r"we propose \textbf{Personalize Anything}, a \emph{training-free} and "
                  r"\textit{tuning-free} method; \texttt{code} at \href{https://github.com/x/y}{this repo}")
    assert "<strong>Personalize Anything</strong>" in html
    assert "<em>training-free</em>" in html and "<em>tuning-free</em>" in html
    assert "<code>code</code>" in html
    assert '<a href="https://github.com/x/y" rel="nofollow noopener ugc">this repo</a>' in html
    assert "\\" not in text_of(html)


def test_accents_ties_dashes_quotes_and_old_switches() -> None:
    html = render(r"B\'ezier, Schr\"odinger, Do\~nana, {\"o}, Fran\c{c}ois: pages 1--2 --- a~b ``q'' {\it x} {\bf y}")
    assert text_of(html) == "Bézier, Schrödinger, Doñana, ö, François: pages 1\u20132 \u2014 a\u00a0b \u201cq\u201d x y"
    assert "<em>x</em>" in html and "<strong>y</strong>" in html


def test_math_is_left_for_katex_and_literal_dollars_are_isolated() -> None:
    html = render(r"a bound $\mathcal{O}(n^2)$ and \(\textbf{x}\), for \$148K and \$20K")
    assert r"$\mathcal{O}(n^2)$" in html and r"\(\textbf{x}\)" in html  # untouched inside math
    assert html.count('<span class="dollar">$</span>') == 2  # KaTeX cannot pair them


def test_links_only_to_http() -> None:
    for bad in ("javascript:alert(1)", "JaVaScRiPt:alert(1)", "java\nscript:alert(1)",
                "data:text/html,<script>", "vbscript:x", "//evil.example", "https:// spaced"):
        for src in (rf"\href{{{bad}}}{{click}}", rf"\url{{{bad}}}"):
            c = check(render(src))
            assert not c.links, (src, c.links)
    md = render("[x](javascript:alert(1)) and [y](https://ok.example/a)", "markdown")
    assert check(md).links == ["https://ok.example/a"]
    # inside a title (already a link) nothing becomes a link
    assert not check(render(r"\href{https://x.example}{t}", links=False)).links


def test_markdown_emphasis_for_markdown_sources_only() -> None:
    md = render("we focus on **editing speed** and *user* and _batch-and-match_ but not snake_case_name", "markdown")
    assert "<strong>editing speed</strong>" in md and "<em>user</em>" in md
    assert "<em>batch-and-match</em>" in md and "snake_case_name" in md
    assert "<em>" not in render("A* search and a_b_c", "latex")
    assert render(r"\textbf{x}", "plain") == r"\textbf{x}"


def test_real_feed_abstracts_render_well_formed() -> None:
    n = shown = 0
    for line in (DATA / "feed.jsonl").read_text().splitlines():
        d = json.loads(line)
        for text in (d["title"], d["summary"]):
            html = render(text)
            check(html)
            n += 1
            for macro in ("\\textbf{", "\\emph{", "\\textit{", "\\href{"):
                if macro in text and macro not in "".join(
                    seg for i, seg in enumerate(text.split("$")) if i % 2 == 1
                ):
                    assert macro not in html, (macro, text[:200])
                    shown += 1
    assert n == 80 and shown >= 4


def test_markdown_of_real_openreview_abstracts() -> None:
    strong = 0
    for line in (DATA / "openreview.jsonl").read_text().splitlines():
        d = json.loads(line)
        html = render(d["abstract"], "markdown")
        check(html)
        strong += html.count("<strong>") + html.count("<em>")
    assert strong >= 5


def test_hostile_nesting_and_length_stay_linear() -> None:
    for s in ("\\it" * 5000, "{" * 20000, "**a " * 5000, "\\textbf{" * 5000, "$" * 20001,
              "\\(" * 10000, "[" * 20000 + "](https://x)", "\\href{" * 5000):
        t = time.perf_counter()
        check(render(s))
        check(render(s, "markdown"))
        assert time.perf_counter() - t < 5, s[:12]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([
    "\\textbf{", "\\emph{", "}", "{", "\\it ", "\\bf ", "$", "$$", "\\(", "\\)", "**", "*", "_",
    "`", "[a](https://x.example)", "[b](javascript:x)", "\\href{", "\\url{", "https://h.example}",
    "javascript:alert(1)}", "--", "~", "\\'", "e", "\\$", "x ", "<script>", "&amp;", "\"", "'",
    "\\\\", "\\cite{", "\\footnote{", "\\textcolor{red}{", "\n",
]), max_size=60), st.sampled_from(["latex", "markdown", "plain"]), st.booleans())
def test_any_input_gives_only_safe_balanced_html(parts: list[str], flavour: str, links: bool) -> None:
    html = render("".join(parts), flavour, links=links)
    c = check(html)
    if not links:
        assert not c.links
    assert "<script" not in html


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([
    "-", "--", "'", "''", "`", "``", "a", " ", "\\", "{", "}", "$", "~", "*", "_", "[", "](https://x)",
    "\\'e", "\\emph", "\n", "é",
]), max_size=30).map("".join), st.sampled_from(["latex", "markdown", "plain"]))
def test_skipping_to_token_starts_changes_nothing(text: str, flavour: str) -> None:
    """`render` looks for tokens only where `_MARKUP_CHARS` says one can start, and takes
    a text without `_TOKEN_STARTS` as plain text; both give what the token pattern tried
    at every character gives."""
    from unittest import mock

    from paperdesk.web import texmarkup

    def everywhere(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str] | None:
        return pattern.search(text, pos)

    with mock.patch.object(texmarkup, "_search", everywhere), \
            mock.patch.object(texmarkup, "_MARKUP_CHARS", re.compile(".", re.DOTALL)), \
            mock.patch.object(texmarkup, "_TOKEN_STARTS", ("",)):
        reference = str(render(text, flavour))
    assert str(render(text, flavour)) == reference
