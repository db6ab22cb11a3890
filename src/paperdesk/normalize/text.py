"""Plain text for indexing from titles and abstracts that carry LaTeX, Markdown and arXiv's
hard line breaks. The original text is always kept for display; this is only for search.

(First cut; the normalisation owner makes it complete and fast.)
"""

from __future__ import annotations

import re

_WS = re.compile(r"\s+")


def join_lines(text: str) -> str:
    """Join arXiv's hard-wrapped lines; keep blank-line paragraph breaks as one newline."""
    paras = re.split(r"\n\s*\n", text.strip())
    return "\n".join(_WS.sub(" ", p).strip() for p in paras if p.strip())


def plain_text(text: str | None) -> str | None:
    """LaTeX and Markdown reduced to words, whitespace collapsed."""
    if text is None:
        return None
    return join_lines(text)
