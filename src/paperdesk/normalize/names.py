"""Personal names: clean, split into given/family, decode LaTeX accents, fold to a key.

Sources write one person in many ways: `Fr\\'{e}d\\'{e}ric Klopp`, `Klopp, Frédéric`,
`F. Klopp`, `KLOPP Frédéric`, `Eric~Granger`, `Seung Gyo Jeong2` (an affiliation mark),
`Linxi "Jim" Fan`. `parse_name` turns each into `given`, `family`, a Unicode NFC
`display` ("Given Family Suffix", CJK names family-first as written) and a blocking `key`
(`folded family + first initial`, e.g. `zhang j`) that the author resolver groups on.

Why not `nameparser.HumanName` per name: it cost 0.3-1 ms a name on this (shared, loaded)
machine, against ~3 µs here (the feed has 5.7 names a record and the whole normalisation
budget is ~30 µs a record), and it reads `Guru` in
"Guru Prasath SL" as a title. Its tables are still the source for particles (`van`, `de`,
`bin`, …); the splitting rules below are the few that arXiv-style names need, and results
are cached because prolific authors recur on thousands of records.

The key is made ASCII with `anyascii` (not just accent stripping): `Łukasz` → `lukasz`,
`Straße` → `strasse`, `张伟` → `zhang w`, so the Latin and native spellings of a name can
meet in one block.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final, NamedTuple

from anyascii import anyascii

from paperdesk.model import Author
from paperdesk.normalize.text import latex_to_text

# Lower-case family-name particles (`van`, `der`, `de`, `la`, `bin` …): nameparser's
# prefixes without `mac`/`mc` (they only occur glued to the name), `st`/`ste`/`san`/`santa`
# (they start real surnames too) and the hyphen-ended ones. Written out, not read from
# nameparser at run time: importing it cost each ingest worker ~0.06 CPU-s; a test holds
# this set equal to `particles_from_nameparser()`.
PARTICLES = frozenset(
    """'t aan abu aen af al auf av bar bat bin bint binte binti bon d' da dal das de de' degli
    dei del dela dell' della delle delli dello dell’ dem den der de’ di do dos du dí d’ freiherr
    freiherrin heer het ibn l' la las le los l’ ní op te ter tho thoe ua van vande vander vd
    vel vom von zu ó בן בת آل أبو ابن ابو بن بنت ’t""".split()
)


def particles_from_nameparser() -> frozenset[str]:
    """`PARTICLES` as nameparser's tables give them (the source of the list)."""
    from nameparser.config import CONSTANTS

    skip = {"mac", "mc", "st", "ste", "san", "santa"}
    return frozenset(p for p in CONSTANTS.prefixes if p not in skip and not p.endswith("-"))


# Generational suffixes, and the two degrees that trail names (`Zhou Fengjin MD`); only
# taken off a name of three or more words.
_SUFFIXES = frozenset(
    "jr jr. sr sr. snr snr. jnr jnr. junior senior ii iii iv esq esq. md m.d. phd ph.d.".split()
)
_TITLES = frozenset("dr dr. prof prof. professor mr mr. mrs mrs. ms ms. sir".split())
_NICKNAME = re.compile(r"\s*(?:\"[^\"]*\"|“[^”]*”|\([^()]*\))\s*")
_BARE_UMLAUT = re.compile(r'"([AEIOUYaeiouy])')  # Rapha"el (an accent with its \ lost)
_BARE_GRAVE = re.compile(r"`([aeiouAEIOU])(?=[a-z]|$|\s)")  # Valli`eres, Nicol`o
_EDGE_JUNK = re.compile(r"^(?:[^\w']|[\d_])+|(?:[^\w.]|[\d_])+$")
_INITIALS_RUN = re.compile(r"^(?:[A-Z]\.)+[A-Z]\.?$")  # J.P. or J.P
_TRAILING_INITIALS = re.compile(r"^(?:[A-Z]\.?|[B-DF-HJ-NP-TV-XZ]{2,3})$")
_DOTTED_INITIALS = re.compile(r"^[A-Z]\.(?:-?[A-Z]\.)*$")  # Y.  J.-P.  J.P.
_KEY_DROP = re.compile(r"[^a-z ]+")


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x4E00 <= o <= 0x9FFF  # CJK unified ideographs
        or 0x3400 <= o <= 0x4DBF
        or 0x3040 <= o <= 0x30FF  # kana
        or 0xAC00 <= o <= 0xD7AF  # hangul syllables
        or 0xF900 <= o <= 0xFAFF
        or 0x20000 <= o <= 0x2FA1F
    )


def clean_name(text: str) -> str:
    """A name as written, made plain: LaTeX decoded, marks and nicknames dropped, NFC.

    `Fr\\'{e}d\\'{e}ric` → `Frédéric`, `Eric~Granger` → `Eric Granger`, `Jeong2` → `Jeong`,
    `Linxi "Jim" Fan` → `Linxi Fan`, `Young-Jun_Lee` → `Young-Jun Lee`.
    """
    s = text
    if "\\" in s or "{" in s or "}" in s or "~" in s or "$" in s:
        # after decoding, a brace, tilde or dollar left in a name is never part of it (an
        # escaped `\$` kept would be read as math the next time: not idempotent)
        s = latex_to_text(s).replace("{", "").replace("}", "").replace("~", " ").replace("$", "")
    if '"' in s:
        s = _BARE_UMLAUT.sub(lambda m: m.group(1) + "\u0308", s)
    if "`" in s:
        s = _BARE_GRAVE.sub(lambda m: m.group(1) + "\u0300", s).replace("`", "'")
    if '"' in s or "“" in s or "(" in s:
        s = _NICKNAME.sub(" ", s)
    if "_" in s:
        s = s.replace("_", " ")
    s = _strip_edges(" ".join(s.split()))
    if not s.isascii() and not unicodedata.is_normalized("NFC", s):
        s = unicodedata.normalize("NFC", s)
    return s


def _strip_edges(s: str) -> str:
    """Drop affiliation marks and stray symbols at either end (`Jeong2`, `Zhang†`, `:`)."""
    if s and not (s[0].isalpha() and (s[-1].isalpha() or s[-1] == ".")):
        s = _EDGE_JUNK.sub("", s).strip()
        if not any(c.isalpha() for c in s):
            return ""
    return s


def _tidy_part(part: str | None) -> str | None:
    """A given or family part as split: edges stripped, None when no letter is left."""
    if not part:
        return None
    return _strip_edges(part) or None


def _title_word(tok: str) -> str:
    """`ZHANG` → `Zhang`, `JEAN-PIERRE` → `Jean-Pierre`, `O'NEILL` → `O'Neill`."""
    return tok.title() if tok.isupper() and sum(c.isalpha() for c in tok) >= 2 else tok


def _fix_initial(tok: str) -> str:
    """`Y` → `Y.`, `J.P.` → `J. P.`: one spelling of initials for display and matching."""
    if len(tok) > 2 and "." not in tok:
        return tok
    if len(tok) == 1 and tok.isalpha() and tok.isupper() and tok.isascii():
        return tok + "."
    if _INITIALS_RUN.match(tok):
        return " ".join(c + "." for c in tok if c.isalpha())
    return tok


def _split_cjk(s: str) -> tuple[str | None, str]:
    """(given, family) of a CJK name written without a space, family first.

    Two-, three-character names are 1 + rest (张伟, 김철수, 王小明); four characters are
    2 + 2 (Japanese 山田太郎, Chinese compound 欧阳娜娜). A heuristic: no dictionary.
    """
    cut = 2 if len(s) >= 4 else 1
    return (s[cut:] or None), s[:cut]


def split_name(s: str) -> tuple[str | None, str | None, str | None]:
    """(given, family, suffix) of a cleaned name; family None only when `s` is empty."""
    if not s:
        return None, None, None
    suffix: str | None = None
    if "," in s:
        parts = [p.strip() for p in s.split(",") if p.strip()]
        if len(parts) >= 2 and parts[-1].lower() in _SUFFIXES:
            suffix = parts.pop()
        if len(parts) >= 2:  # Last, First[, more]
            family = parts[0]
            given = " ".join(parts[1:])
            gtoks = [_fix_initial(t) for t in given.split()]
            return " ".join(gtoks) or None, family, suffix
        s = parts[0] if parts else ""
        if not s:
            return None, None, suffix
    toks = s.split(" ")
    if len(toks) > 2 and toks[-1].lower() in _SUFFIXES:
        suffix = toks.pop()
    while len(toks) > 2 and toks[0].lower() in _TITLES:
        toks.pop(0)
    if len(toks) == 1:
        tok = toks[0]
        if len(tok) >= 2 and all(_is_cjk(c) for c in tok):
            cjk_given, cjk_family = _split_cjk(tok)
            return cjk_given, cjk_family, suffix
        return None, tok, suffix
    ascii_only = s.isascii()
    if not ascii_only and _is_cjk(toks[0][0]):  # 山田 太郎: East Asian order, family first
        return " ".join(toks[1:]), toks[0], suffix
    # KLOPP Frédéric / ZHANG Wei: a capitalised family name written first.
    first = toks[0]
    if (
        first.isupper()
        and len(first) >= 2
        and "." not in first
        and any(c in "AEIOUY" for c in first)  # `KC Tan`: initials, not a family name
        and not all(t.isupper() for t in toks[1:])
    ):
        n = 1
        while n < len(toks) - 1 and toks[n].isupper() and "." not in toks[n]:
            n += 1
        family = " ".join(_title_word(t) for t in toks[:n])
        return " ".join(_fix_initial(t) for t in toks[n:]), family, suffix
    # Bengio Y. / Serre J.-P.: family first, then only dotted initials.
    if (
        "." in s
        and len(first) >= 2
        and "." not in first
        and all(_DOTTED_INITIALS.match(t) for t in toks[1:])
    ):
        return " ".join(toks[1:]), first, suffix
    # Keerthana R / Harsha KG: one word, then its initials (the Vancouver order).
    if (
        len(toks) == 2
        and len(first) >= 2
        and not first.isupper()
        and _TRAILING_INITIALS.match(toks[1])
    ):
        return " ".join(c + "." for c in toks[1] if c.isalpha()), first, suffix
    if s.isupper():  # LEI BAI: all capitals, nothing tells the order; fix the case
        toks = [_title_word(t) for t in toks]
    # Default: family is the last word plus any particles before it (van der Waals).
    i = len(toks) - 1
    while i > 1 and toks[i - 1].lower() in PARTICLES:
        i -= 1
    given = " ".join([_fix_initial(t) for t in toks[:i]])
    return given or None, toks[i] if i == len(toks) - 1 else " ".join(toks[i:]), suffix


def _fold(text: str) -> str:
    """ASCII, lower case, letters and single spaces only (hyphens become spaces)."""
    s = anyascii(text).lower() if not text.isascii() else text.lower()
    s = _KEY_DROP.sub(" ", s.replace("'", "")) if not s.isalpha() else s
    return " ".join(s.split())


def name_key(given: str | None, family: str | None) -> str | None:
    """Blocking key `family initial` (`zhang j`): folded, particles dropped.

    Particles that stand as words go (`Laura De Lorenzo` and `L. Lorenzo`, `Beethoven,
    Ludwig van` and `L. van Beethoven` meet); hyphen-joined parts stay (`Al-Masri` →
    `al masri`, and `Hyun-Bin` does not lose `bin`). None when there are no letters.
    """
    fam_raw = family or ""
    if " " in fam_raw:
        words = [w for w in fam_raw.split() if w.lower() not in PARTICLES]
        fam_raw = " ".join(words) or fam_raw
    fam = _fold(fam_raw)
    initial = ""
    if given:
        g = _fold(given)
        initial = g[:1] if g[:1] != " " else ""
    if not fam:
        return initial or None
    return f"{fam} {initial}" if initial else fam


def compose_display(given: str | None, family: str | None, suffix: str | None = None) -> str:
    """`Given Family Suffix`; CJK names family-first without a space, as they are written."""
    if family and given and not family.isascii() and _is_cjk(family[0]) and _is_cjk(given[0]):
        return family + given
    return " ".join(p for p in (given, family, suffix) if p)


class ParsedName(NamedTuple):
    """One parsed name (a tuple: cheap to build and to keep in the cache)."""

    given: str | None
    family: str | None
    suffix: str | None
    display: str
    key: str | None


# Words that send a plain-looking name to the full rules: particles, titles, suffixes.
# (One set for all three positions checked: a name merely sent the long way round by an
# unneeded match gets the same answer, only slower.) `_FAST_BLOCK_CAP` holds the same words
# as a plain name writes them (`Van`, `Der-Bin`, `J.`).
_FAST_BLOCK: Final = PARTICLES | _TITLES | _SUFFIXES
_FAST_BLOCK_CAP: Final = frozenset(
    "-".join(seg[:1].upper() + seg[1:] for seg in w.split("-")) for w in _FAST_BLOCK
)


def _plain_parts(name: str) -> tuple[str, str | None, str] | None:
    """(first word, last given word or None for two words, family) of a name of
    capitalised ASCII words (hyphenated or not) and dotted initials ending in a word —
    `Anna Kochnev Goldstein`, `S. V. Jaya Chand`, `Yi-Fan Zhang` (97 % of the feed's
    names); None for any other.

    One pass over the characters, without building word lists.
    tests/test_normalize.py holds it equal to a regular expression of that shape
    on every name of the feed and on generated text."""
    n = len(name)
    i = 0
    tokens = 0
    first_end = 0
    prev_start = 0
    last_start = 0
    last_is_word = False
    while i < n:
        c = ord(name[i])
        if c < 65 or c > 90:  # every word or initial starts with A-Z
            return None
        start = i
        i += 1
        if i < n and ord(name[i]) == 46:  # an initial: `J.`
            i += 1
            is_word = False
        else:  # a word, `Ab` or `Ab-Cd`: each hyphen-joined part is A-Z then a-z+
            while True:
                j = i
                while i < n and 97 <= ord(name[i]) <= 122:
                    i += 1
                if i == j:
                    return None
                if i < n and ord(name[i]) == 45:  # `-`, then the next part's capital
                    i += 1
                    if i >= n or ord(name[i]) < 65 or ord(name[i]) > 90:
                        return None
                    i += 1
                    continue
                break
            is_word = True
        if tokens == 0:
            first_end = i
        prev_start = last_start
        last_start = start
        tokens += 1
        last_is_word = is_word
        if i < n:  # one space, then another word or initial
            if ord(name[i]) != 32 or i + 1 >= n:
                return None
            i += 1
    if tokens < 2 or not last_is_word:
        return None
    return (
        name[:first_end],
        name[prev_start : last_start - 1] if tokens > 2 else None,
        name[last_start:],
    )


def plain_name(name: str) -> tuple[str, str, str] | None:
    """(given, family, key) of a plain ASCII name (capitalised words and initials, no
    particle, title or suffix at the places the rules look), whose display is the name
    itself; None for any other name.

    97 % of arXiv's names are plain. This gives what the rules give them (a test holds the
    two together on the feed), for a fraction of their cost, so `parse_name` does not
    cache them.
    Its words are ASCII `Capitalised` ones or initials, so `word.lower() in _FAST_BLOCK`
    is `word in _FAST_BLOCK_CAP`, without lowering each.
    """
    parts = _plain_parts(name)
    if parts is None:
        return None
    first, last_given, family = parts
    block = _FAST_BLOCK_CAP
    if family in block or first in block or last_given in block:
        return None
    low = family.lower()
    if "-" in low:
        low = low.replace("-", " ")
    return name[: len(name) - len(family) - 1], family, f"{low} {name[0].lower()}"


def parse_name(name: str) -> ParsedName:
    """Clean and split one name as a source wrote it.

    A plain name (nearly all of arXiv's) by `plain_name`; the others through a cache (names recur: prolific authors are
    on thousands of records) to the rules.
    """
    plain = plain_name(name)
    if plain is not None:
        return tuple.__new__(ParsedName, (plain[0], plain[1], None, name, plain[2]))
    return _parse_name_cached(name)


def parse_name_uncached(name: str) -> ParsedName:
    """`parse_name` without its cache (every name a first sighting)."""
    plain = plain_name(name)
    if plain is not None:
        return tuple.__new__(ParsedName, (plain[0], plain[1], None, name, plain[2]))
    return _parse_unplain(name)


def _parse_unplain(name: str) -> ParsedName:
    """A name that is not plain ASCII: plain names in composed Unicode (`Jürgen Müller`,
    `Łukasz Kaiser`) by a short path, the rest by every rule."""
    if not name.isascii() and _plain_unicode_name(name):
        given, family = name.rsplit(" ", 1)
        block = _FAST_BLOCK
        if (
            family.lower() not in block
            and given.partition(" ")[0].lower() not in block
            and given[given.rfind(" ") + 1 :].lower() not in block
        ):
            return tuple.__new__(ParsedName, (given, family, None, name, name_key(given, family)))
    return parse_name_fully(name)


_parse_name_cached = functools.lru_cache(maxsize=65_536)(_parse_unplain)


def clear_name_cache() -> None:
    """Empty `parse_name`'s cache (benchmarks time first sightings)."""
    _parse_name_cached.cache_clear()


def _plain_unicode_name(name: str) -> bool:
    """Capitalised letter-only words in composed Unicode, no CJK, no lone letters."""
    toks = name.split(" ")
    return (
        len(toks) >= 2
        and min(map(len, toks)) > 1
        and name.istitle()
        and name.replace(" ", "").replace("-", "").isalpha()
        and "-" not in (name[0], name[-1])
        and not ("-" in name and ("--" in name or " -" in name or "- " in name))
        and not _is_cjk(name[0])
        and unicodedata.is_normalized("NFC", name)
    )


def parse_name_fully(name: str) -> ParsedName:
    """`parse_name` without the short path or the cache: every rule applied."""
    cleaned = clean_name(name)
    split_given, split_family, suffix = split_name(cleaned)
    given: str | None = _tidy_part(split_given)
    family: str | None = _tidy_part(split_family)
    if family is None and given is not None:
        family = given
        given = None
    display = compose_display(given, family, suffix) or cleaned
    return ParsedName(given, family, suffix, display, name_key(given, family))


def normalize_author(author: Author) -> Author:
    """Fill `display`, `key`, and `given`/`family` when the source did not split them.

    When the source did split the name, its split wins (cleaned the same way); the suffix
    and the fallbacks still come from the full name. Idempotent: a second call finds the
    split it made and composes the same display and key from it.
    """
    parsed = parse_name(author.name)
    if author.family is None and author.given is None:
        author.given, author.family, _, author.display, author.key = parsed
        return author
    if author.given == parsed.given and author.family == parsed.family:
        # The source split the name as the rules do (the bulk snapshot's `authors_parsed`
        # nearly always; a record finished before): cleaning both parts again and composing
        # would give the parsed display and key (the idempotence the tests hold), at ~3x the
        # cost of this comparison.
        author.display, author.key = parsed.display, parsed.key
        return author
    return _apply_split(author, parsed)


def _apply_split(author: Author, parsed: ParsedName) -> Author:
    """The source's own split of a name, cleaned; suffix and fallbacks from `parsed`."""
    given = clean_name(author.given) if author.given else None
    family = clean_name(author.family) if author.family else None
    if not given and not family:  # nothing usable in the split: use the parsed name
        given, family = parsed.given, parsed.family
    author.given, author.family = given or None, family or None
    author.display = compose_display(author.given, author.family, parsed.suffix) or parsed.display
    author.key = name_key(author.given, author.family) or parsed.key
    return author
