"""Text-mode LaTeX (and Markdown) of titles and abstracts → safe HTML for the pages.

arXiv abstracts carry `\\textbf{…}`, `\\emph{…}`, `{\\it …}`, `\\href{…}{…}`, accents and
ties constantly; OpenReview's are Markdown (`**bold**`, `*em*`, `[text](url)`) with LaTeX
math. `render(text, flavour)` turns that markup into `<em>`, `<strong>`, `<code>`, `<a>` …
and leaves math (`$…$`, `$$…$$`, `\\(…\\)`, `\\[…\\]`) as text for KaTeX, which the page's
script renders. The stored text and the JSON keep the raw markup; this is display only.

The input is hostile (anyone can write a title), so:
- every character of the input reaches the output through `markupsafe.escape`; the only
  tags are the fixed ones written here, and they are always balanced (a group closes what
  it opened; an unpaired `*` or `{` is printed as itself);
- links are made only to `http(s)://` URLs with a host and no whitespace, with
  `rel="nofollow noopener ugc"`; titles (already inside a link) get no links at all;
- the work is linear in the input: one tokenising pass, brace and emphasis pairing by
  stacks in one pass, nesting capped at `MAX_DEPTH` (deeper braces print as braces), and a
  failed search for a closing math delimiter is never repeated;
- a literal dollar (`\\$`, or one with no partner) is wrapped in its own `<span>` so KaTeX,
  which pairs dollars within one text node, cannot take it for math.

Flavours (`paperdesk.views.text_markup` picks one by the record's format): `latex` (arXiv,
BibTeX, generic lists), `markdown` (OpenReview: Markdown plus LaTeX), `plain` (Crossref,
OpenAlex, Semantic Scholar: text as it is, math left for KaTeX).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from markupsafe import Markup, escape

from paperdesk.normalize.text import _ACCENT, _DROP_SET, _KEEP_SET, _macro_table, decode_accents

MAX_DEPTH = 24
MAX_URL = 2_000

# One-argument macros → the element their argument is wrapped in ("" = no element).
_WRAP = {
    "emph": "em", "textit": "em", "textsl": "em", "mathit": "em",
    "textbf": "strong", "mathbf": "strong", "bm": "strong", "boldsymbol": "strong",
    "texttt": "code", "mathtt": "code",
    "textsc": "span class=\"sc\"", "underline": "u", "uline": "u",
    "textsuperscript": "sup", "textsubscript": "sub",
}
# Font switches inside a group: `{\em text}`, `{\bf text}`.
_SWITCH = {"em": "em", "it": "em", "sl": "em", "itshape": "em", "bf": "strong",
           "bfseries": "strong", "tt": "code", "ttfamily": "code", "sc": "span class=\"sc\"",
           "scshape": "span class=\"sc\"", "rm": "", "sf": "", "normalfont": "", "upshape": "",
           "mdseries": "", "sffamily": "", "rmfamily": ""}
_CITE = frozenset("cite citep citet citealp citeauthor citeyear ref eqref autoref cref Cref".split())
_TWO_ARG_KEEP_SECOND = frozenset("textcolor colorbox".split())
_ONE_ARG_DROP = frozenset("color label vspace hspace phantom hphantom vphantom".split()) | (
    _DROP_SET - _CITE - {"includegraphics"}
)
# `\X` with X punctuation: what it prints in text mode.
_ESCAPED = {"%": "%", "&": "&", "#": "#", "_": "_", "{": "{", "}": "}", " ": " ", "\n": " ",
            "\\": " ", ",": "\u2009", ";": " ", ":": " ", "!": "", "-": "", "/": "", "@": "",
            "~": "~", "^": "^", "|": "|", "'": "'", "`": "`", '"': '"', "=": "=", ".": "."}
# Symbols whose search-text form (normalize.text) is a word, not what a reader expects.
_SYMBOLS = {"deg": "\u00b0", "textdegree": "\u00b0", "ie": "i.e.", "eg": "e.g.", "etal": "et al.",
            "LaTeX": "LaTeX", "TeX": "TeX", "ldots": "\u2026", "dots": "\u2026", "textellipsis": "\u2026"}
_MD_ESCAPABLE = frozenset("*_[]`()#+!<>")

_ACCENT_TOKEN = r"|(?P<accent>" + _ACCENT.pattern + ")"
_LATEX_TOKEN = re.compile(
    r"(?P<math>\$\$|\$|\\\(|\\\[)" + _ACCENT_TOKEN +
    r"|\\(?P<macro>[A-Za-z]+)\*?"
    r"|\\(?P<esc>.)"
    r"|(?P<open>\{)|(?P<close>\})"
    r"|(?P<dash>---?)|(?P<lq>``)|(?P<rq>'')|(?P<tie>~)",
    re.DOTALL,
)
_MD_TOKEN = re.compile(
    r"(?P<math>\$\$|\$|\\\(|\\\[)" + _ACCENT_TOKEN +
    r"|\\(?P<macro>[A-Za-z]+)\*?"
    r"|\\(?P<esc>.)"
    r"|(?P<open>\{)|(?P<close>\})"
    r"|(?P<dash>---?)|(?P<lq>``)|(?P<rq>'')"
    r"|(?P<mdlink>\[(?P<mdtext>[^\[\]\n]{1,500})\]\((?P<mdurl>https?://[^\s()<>\"]{1,2000})\))"
    r"|(?P<code>`[^`\n]{1,500}`)"
    r"|(?P<delim>\*\*|__|\*|_)",
    re.DOTALL,
)
_PLAIN_TOKEN = re.compile(r"(?P<math>\$\$|\$|\\\(|\\\[)|\\(?P<esc>\$)")
_MARKUP_CHARS = re.compile(r"[\\{}$~`'*_\[-]")
# What every token starts with: `_MARKUP_CHARS` but a lone hyphen or apostrophe (only `--`
# and `''` start one). Most abstracts have hyphens and none of these, and `in` finds a
# substring at C speed, so a text with none is told apart in ~2 µs and taken as plain text.
_TOKEN_STARTS = ("\\", "{", "}", "$", "~", "`", "*", "_", "[", "--", "''")
_CLOSE_MATH = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}
_DOLLAR_END = re.compile(r"(?:[^$\\]|\\.)*?\$", re.DOTALL)


@dataclass
class _Tok:
    kind: str  # text math macro esc open close dash lq rq tie mdlink code delim
    text: str
    pair: int = -1  # index of the matching open/close or emphasis delimiter


def _search(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str] | None:
    """`pattern.search(text, pos)`, trying `pattern.match` only where a token can start
    (every token begins with one of `_MARKUP_CHARS`). Why: the token alternation is tried
    at every character of an abstract's plain text; this was 40 % of rendering a daily
    page (0.39 s for 2,000 feed abstracts, 0.014 s this way, the same tokens)."""
    while True:
        c = _MARKUP_CHARS.search(text, pos)
        if c is None:
            return None
        m = pattern.match(text, c.start())
        if m is not None:
            return m
        pos = c.start() + 1


def _tokens(text: str, flavour: str) -> list[_Tok]:
    pattern = {"latex": _LATEX_TOKEN, "markdown": _MD_TOKEN}.get(flavour, _PLAIN_TOKEN)
    toks: list[_Tok] = []
    unclosed: set[str] = set()
    pos = 0
    while True:
        m = _search(pattern, text, pos)
        if m is None:
            break
        start = m.start()
        if pos < start:
            toks.append(_Tok("text", text[pos:start]))
        kind = m.lastgroup or ""
        pos = m.end()
        if kind == "math":
            left = m.group("math")
            close = _CLOSE_MATH[left]
            stop = -1
            if left not in unclosed:
                if left == "$":
                    em = _DOLLAR_END.match(text, pos)
                    stop = em.end() - 1 if em else -1
                else:
                    stop = text.find(close, pos)
                if stop < 0:
                    unclosed.add(left)  # no closer after here: never search again
            if stop < 0:
                toks.append(_Tok("dollar" if "$" in left else "text", left))
                continue
            pos = stop + len(close)
            toks.append(_Tok("math", text[start:pos]))
        elif kind == "accent":
            toks.append(_Tok("text", decode_accents(m.group(0))))
        else:
            toks.append(_Tok(kind, m.group(0)))
    if pos < len(text):
        toks.append(_Tok("text", text[pos:]))
    _pair(toks)
    return toks


def _flanks(prev: str, nxt: str, delim: str) -> tuple[bool, bool]:
    """(can open, can close) for a Markdown emphasis delimiter between two characters
    ("" = the start or end of the text)."""
    opens = bool(nxt) and not nxt.isspace()
    closes = bool(prev) and not prev.isspace()
    if delim[0] == "_":  # intra-word underscores (snake_case) are not emphasis
        opens = opens and not prev.isalnum()
        closes = closes and not nxt.isalnum()
    return opens, closes


def _pair(toks: list[_Tok]) -> None:
    """Match braces (depth-capped) and Markdown emphasis delimiters, both by stacks."""
    braces: list[int] = []
    emph: list[list[int]] = [[]]
    for i, t in enumerate(toks):
        if t.kind == "open":
            if len(braces) < MAX_DEPTH:
                braces.append(i)
                emph.append([])
        elif t.kind == "close":
            if braces:
                j = braces.pop()
                toks[j].pair, t.pair = i, j
                emph.pop()  # unpaired emphasis inside the group stays literal
        elif t.kind == "delim":
            # a neighbour that is not text (math, a macro) counts as a letter
            prev = (toks[i - 1].text[-1:] if toks[i - 1].kind == "text" else "a") if i else ""
            nxt = (toks[i + 1].text[:1] if toks[i + 1].kind == "text" else "a") \
                if i + 1 < len(toks) else ""
            can_open, can_close = _flanks(prev, nxt, t.text)
            stack = emph[-1]
            if can_close:
                for k in range(len(stack) - 1, max(-1, len(stack) - 50), -1):
                    if toks[stack[k]].text == t.text:
                        toks[stack[k]].pair, t.pair = i, stack[k]
                        del stack[k:]
                        break
                if t.pair >= 0:
                    continue
            if can_open:
                stack.append(i)


def _safe_url(raw: str) -> str | None:
    url = raw.strip()
    if not url or len(url) > MAX_URL or any(c.isspace() or ord(c) < 32 for c in url):
        return None
    if not re.match(r"(?i)https?://", url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return url


def _link(url: str, inner: str) -> str:
    return f'<a href="{escape(url)}" rel="nofollow noopener ugc">{inner}</a>'


class _Renderer:
    def __init__(self, toks: list[_Tok], flavour: str, links: bool):
        self.t = toks
        self.flavour = flavour
        self.links = links
        self.table = _macro_table()

    def raw(self, a: int, b: int) -> str:
        """The source text of tokens a..b (for URLs and citation keys)."""
        return "".join(t.text for t in self.t[a:b])

    def group_at(self, i: int, b: int) -> tuple[int, int] | None:
        """The brace group starting at token i (spaces before it allowed): (open, close)."""
        while i < b and self.t[i].kind == "text" and not self.t[i].text.strip():
            i += 1
        if i < b and self.t[i].kind == "open" and 0 <= self.t[i].pair < b:
            return i, self.t[i].pair
        return None

    def range(self, a: int, b: int, depth: int = 0) -> str:
        out: list[str] = []
        i = a
        while i < b:
            t = self.t[i]
            k = t.kind
            if k == "text":
                out.append(str(escape(t.text)))
            elif k == "math":
                out.append(str(escape(t.text)))
            elif k == "dollar":
                out.append('<span class="dollar">' + str(escape(t.text)) + "</span>")
            elif k == "open":
                if t.pair < 0 or t.pair >= b:
                    out.append("{")
                else:
                    out.append(self.range(i + 1, t.pair, depth + 1))
                    i = t.pair
            elif k == "close":
                out.append("}")
            elif k == "dash":
                out.append("\u2014" if t.text == "---" else "\u2013")
            elif k == "lq":
                out.append("\u201c")
            elif k == "rq":
                out.append("\u201d")
            elif k == "tie":
                out.append("\u00a0")
            elif k == "esc":
                ch = t.text[1]
                if ch == "$":
                    out.append('<span class="dollar">$</span>')
                elif self.flavour == "markdown" and ch in _MD_ESCAPABLE:
                    out.append(str(escape(ch)))
                elif ch in _ESCAPED:
                    out.append(str(escape(_ESCAPED[ch])))
                else:
                    out.append(str(escape(t.text)))
            elif k == "macro":
                i = self.macro(i, b, depth, out)
            elif k == "mdlink":
                m = _MD_TOKEN.fullmatch(t.text)
                assert m is not None
                inner = render(m.group("mdtext"), self.flavour, links=False, depth=depth + 1)
                url = _safe_url(m.group("mdurl"))
                out.append(_link(url, inner) if url and self.links else inner)
            elif k == "code":
                out.append("<code>" + str(escape(t.text[1:-1])) + "</code>")
            elif k == "delim":
                if i < t.pair < b and depth < MAX_DEPTH:
                    tag = "strong" if len(t.text) == 2 else "em"
                    out.append(f"<{tag}>" + self.range(i + 1, t.pair, depth + 1) + f"</{tag}>")
                    i = t.pair
                else:
                    out.append(str(escape(t.text)))
            i += 1
        return "".join(out)

    def macro(self, i: int, b: int, depth: int, out: list[str]) -> int:
        """Render the macro at token i; returns the index of its last token."""
        t = self.t[i]
        name = t.text[1:].rstrip("*")
        g = self.group_at(i + 1, b)
        if name in _SWITCH:
            if depth >= MAX_DEPTH:
                return i  # hostile nesting: the switch is dropped, the text stays
            tag = _SWITCH[name]
            rest = self.range(i + 1, b, depth + 1).lstrip()  # TeX eats the space after
            out.append(f"<{tag}>{rest}</{tag.split()[0]}>" if tag else rest)
            return b - 1
        if g is not None and depth < MAX_DEPTH:
            o, c = g
            if name in _WRAP:
                tag = _WRAP[name]
                out.append(f"<{tag}>" + self.range(o + 1, c, depth + 1) + f"</{tag.split()[0]}>")
                return c
            if name in ("url", "nolinkurl"):
                shown = _url_text(self.raw(o + 1, c))
                url = _safe_url(shown) if name == "url" else None
                out.append(_link(url, str(escape(shown))) if url and self.links
                           else '<span class="url">' + str(escape(shown)) + "</span>")
                return c
            if name == "href":
                g2 = self.group_at(c + 1, b)
                if g2 is None:
                    out.append(str(escape(t.text)))
                    return i
                url = _safe_url(_url_text(self.raw(o + 1, c)))
                inner = _Renderer(self.t, self.flavour, links=False).range(g2[0] + 1, g2[1], depth + 1)
                out.append(_link(url, inner) if url and self.links else inner)
                return g2[1]
            if name in _TWO_ARG_KEEP_SECOND:
                g2 = self.group_at(c + 1, b)
                if g2 is not None:
                    out.append(self.range(g2[0] + 1, g2[1], depth + 1))
                    return g2[1]
            if name in _CITE:
                out.append('<span class="cite">[' + str(escape(self.raw(o + 1, c))) + "]</span>")
                return c
            if name in ("footnote", "thanks"):
                out.append(' <span class="footnote">(' + self.range(o + 1, c, depth + 1) + ")</span>")
                return c
            if name in _ONE_ARG_DROP:
                return c
            if name in _KEEP_SET:  # \text{…}, \mbox{…}, \textrm{…}: the text itself
                out.append(self.range(o + 1, c, depth + 1))
                return c
        repl = _SYMBOLS.get(name) or self.table.get(name)
        if repl and name not in _KEEP_SET and name not in _DROP_SET:
            out.append(str(escape(repl)))
            # `\ss{}` / `\LaTeX{}`: an empty group after a symbol is only a separator
            if g is not None and g[1] == g[0] + 1:
                return g[1]
            return i
        out.append(str(escape(t.text)))  # a paper's own macro (\ours, \method): as written
        return i


def _url_text(raw: str) -> str:
    for esc in ("\\%", "\\#", "\\_", "\\&", "\\~", "\\$"):
        raw = raw.replace(esc, esc[1])
    return raw.strip()


def render(text: str | None, flavour: str = "latex", links: bool = True, depth: int = 0) -> Markup:
    """Title/abstract text → HTML (a `Markup`, safe to put in a template unescaped)."""
    if not text:
        return Markup("")
    if depth > MAX_DEPTH or not any(s in text for s in _TOKEN_STARTS):
        return Markup(escape(text))  # most titles and abstracts: nothing to do
    toks = _tokens(text, flavour)
    return Markup(_Renderer(toks, flavour, links).range(0, len(toks), depth))
