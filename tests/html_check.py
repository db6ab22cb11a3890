"""An HTML fragment parsed strictly enough for the tests: every tag closed in order (void
elements aside), with its tags, attributes and text kept for assertions."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import TypeVar

VOID = {"input", "br", "img", "meta", "link", "hr"}


class Balanced(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


P = TypeVar("P", bound="Balanced")


def parse(html: str, parser: type[P]) -> P:
    """`html` fed to a new `parser`; fails on a tag left open."""
    p = parser()
    p.feed(html)
    p.close()
    assert not p.stack, p.stack
    return p
