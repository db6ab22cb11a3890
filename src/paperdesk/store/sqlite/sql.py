"""Two helpers every repository's SQL uses: `IN (…)` lists built in bounded chunks.

Why chunks: SQLite caps the bound parameters of one statement (32,766 since 3.32, 999
before), and the PostgreSQL backend runs the same statements through its dialect layer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")


def chunks(items: Sequence[T], n: int = 500) -> Iterator[Sequence[T]]:
    """`items` in slices of at most `n`."""
    for i in range(0, len(items), n):
        yield items[i : i + n]


def placeholders(n: int) -> str:
    """`?,?,…` for `n` parameters."""
    return ",".join("?" * n)
