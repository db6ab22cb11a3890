"""Plain text for indexing from titles and abstracts that carry LaTeX, Markdown, HTML/JATS
and arXiv's hard line breaks. The original text is always kept for display; this is only
what the search index and the matchers read.

Why regexes and not pylatexenc's `LatexNodes2Text` on every abstract: measured on the
daily feed it costs ~13 ms for a 700-character abstract (the ingest budget is ~30 µs a
record), it treats an unescaped `%` as a comment and silently drops the rest of the line
(17 % of arXiv abstracts write `%` bare: "improves by 5% over ..."), and it renders
`\\mathcal{NC}` as script letters `𝒩𝒞` that nobody types into a search box. So the common
LaTeX of abstracts is reduced here with a few linear-time regexes, each pass gated on a
cheap character test; pylatexenc is still the source of truth for *what* the ~830
argument-free macros mean (`\\alpha` → α, `\\leq` → ≤, `\\ss` → ß): its table is read once.

Everything here treats its input as hostile: every pattern is linear (no nested
quantifiers), the brace-unwrapping loop is bounded, and nothing raises on odd text.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata

_PARA = re.compile(r"\n[ \t\r\f\v]*\n")

# --- LaTeX ------------------------------------------------------------------------------

# Text-mode accents: \'e \'{e} {\'e} \"{\i} \c{c} \c c \v{S} \~n \H{o}; arXiv also carries
# them in author names. Single-character accent commands take their argument right away;
# `\c` and `\v` a brace or a space and a letter; `\H \k \b \d \r \u` only a brace (a real
# abstract writes `\b geometric` for its own bold macro, not a macron under the g).
_ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    '"': "\u0308",
    "^": "\u0302",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "c": "\u0327",
    "H": "\u030b",
    "k": "\u0328",
    "b": "\u0331",
    "d": "\u0323",
    "r": "\u030a",
    "u": "\u0306",
    "v": "\u030c",
}
_ACCENT = re.compile(
    r"\\(?:([\'`\"^~=.])\s*|([cv])(?:\s+|(?=\{))|([Hkbdru])(?=\{))"
    r"(?:\{\s*(\\[ij]|[^\W\d_])\s*\}|(\\[ij](?![A-Za-z])|[^\W\d_]))"
)

# Macros whose (last) brace argument is the text to keep: formatting, fonts, math alphabets,
# math accents (`\hat{x}` is searched as x), boxes.
_MATH_ALPHA = (
    "mathcal mathbb mathbf mathrm mathit mathsf mathtt mathfrak mathscr mathnormal "
    "boldsymbol bm pmb operatorname mathop mathbin mathrel"
)
_FORMAT = (
    "textbf textit textsl textsc textsf texttt textrm textup textmd textnormal text emph "
    "underline uline overline mbox hbox fbox makebox textsubscript textsuperscript "
    "hat widehat tilde widetilde bar vec dot ddot check breve acute grave overrightarrow "
    "overleftarrow underbrace overbrace ensuremath url nolinkurl footnote thanks ce pu "
    "textup emphasize"
)
# Macros whose argument is not text of the paper: references, layout, labels.
_DROP = (
    "cite citep citet citealp citeauthor citeyear ref eqref autoref cref Cref pageref label "
    "vspace hspace includegraphics bibliography bibliographystyle footnotemark phantom "
    "vphantom hphantom unicode"
)
_DROP_SET = frozenset(_DROP.split())
# Two-argument macros whose first argument is not text: `\href{url}{text}` → text,
# `\textcolor{red}{x}` → x. The first argument is dropped like a `_DROP` one; the second
# is then a bare group, unwrapped like any other.
_FIRST_ARG_DROP = frozenset("href hyperlink textcolor colorbox color".split())
_KEEP_SET = frozenset((_MATH_ALPHA + " " + _FORMAT).split())

# \frac{a}{b} → a/b (innermost first).
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
# Any other macro with one brace argument (and an optional [..] argument), innermost first.
_ONE_ARG = re.compile(r"\\([A-Za-z]+)\*?\s*(?:\[[^\[\]{}]*\]\s*)?\{([^{}]*)\}")
# A bare group `x_{i}` (not a macro's argument: no letter, `]` or `}` right before it).
_GROUP = re.compile(r"\{(?<![A-Za-z\]}\\]\{)([^{}]*)\}")
_ENV = re.compile(r"\\(?:begin|end)\s*\{[A-Za-z*]*\}")
# The remaining backslash sequences: a named macro or one escaped character.
_MACRO = re.compile(r"\\(?:([A-Za-z]+)\*?|(.))", re.DOTALL)
# Patterns start with a literal character so `re` can skip ahead: a leading look-behind
# makes Python try the whole pattern at every position (50x slower on an abstract).
_DOLLAR = re.compile(r"\$(?<!\\\$)\$*")
# One inline-math span (`\(…\)` and `$$…$$` are turned into `$…$` first). Content cannot
# hold a `$`, so each attempt stops at the next one: linear on any input (an escaped `\$`
# inside math ends the span early, which only affects where subscripts are joined).
_MATH_SPAN = re.compile(r"\$(?<!\\\$)([^$]*)\$")
_TIE = re.compile(r"~(?<=[^\s\\]~)(?=[\w\\])")

# No-argument macros pylatexenc does not know (or renders unhelpfully for search).
_OVERRIDES = {
    # font switches and sizing carry no words
    **dict.fromkeys(
        "it bf rm em sf tt sc sl cal normalfont small footnotesize scriptsize tiny large "
        "Large LARGE huge Huge normalsize displaystyle textstyle scriptstyle left right "
        "bigl bigr Bigl Bigr big Big bigg Bigg middle limits nolimits noindent centering "
        "maketitle protect relax xspace mathstrut strut smallskip medskip bigskip".split(),
        "",
    ),
    **dict.fromkeys("item newline linebreak par quad qquad".split(), " "),
    "LaTeX": "LaTeX",
    "TeX": "TeX",
    "deg": "deg",
    "eg": "e.g.",
    "ie": "i.e.",
    "etal": "et al.",
    "etc": "etc.",
    "vs": "vs.",
    "textasciitilde": "~",
    "textbackslash": " ",
    "i": "i",
    "j": "j",
    "S": "§",
    "P": "¶",
    "copyright": "©",
    "textregistered": "®",
    "texttrademark": "™",
    "textdegree": "°",
    "textpm": "±",
    "sqrt": "√",
    "ne": "≠",
    "land": "∧",
    "lor": "∨",
    "colon": ":",
    "percent": "%",
    "degree": "°",
    "celsius": "°C",
    "upmu": "μ",
    "dim": "dim",
    "gcd": "gcd",
    "arg": "arg",
    "pmod": "mod",
    "bmod": "mod",
    "not": "",
    "allowbreak": "",
    "expandafter": "",
    "uppercase": "",
    "romannumeral": "",
}
# Escaped single characters: `\%` → %, `\\` → space; thin spaces become spaces.
_ESCAPES = {
    "%": "%",
    "&": "&",
    "_": "_",
    "#": "#",
    "$": "$",
    "{": "\ue000",
    "}": "\ue001",
    "\\": " ",
    ",": " ",
    ";": " ",
    ":": " ",
    "!": "",
    " ": " ",
    "\n": " ",
    "/": "",
    "-": "",
    "(": "",
    ")": "",
    "[": "",
    "]": "",
}


@functools.cache
def _macro_table() -> dict[str, str]:
    """Argument-free macros → text, read once from pylatexenc's own latex2text table."""
    from pylatexenc.latex2text import get_default_latex_context_db
    from pylatexenc.latexwalker import get_default_latex_context_db as walker_db

    text_db = get_default_latex_context_db()
    arg_db = walker_db()
    table: dict[str, str] = {}
    for spec in text_db.iter_macro_specs():
        repl = spec.simplify_repl
        walker_spec = arg_db.get_macro_spec(spec.macroname)
        takes_args = walker_spec is not None and bool(walker_spec.args_parser.argspec)
        if isinstance(repl, str) and not takes_args and "%" not in repl:
            table[spec.macroname] = repl
    table.update(_OVERRIDES)
    for name in _KEEP_SET | _DROP_SET | _FIRST_ARG_DROP:
        table.setdefault(name, "")
    return table


def _accent(m: re.Match[str]) -> str:
    mark = _ACCENTS[m.group(1) or m.group(2) or m.group(3)]
    base = m.group(4) or m.group(5)
    if base.startswith("\\"):
        base = base[1]  # \i, \j: dotless i/j take the accent as plain i/j
    return unicodedata.normalize("NFC", base + mark)


def decode_accents(text: str) -> str:
    """Only the LaTeX text accents (`\\'e`, `{\\"o}`, `\\c{c}`) → composed Unicode."""
    if "\\" not in text:
        return text
    return _ACCENT.sub(_accent, text)


def _math(m: re.Match[str]) -> str:
    """Subscript marks go inside math: `Co$_2$YPb` → `Co2YPb`, matching `Co<sub>2</sub>`."""
    body = m.group(1)
    # a placeholder, not "": `\eta_E` must not become the macro `\etaE`
    return body.replace("_", "\ue002") if "\\_" not in body else body


def _one_arg(m: re.Match[str]) -> str:
    name = m.group(1)
    if name in _DROP_SET or name in _FIRST_ARG_DROP:
        return ""
    arg = m.group(2)
    if name == "sqrt":
        return f"√({arg})"
    if not arg.strip() and name not in _KEEP_SET:
        return _macro_table().get(name, name)  # `\ours{}`: a paper-local name
    return arg


def _macro(m: re.Match[str]) -> str:
    name = m.group(1)
    if name is not None:
        # Unknown macros are mostly paper-local names (\ours, \method, \sysname): keep
        # the name as a word rather than lose it.
        repl = _macro_table().get(name, name)
        # Operator names (\log, \max) and unknown names are words: keep them apart.
        return f" {repl} " if len(repl) > 1 and repl.isalpha() else repl
    ch = m.group(2)
    return _ESCAPES.get(ch, ch)


def latex_to_text(text: str) -> str:
    """Common LaTeX of titles and abstracts → words (`$\\mathcal{NC}$` → `NC`).

    Multi-character `in` tests cost a scan each, so they sit behind one-character ones.
    """
    s = text
    if "$" in s or "\\(" in s:
        if "_" in s:  # join subscripts inside math spans (needs the spans delimited by $)
            if "\\(" in s or "\\[" in s:
                s = s.replace("\\(", "$").replace("\\)", "$").replace("\\[", "$")
                s = s.replace("\\]", "$")
            if "$$" in s:
                s = s.replace("$$", "$")
            s = _MATH_SPAN.sub(_math, s)
        if "$" in s:
            s = _DOLLAR.sub("", s) if "\\$" in s else s.replace("$", "")
    if "~" in s:
        s = _TIE.sub(" ", s)
    if "\\" in s:
        s = _ACCENT.sub(_accent, s)
        if "\\begin" in s:
            s = _ENV.sub(" ", s)
        if "{" in s:
            has_frac = "frac" in s
            for _ in range(12):  # innermost groups first; bounded against hostile nesting
                before = s
                if has_frac:
                    s = _FRAC.sub(r"\1/\2", s)
                s = _ONE_ARG.sub(_one_arg, s)
                if "{" not in s:
                    break
                if s == before:
                    s = _GROUP.sub(r"\1", s)
                    if s == before:
                        break
        s = _MACRO.sub(_macro, s)
    if "{" in s or "}" in s:
        s = s.replace("{", "").replace("}", "")
    if "\ue000" in s or "\ue001" in s or "\ue002" in s:
        s = s.replace("\ue000", "{").replace("\ue001", "}").replace("\ue002", "")
    if "`" in s:
        s = s.replace("``", '"')
    return s


# --- Markdown ---------------------------------------------------------------------------

_MD_LINK = re.compile(r"\[([^\[\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"\n]*\")?\)")
_MD_CODE = re.compile(r"`(`*)([^`\n]+?)`\1")
_MD_STRONG = re.compile(r"\*\*(?=\S)([^\n]+?)(?<=\S)\*\*")
_MD_STRONG_U = re.compile(r"__(?=\S)([^\n]+?)(?<=\S)__")
_MD_EM = re.compile(r"\*(?<![\w*\\]\*)(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_MD_EM_U = re.compile(r"_(?<![\w\\]_)(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?!\w)")
_MD_HEAD = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+")


def markdown_to_text(text: str) -> str:
    """Markdown links, images, code, emphasis and headings → their text."""
    s = text
    if "]" in s and "](" in s:
        s = _MD_LINK.sub(r"\1", s)  # an image's `!` stays before its alt text: harmless
    if "`" in s:
        s = _MD_CODE.sub(r"\2", s)
    # one-character tests first: a two-character `in` walks the text ~50x slower
    if "*" in s:
        if "**" in s:
            s = _MD_STRONG.sub(r"\1", s)
        s = _MD_EM.sub(r"\1", s)
    if "_" in s:
        if "__" in s:
            s = _MD_STRONG_U.sub(r"\1", s)
        s = _MD_EM_U.sub(r"\1", s)
    if "#" in s and (s.startswith("#") or "\n#" in s or "\n #" in s):
        s = _MD_HEAD.sub("", s)
    return s


# --- HTML / JATS ------------------------------------------------------------------------

# Only tags we know (HTML inline/block, any JATS or MathML namespaced tag) are removed:
# abstracts about language models write `<think>` or `<eos>` as words, and those stay.
_BLOCK_TAGS = "p|br|div|li|ul|ol|h[1-6]|title|sec|list|list-item|abstract|tr|td|th|table|hr"
_INLINE_TAGS = "i|b|em|strong|sub|sup|a|span|u|s|tt|code|sc|small|big|font|italic|bold|inline-formula|tex-math|math|mi|mo|mn|msub|msup|mrow"
_TAG = re.compile(
    r"<(/?)((?:jats|mml|xlink|xhtml|m):[\w.-]+|(?:" + _BLOCK_TAGS + "|" + _INLINE_TAGS + r"))"
    r"(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_BLOCK = re.compile(r"(?:jats:|xhtml:)?(?:" + _BLOCK_TAGS + r")$", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def _tag(m: re.Match[str]) -> str:
    return " " if _BLOCK.match(m.group(2)) else ""


def html_to_text(text: str) -> str:
    """Known HTML/JATS/MathML tags removed (block tags leave a space), entities decoded."""
    s = text
    if "<" in s:
        s = _TAG.sub(_tag, s)
    if "&" in s and _ENTITY.search(s):
        s = html.unescape(s)
    return s


# --- entry point ------------------------------------------------------------------------

# Whitespace other than " " and "\n" that str.split() also splits on. Checked one character
# at a time: a one-character `in` is a memchr, while a regex character class or a
# two-character `in` walks the text ~50x slower (measured on the feed's abstracts).
_UNICODE_WS = "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def plain_text(text: str | None) -> str | None:
    """Title or abstract → plain words for indexing.

    arXiv's hard line breaks are joined, blank-line paragraph breaks become one newline,
    known tags and entities are removed, Markdown and LaTeX are reduced to their words,
    whitespace is collapsed. Returns None for None, and "" when only markup was there.
    Every stage is gated on one-character tests, so plain prose costs two scans.
    """
    if text is None:
        return None
    s = text
    if "\x00" in s or "\ue000" in s or "\ue001" in s or "\ue002" in s:
        for private in ("\x00", "\ue000", "\ue001", "\ue002"):  # our placeholders
            s = s.replace(private, "")
    if "<" in s or "&" in s:
        s = html_to_text(s)
    if "]" in s or "`" in s or "*" in s or "_" in s or "#" in s:
        s = markdown_to_text(s)
    if "\\" in s or "$" in s or "~" in s or "{" in s or "}" in s:
        s = latex_to_text(s)
    return collapse_spaces(s)


def _odd_whitespace(s: str) -> bool:
    """Any whitespace but " " (str.split() splits on all of them)?"""
    if "\t" in s or "\r" in s or "\x0b" in s or "\x0c" in s:
        return True
    if "\x1c" in s or "\x1d" in s or "\x1e" in s or "\x1f" in s:
        return True
    if s.isascii():
        return False
    for c in _UNICODE_WS:  # rare: only texts with non-ASCII characters get here
        if c in s:
            return True
    return False


def collapse_spaces(text: str) -> str:
    """Whitespace runs → one space, a blank line (paragraph break) → one newline.

    The common case (single spaces and arXiv's `\n` line breaks, nothing else) costs one
    `replace` and a few C-level scans instead of splitting into ~200 word objects.
    """
    s = text.replace("\n", " ") if "\n" in text else text
    if "  " in s or _odd_whitespace(s):
        return join_lines(text)
    return s.strip(" ")


def join_lines(text: str) -> str:
    """Join arXiv's hard-wrapped lines; keep blank-line paragraph breaks as one newline."""
    if "\n" not in text or not _PARA.search(text):
        return " ".join(text.split())
    return "\n".join(j for j in (" ".join(p.split()) for p in _PARA.split(text)) if j)
