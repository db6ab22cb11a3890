"""Atom and RSS feeds of work lists (daily feed, a subject, an author, a search), made with
feedgen so readers get valid documents; all text is escaped by the XML writer. Absolute
URLs start with the `PAPERDESK_BASE_URL` setting (`WebSettings.base_url`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from feedgen.feed import FeedGenerator


def _when(day: str | None) -> datetime:
    if day:
        try:
            return datetime.fromisoformat(day[:10]).replace(tzinfo=UTC)
        except ValueError:
            pass
    return datetime(1970, 1, 1, tzinfo=UTC)


def entry_title(w: dict[str, Any]) -> str:
    """The work's display title (the source's, else derived from the abstract, bracketed)."""
    if w.get("display_title"):
        return str(w["display_title"])
    from paperdesk.views import display_title

    return display_title(w.get("title"), w.get("abstract"), w.get("work_id"))[0]


def build(base: str, self_url: str, title: str, works: list[dict[str, Any]], day: str | None) -> FeedGenerator:
    fg = FeedGenerator()
    fg.id(self_url)
    fg.title(title)
    fg.link(href=base, rel="alternate")
    fg.link(href=self_url, rel="self")
    fg.description(title)
    fg.updated(_when(day))
    for w in reversed(works):
        fe = fg.add_entry()
        url = f"{base}papers/{w['work_id']}"
        fe.id(url)
        fe.title(" ".join(entry_title(w).split()))
        fe.link(href=url)
        for a in w.get("authors", [])[:50]:
            fe.author({"name": a["name"]})
        if w.get("abstract"):
            fe.summary(" ".join(w["abstract"].split()))
        fe.updated(_when(w.get("date") or day))
        for s in w.get("subjects", []):
            fe.category(term=s["code"], label=s.get("name"))
    return fg


def response(
    request: Request, kind: str, title: str, works: list[dict[str, Any]], day: str | None
) -> Response:
    # Absolute links from the configured base URL, never from the request's Host header:
    # the response is cached and served to every later reader (a forged Host would
    # otherwise put its links in everyone's feed).
    base = request.app.state.settings.base_url
    self_url = base + request.url.path.lstrip("/")
    if request.url.query:
        self_url += "?" + request.url.query
    fg = build(base, self_url, title, works, day)
    if kind == "rss":
        return Response(fg.rss_str(pretty=True), media_type="application/rss+xml")
    return Response(fg.atom_str(pretty=True), media_type="application/atom+xml")
