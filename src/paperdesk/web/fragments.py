"""The HTML of a work's parts in lists and on its page: title, star, authors, subjects,
original sources, and the list entry the daily and subject pages repeat.

Why in Python and not Jinja macros: a daily or subject page shows 50-100 works, and Jinja
spends ~10 µs on each macro call and an attribute lookup plus an escape on every `{{ }}`;
rendering the entries was most of a daily page. The same HTML built here with f-strings
renders those pages 1.7x faster (commit 066d468 says how it was timed). Every value put in the page goes
through `markupsafe.escape`, as the template's autoescape would; every link to an original
through `safe_link` (http(s) only). Registered as template globals in `paperdesk.web.app`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup, escape

from paperdesk.normalize.links import safe_link
from paperdesk.web import texmarkup


def work_title(w: dict[str, Any], markup: str | None = None) -> Markup:
    """A work's title: the source's, its text markup rendered (no links: it sits in one),
    or one derived from the abstract, shown as such (`display_title_from`)."""
    if w.get("display_title_from") == "title":
        flavour = markup or w.get("markup") or "latex"
        return texmarkup.render(w.get("display_title"), flavour, links=False)
    if w.get("display_title_from") == "abstract":
        why, note = "the first sentence of its abstract", "title from the abstract"
    else:
        why, note = "nor an abstract", "no title in the source"
    return Markup(
        f'<span class="derived-title" title="The source gives no title: {why}">'
        f'{escape(w.get("display_title") or "")}</span> <small class="derived-note">{note}</small>'
    )


def work_star(work_id: str, csrf: str, path: str) -> Markup:
    """The star that saves a work to the signed-in user's library (app.js shows it filled
    for saved works and toggles it in place; without scripts it posts the form)."""
    work = escape(work_id)
    return Markup(
        '<form method="post" action="/desk/library/add" class="star-form">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        f'<input type="hidden" name="item" value="{work}">'
        f'<input type="hidden" name="next" value="{escape(path)}">'
        f'<button type="submit" class="star" data-item="{work}" title="Save to your library"'
        f' aria-label="Save {work} to your library">☆</button></form>'
    )


def author_list(authors: Sequence[dict[str, Any]], limit: int = 12) -> Markup:
    """The first `limit` authors, each linked to its profile when it has one."""
    names = [
        f'<a href="/authors/{escape(a["author_id"])}">{escape(a.get("name"))}</a>' if a.get("author_id")
        else f'<span>{escape(a.get("name"))}</span>'
        for a in authors[:limit]
    ]
    more = f' <span class="more">and {len(authors) - limit} more</span>' if len(authors) > limit else ""
    return Markup(f'<p class="authors">{", ".join(names)}{more}</p>')


def subject_list(subjects: Sequence[dict[str, Any]]) -> Markup:
    """Subject links; a predicted one says so, with its probability."""
    items = []
    for s in subjects:
        code = escape(s.get("code"))
        label = str(code)
        if s.get("predicted"):
            p = s.get("probability")
            label += f" <small>(predicted{f' {p * 100:.0f}%' if p else ''})</small>"
        cls = "subject predicted" if s.get("predicted") else "subject"
        items.append(f'<li><a href="/subjects/{code}" title="{escape(s.get("name"))}" class="{cls}">{label}</a></li>')
    return Markup(f'<ul class="subjects" aria-label="Subjects">{"".join(items)}</ul>')


def _link_to_original(url: object) -> str:
    """The opening `<a>` to a record's original, "" unless the link is http(s)."""
    href = safe_link(url)
    return f'<a href="{escape(href)}" rel="noopener nofollow">' if href else ""


def source_list(sources: Sequence[dict[str, Any]]) -> Markup:
    """The original sources, linked where the link is http(s)."""
    items = []
    for s in sources:
        link = _link_to_original(s.get("url"))
        label = escape(s.get("label"))
        items.append(f"<li>{link}{label}</a></li>" if link else f"<li>{label}</li>")
    return Markup(f'<ul class="sources" aria-label="Original sources">{"".join(items)}</ul>')


def work_entry(w: dict[str, Any], csrf: str, path: str) -> Markup:
    """A work in a list (daily, subject pages): star, title, authors, subjects, abstract
    (folded), sources."""
    wid = escape(w["work_id"])
    abstract = (
        '  <details class="abstract"><summary>Abstract</summary><p class="tex">'
        f'{texmarkup.render(w["abstract"], w.get("markup") or "latex")}</p></details>\n'
        if w.get("abstract") else ""
    )
    return Markup(
        f'<article class="work" id="{wid}">\n'
        f'  <h2 class="title tex">{work_star(w["work_id"], csrf, path)}'
        f'<a href="/papers/{wid}">{work_title(w)}</a></h2>\n'
        f'  {author_list(w.get("authors") or [])}\n'
        f'  {subject_list(w.get("subjects") or [])}\n'
        f'{abstract}'
        f'  {source_list(w.get("sources") or [])}\n'
        '</article>\n'
    )


def author_works(works: Sequence[dict[str, Any]]) -> Markup:
    """An author page's works, newest year first under a heading per year: each work's
    title (linked to its page), a line per source record (source, year, primary subject
    or "original" linked to the original, venue) and the first record's abstract."""
    out: list[str] = []
    year: object = object()
    for w in works:
        if w.get("year") != year:
            year = w.get("year")
            out.append(f'  <h3 class="year">{escape(year or "Undated")}</h3>\n')
        title = work_title(w)
        if w.get("work_id"):
            title = Markup(f'<a href="/papers/{escape(w["work_id"])}">{title}</a>')
        out.append(f'  <section class="work">\n    <h4 class="title tex">{title}</h4>\n')
        records = w.get("records") or []
        for r in records:
            link = _link_to_original(r.get("url"))
            line = f'<span class="src">{escape(r.get("source"))}</span> {escape(r.get("year") or "")}'
            if r.get("primary_subject"):
                subject = escape(r["primary_subject"])
                line += f" · {link}{subject}</a>" if link else f" · {subject}"
            elif link:
                line += f" · {link}original</a>"
            if r.get("venue"):
                line += f" · {escape(r['venue'])}"
            out.append(f'    <p class="record-line">{line}</p>\n')
        if records and records[0].get("abstract"):
            out.append('    <details class="abstract"><summary>Abstract</summary><p class="tex">'
                       f'{texmarkup.render(records[0]["abstract"], w.get("markup") or "latex")}</p></details>\n')
        out.append("  </section>\n")
    return Markup("".join(out))
