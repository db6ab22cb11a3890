"""Personal names: split, decode LaTeX accents, fold to a blocking key.

(First cut; the normalisation owner makes it complete.)
"""

from __future__ import annotations

import unicodedata

from paperdesk.model import Author


def fold(text: str) -> str:
    """Lower-case ASCII-ish fold for keys: strip accents, keep letters and spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def normalize_author(author: Author) -> Author:
    """Fill `display` and `key` (and `given`/`family` when the source did not split them)."""
    name = " ".join(author.name.split())
    if author.family is None:
        if "," in name:
            family, _, given = name.partition(",")
            author.family, author.given = family.strip(), given.strip() or None
        else:
            parts = name.rsplit(" ", 1)
            author.family = parts[-1]
            author.given = parts[0] if len(parts) == 2 else None
    author.display = " ".join(p for p in (author.given, author.family) if p) or name
    initial = fold(author.given or "")[:1]
    author.key = f"{fold(author.family or name)} {initial}".strip()
    return author
