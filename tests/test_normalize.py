"""Normal forms: ids, DOIs, names and plain text, on strings taken from the shared data.

Table rows quote real titles, abstracts, author names and ids from
`../shared/data/arxiv/daily-feed-*.jsonl.gz` and the arXiv `.abs` test files (the arXiv id
in a comment says where); whole-corpus checks read those files directly and skip when
they are absent. Property tests (hypothesis) cover what no table can: arbitrary text never
crashes, `finish` is idempotent, keys are lower-case ASCII.
"""

from __future__ import annotations

import copy
import io
import json
import re
import time
from itertools import islice

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import open_feed, shared_file
from paperdesk.errors import ParseError
from paperdesk.model import Author, SourceRecord, Version
from paperdesk.normalize import LIMITS, finish
from paperdesk.normalize import names as names_module
from paperdesk.normalize.ids import arxiv_id, normalize_doi, openreview_id, split_arxiv_id
from paperdesk.normalize.names import (
    PARTICLES,
    _apply_split,
    normalize_author,
    parse_name,
    parse_name_fully,
    parse_name_uncached,
    particles_from_nameparser,
)
from paperdesk.normalize.text import plain_text
from paperdesk.sources import arxiv_snapshot

# --- arXiv ids --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hep-th/9709111v2", ("hep-th/9709111", "v2")),
        ("arXiv:hep-th/9709111", ("hep-th/9709111", None)),  # .abs header line
        ("math.AG/0101001", ("math/0101001", None)),  # subject class dropped
        ("https://export.arxiv.org/abs/math.AG/0101001v1", ("math/0101001", "v1")),
        ("HEP-TH/9709111", ("hep-th/9709111", None)),
        ("cond-mat/0001001v12", ("cond-mat/0001001", "v12")),
        ("2401.01234v3", ("2401.01234", "v3")),
        ("0704.0001", ("0704.0001", None)),  # first new-style id
        ("arXiv:1501.00001", ("1501.00001", None)),  # first 5-digit id
        ("arXIv:0810.3163v1", ("0810.3163", "v1")),  # odd case seen in the .abs data
        ("https://arxiv.org/abs/2503.11677", ("2503.11677", None)),  # feed `abs` field
        ("https://arxiv.org/pdf/2401.01234v3.pdf", ("2401.01234", "v3")),
        ("http://arxiv.org/pdf/hep-th/9709111v1.pdf", ("hep-th/9709111", "v1")),
        ("oai:arXiv.org:hep-th/9709111", ("hep-th/9709111", None)),
        ("oai:arXiv.org:0704.0001", ("0704.0001", None)),
        ("10.48550/arXiv.2401.01234", ("2401.01234", None)),  # arXiv's own DOI
        ("10.48550/arxiv.2401.01234", ("2401.01234", None)),  # …as normalize_doi leaves it
        ("https://arxiv.org/abs/2401.01234%76%32", ("2401.01234", "v2")),  # URL-encoded
        ("2401.01234v0", ("2401.01234", None)),  # there is no v0
    ],
)
def test_split_arxiv_id(text: str, expected: tuple[str, str | None]) -> None:
    assert split_arxiv_id(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2023.12345",  # a year and a number, month 23
        "1412.12345",  # 5 digits before 2015
        "1501.1234",  # 4 digits after 2014
        "0703.0001",  # new style began 2007-04
        "and/9709111",  # not an archive
        "math/0713001",  # month 13
        "10.1103/PhysRevD.75.124007",  # another publisher's DOI
        "",
        "arXiv:",
    ],
)
def test_not_an_arxiv_id(text: str) -> None:
    assert split_arxiv_id(text) is None


def test_every_abs_header_id_parses() -> None:
    """The `arXiv:` header line of all 1,132 `.abs` files (old and new style) parses."""
    root = shared_file("arxiv/abs")
    files = sorted(root.rglob("*.abs"))
    assert len(files) > 1000
    parsed = 0
    for path in files:
        head = path.read_text(encoding="utf-8", errors="replace")[:400]
        line = next((ln for ln in head.splitlines() if ln.lower().startswith("arxiv:")), None)
        if line is None:  # math-ph/0509037.abs is empty in the test set
            continue
        assert arxiv_id(line) == line[len("arXiv:") :].strip(), path
        parsed += 1
    assert parsed >= len(files) - 1


# --- DOIs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10.1088/1126-6708/1997/11/001", "10.1088/1126-6708/1997/11/001"),  # .abs DOI lines
        ("10.1103/PhysRevB.51.15478", "10.1103/physrevb.51.15478"),
        ("10.1016/0370-2693(92)90710-L", "10.1016/0370-2693(92)90710-l"),
        (
            "10.1175/1520-0469(1996)053<0946:ASTFHH>2.0.CO;2",
            "10.1175/1520-0469(1996)053<0946:astfhh>2.0.co;2",
        ),
        # arXiv lists erratum DOIs after the main one: the first is the paper's
        ("10.1103/PhysRevD.75.124007 10.1103/PhysRevD.82.029901", "10.1103/physrevd.75.124007"),
        ("doi:10.1002/asi.24898", "10.1002/asi.24898"),
        ("DOI: 10.1002/asi.24898", "10.1002/asi.24898"),
        ("https://doi.org/10.1126/science.169.3946.635", "10.1126/science.169.3946.635"),
        ("http://dx.doi.org/10.1126/science.169.3946.635},", "10.1126/science.169.3946.635"),
        ("https://doi.org/10.1017/S0963180123000464.", "10.1017/s0963180123000464"),
        ("https://doi.org/10.1002%2Fasi.24898", "10.1002/asi.24898"),
        ("10.33987/vsed.1-2(84-85).2023.118-130", "10.33987/vsed.1-2(84-85).2023.118-130"),
        ("(see 10.1007/3-540-31288-9_9)", "10.1007/3-540-31288-9_9"),
        ("urn:doi:10.1000/xyz", "10.1000/xyz"),
    ],
)
def test_normalize_doi(text: str, expected: str) -> None:
    assert normalize_doi(text) == expected
    assert normalize_doi(expected) == expected  # a fixed point


@pytest.mark.parametrize("text", ["", "10.1234", "not a doi", "https://doi.org/", "11.1000/x"])
def test_not_a_doi(text: str) -> None:
    assert normalize_doi(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("05T81ScPFb", "05T81ScPFb"),  # papers.jsonl `openreview_id`
        ("0CE82_hBPzA", "0CE82_hBPzA"),
        ("openreview:sLhk0keeiseH", "sLhk0keeiseH"),
        ("https://openreview.net/forum?id=05T81ScPFb", "05T81ScPFb"),
        ("https://openreview.net/pdf?id=05T81ScPFb&noteId=x", "05T81ScPFb"),
        ("x", None),
        ("has space inside", None),
    ],
)
def test_openreview_id(text: str, expected: str | None) -> None:
    assert openreview_id(text) == expected


def test_every_openreview_id_in_papers_is_kept() -> None:
    path = shared_file("openreview/papers.jsonl")
    with path.open(encoding="utf-8") as f:
        ids = [json.loads(line)["openreview_id"] for line in f]
    assert len(ids) > 3000
    assert all(openreview_id(i) == i for i in ids)


# --- names ------------------------------------------------------------------------------

# (as written in the data, given, family, display, key)
NAMES = [
    # .abs author lines (LaTeX accents)
    ("Fr\\'{e}d\\'{e}ric Klopp", "Frédéric", "Klopp", "Frédéric Klopp", "klopp f"),
    ("Bohdan Paczy\\'nski", "Bohdan", "Paczyński", "Bohdan Paczyński", "paczynski b"),
    ("H. Nesse Tyss{\\o}y", "H. Nesse", "Tyssøy", "H. Nesse Tyssøy", "tyssoy h"),
    ("Ulf-G. Mei{\\ss}ner", "Ulf-G.", "Meißner", "Ulf-G. Meißner", "meissner u"),
    ("A. Lan\\c{c}on", "A.", "Lançon", "A. Lançon", "lancon a"),
    ("Rastislav \\v{S}r\\'amek", "Rastislav", "Šrámek", "Rastislav Šrámek", "sramek r"),
    ("Emanuele Macr\\`i", "Emanuele", "Macrì", "Emanuele Macrì", "macri e"),
    ("Ignacio Rodr\\'iguez", "Ignacio", "Rodríguez", "Ignacio Rodríguez", "rodriguez i"),
    ("Asunci\\'on N\\'u\\~nez", "Asunción", "Núñez", "Asunción Núñez", "nunez a"),
    ('Martin N\\"ollenburg', "Martin", "Nöllenburg", "Martin Nöllenburg", "nollenburg m"),
    ("Martin Eker{\\aa}", "Martin", "Ekerå", "Martin Ekerå", "ekera m"),
    ('J. T. L\\"u', "J. T.", "Lü", "J. T. Lü", "lu j"),
    # daily feed: LaTeX left in, accents with the backslash lost, markers and nicknames
    ('Peter St\\"utz', "Peter", "Stütz", "Peter Stütz", "stutz p"),
    ("Nguy\\~ên", None, "Nguyễn", "Nguyễn", "nguyen"),
    (
        "Jo{ã}o Paulo Cachaneski-Lopes",
        "João Paulo",
        "Cachaneski-Lopes",
        "João Paulo Cachaneski-Lopes",
        "cachaneski lopes j",
    ),
    ("Tolúl\\d{o}pé Ògúnrèmí", "Tolúlọpé", "Ògúnrèmí", "Tolúlọpé Ògúnrèmí", "ogunremi t"),
    ("\\\\Ajinkya Umesh Mulik", "Ajinkya Umesh", "Mulik", "Ajinkya Umesh Mulik", "mulik a"),
    ('Rapha"el Metz', "Raphaël", "Metz", "Raphaël Metz", "metz r"),
    ("Martin Valli`eres", "Martin", "Vallières", "Martin Vallières", "vallieres m"),
    ("Nicol`o Pagan", "Nicolò", "Pagan", "Nicolò Pagan", "pagan n"),
    ("Tristan P. O`Neill", "Tristan P.", "O'Neill", "Tristan P. O'Neill", "oneill t"),
    ('Linxi "Jim" Fan', "Linxi", "Fan", "Linxi Fan", "fan l"),
    ("Young-Jun_Lee", "Young-Jun", "Lee", "Young-Jun Lee", "lee y"),
    ("Eric~Granger", "Eric", "Granger", "Eric Granger", "granger e"),
    ("Makars~Šiškins", "Makars", "Šiškins", "Makars Šiškins", "siskins m"),
    ("Seung Gyo Jeong2", "Seung Gyo", "Jeong", "Seung Gyo Jeong", "jeong s"),
    ("1 Jiani Lin", "Jiani", "Lin", "Jiani Lin", "lin j"),
    ("Yi-Fan Zhang†", "Yi-Fan", "Zhang", "Yi-Fan Zhang", "zhang y"),
    ("Kenneth M. Merz,", "Kenneth M.", "Merz", "Kenneth M. Merz", "merz k"),
    # particles and suffixes (feed)
    ("Laura De~Lorenzo", "Laura", "De Lorenzo", "Laura De Lorenzo", "lorenzo l"),
    ("Robert W. Heath Jr.", "Robert W.", "Heath", "Robert W. Heath Jr.", "heath r"),
    ("Henry M. Cathey, Jr.", "Henry M.", "Cathey", "Henry M. Cathey Jr.", "cathey h"),
    ("Hal Daumé III", "Hal", "Daumé", "Hal Daumé III", "daume h"),
    ("Juan de la Cruz", "Juan", "de la Cruz", "Juan de la Cruz", "cruz j"),
    ("de la Cruz, Juan", "Juan", "de la Cruz", "Juan de la Cruz", "cruz j"),
    ("Beethoven, Ludwig van", "Ludwig van", "Beethoven", "Ludwig van Beethoven", "beethoven l"),
    ("Gerard 't Hooft", "Gerard", "'t Hooft", "Gerard 't Hooft", "hooft g"),
    # initials
    ("Y. Bengio", "Y.", "Bengio", "Y. Bengio", "bengio y"),
    ("Y Bengio", "Y.", "Bengio", "Y. Bengio", "bengio y"),
    ("Bengio, Y.", "Y.", "Bengio", "Y. Bengio", "bengio y"),
    ("J.-P. Serre", "J.-P.", "Serre", "J.-P. Serre", "serre j"),
    ("J.P. Serre", "J. P.", "Serre", "J. P. Serre", "serre j"),
    ("Serre J.-P.", "J.-P.", "Serre", "J.-P. Serre", "serre j"),
    # feed / OpenReview: initials after the word (Vancouver order), initials before it
    ("Keerthana R", "R.", "Keerthana", "R. Keerthana", "keerthana r"),
    ("Harsha KG", "K. G.", "Harsha", "K. G. Harsha", "harsha k"),
    ("KC Tan", "KC", "Tan", "KC Tan", "tan k"),
    ("Zhou Fengjin MD", "Zhou", "Fengjin", "Zhou Fengjin MD", "fengjin z"),
    # capitals and scripts
    ("LEI BAI", "Lei", "Bai", "Lei Bai", "bai l"),  # feed
    ("ZHANG Wei", "Wei", "Zhang", "Wei Zhang", "zhang w"),
    ("KLOPP Frédéric", "Frédéric", "Klopp", "Frédéric Klopp", "klopp f"),
    ("张伟", "伟", "张", "张伟", "zhang w"),
    ("山田 太郎", "太郎", "山田", "山田太郎", "shantian t"),
    ("Łukasz Kaiser", "Łukasz", "Kaiser", "Łukasz Kaiser", "kaiser l"),
    ("Ольга Иванова", "Ольга", "Иванова", "Ольга Иванова", "ivanova o"),
    ("NVIDIA", None, "NVIDIA", "NVIDIA", "nvidia"),  # feed: an organisation as author
]


@pytest.mark.parametrize(("name", "given", "family", "display", "key"), NAMES)
def test_parse_name(name: str, given: str | None, family: str, display: str, key: str) -> None:
    p = parse_name(name)
    assert (p.given, p.family, p.display, p.key) == (given, family, display, key)


def test_short_path_gives_what_the_full_rules_give() -> None:
    """`parse_name` skips the rules for plain names; on real names it must not differ."""
    with open_feed("rt") as f:
        names = [n for line in islice(f, 2000) for n in json.loads(line)["authors"]]
    assert [parse_name(n) for n in names] == [parse_name_fully(n) for n in names]


def test_particles_are_nameparsers() -> None:
    """The particle list written out in names.py is the one nameparser's tables give."""
    assert PARTICLES == particles_from_nameparser()
    assert {"van", "der", "de", "bin", "ibn"} <= PARTICLES and "mac" not in PARTICLES


def test_same_person_same_key_across_spellings() -> None:
    spellings = [
        "Frédéric Klopp",
        "Fr\\'{e}d\\'{e}ric Klopp",
        "Klopp, Frédéric",
        "F. Klopp",
        "KLOPP Frédéric",
        "Frederic Klopp",
        "Klopp, F.",
    ]
    assert {parse_name(s).key for s in spellings} == {"klopp f"}


def test_unicode_forms_are_composed() -> None:
    decomposed = "Jo\u0303ao Me\u0301ndez"  # combining marks, as some PDFs extract them
    p = parse_name(decomposed)
    assert p.display == "J\u00f5ao M\u00e9ndez"
    assert p.key == "mendez j"


def test_a_name_with_no_letters_has_no_key() -> None:
    assert parse_name(":").key is None  # the feed has ":" as an author 47 times


def test_source_split_wins_and_is_cleaned() -> None:
    """Sources that split names (arXiv `authors_parsed`, Crossref) keep their split."""
    a = normalize_author(Author(name="Juan Carlos Pérez", given="Juan Carlos", family="P\\'erez"))
    assert (a.given, a.family, a.display, a.key) == (
        "Juan Carlos",
        "Pérez",
        "Juan Carlos Pérez",
        "perez j",
    )


def test_feed_authors_all_get_keys() -> None:
    """Every author of the first 3,000 feed records gets a lower-case ASCII key."""
    names = []
    with open_feed("rt") as f:
        for line in islice(f, 3000):
            names.extend(json.loads(line)["authors"])
    keyed = [parse_name(n) for n in names]
    with_key = [p for p in keyed if p.key]
    assert len(with_key) >= 0.999 * len(names)
    assert all(re.fullmatch(r"[a-z]+(?: [a-z]+)*", p.key or "") for p in with_key)
    assert all("\\" not in p.display and "{" not in p.display for p in keyed)


# --- plain text -------------------------------------------------------------------------

TEXTS = [
    # 2503.22932: heat kernel in \mathcal
    (
        "the heat-kernel $\\mathcal{K}(t)$ in powers of the\nproper time $t$",
        "the heat-kernel K(t) in powers of the proper time t",
    ),
    ("We show $\\mathcal{NC}$ is hard", "We show NC is hard"),
    # 2503.11685: \% and $\times$
    (
        "with 40\\% pruning rate, enhanced throughput up to 4.64$\\times$, and",
        "with 40% pruning rate, enhanced throughput up to 4.64×, and",
    ),
    # bare % is text in arXiv abstracts, not a LaTeX comment
    (
        "improves accuracy by 5% over the baseline\nand more",
        "improves accuracy by 5% over the baseline and more",
    ),
    ("an $O(n^2)$ algorithm", "an O(n^2) algorithm"),
    ("$O(n\\log n)$ time", "O(n log n) time"),
    # 2503.13961 / 2503.14513: accents in abstracts
    ("representation, B\\'ezier Gaussian Triangle", "representation, Bézier Gaussian Triangle"),
    (
        "metrics such as\nFr\\'echet Inception Distance",
        "metrics such as Fréchet Inception Distance",
    ),
    ('Schr\\"odinger equation, {\\"o}, \\c{c}, {\\ss}', "Schrödinger equation, ö, ç, ß"),
    # 2503.12590 / 2503.12689: \textbf across a line break, inside math
    (
        "we propose \\textbf{Personalize\nAnything}, a training-free framework",
        "we propose Personalize Anything, a training-free framework",
    ),
    (
        "we introduce\n$\\textbf{MagicID}$, a novel framework",
        "we introduce MagicID, a novel framework",
    ),
    # 2503.12840 / 2503.13814: \emph with a paper macro / plain text
    ("natures, \\emph{\\ie}, (1) feature", "natures, i.e., (1) feature"),
    ("data, \\emph{i.e.}, hyperspectral", "data, i.e., hyperspectral"),
    # 2503.12418: \href keeps its text
    (
        "Code is available at\n\\href{https://github.com/xielaobanyy/causal-imt}{this link}.",
        "Code is available at this link.",
    ),
    # 2503.20198: paper-local macros stay as words, citations go, ~ is a space
    (
        "demonstrate that \\ModelName~significantly\noutperforms SD3.5 Large~\\cite{sd3} and",
        "demonstrate that ModelName significantly outperforms SD3.5 Large and",
    ),
    (
        "We\nexperimentally confirm that \\ours{} generates motion",
        "We experimentally confirm that ours generates motion",
    ),
    # 2503.12981: a tie between number and unit
    (
        "error of\n0.3 seconds and 0.35~m/s for stroke",
        "error of 0.3 seconds and 0.35 m/s for stroke",
    ),
    # a leading ~ means "about" and stays
    ("reduces latency by ~30% overall", "reduces latency by ~30% overall"),
    # 2503.23509: \( \) math with \&
    ("achieves 60.43\n\\(\\mathcal{J}\\&\\mathcal{F}\\) on MeViS", "achieves 60.43 J&F on MeViS"),
    # 2512.07471: subscripts in formulas join, as `<sub>` does
    ("the full Heusler Co$_2$YPb (Y = Tc, Ti)", "the full Heusler Co2YPb (Y = Tc, Ti)"),
    # 2505.15624: nested \frac
    ("ratio,\n\\(\\frac{\\eta_E}{\\eta_W} \\propto x\\)", "ratio, ηE/ηW ∝ x"),
    ("$\\sqrt[3]{x_{i}}$ and $10^{-3}$", "√(xi) and 10^-3"),
    # Markdown: 2503.15888 bold, 2505.16416 link, 2508.12543 code
    (
        "we propose **CK-PLUG**, a plug-and-play method",
        "we propose CK-PLUG, a plug-and-play method",
    ),
    (
        "code is available at\n[https://github.com/lose4578/CircleRoPE](https://github.com/lose4578/CircleRoPE).",
        "code is available at https://github.com/lose4578/CircleRoPE.",
    ),
    ("We propose a\nframework, `REVEAL` (Reasoning", "We propose a framework, REVEAL (Reasoning"),
    ("an *emphasised* word and a_b_c and 2*3*4", "an emphasised word and a_b_c and 2*3*4"),
    # HTML in the feed (2603.01094) and JATS from Crossref
    (
        "Design of 2D V<sub>6</sub>S<sub>n</sub>Se<sub>6-n</sub>Cl<sub>6</sub>",
        "Design of 2D V6SnSe6-nCl6",
    ),
    ("<jats:title>Abstract</jats:title><jats:p>Cats &amp; dogs.</jats:p>", "Abstract Cats & dogs."),
    # words in angle brackets written by LLM papers are not tags
    ("the model emits <think> tokens", "the model emits <think> tokens"),
    # paragraphs: a blank line is kept as one newline
    ("First paragraph\nwraps here.\n\n  Second one.", "First paragraph wraps here.\nSecond one."),
    ("  tabs\tand\u00a0odd   spaces ", "tabs and odd spaces"),
    ("\\begin{itemize}\\item one \\item two\\end{itemize}", "one two"),
]


@pytest.mark.parametrize(("text", "expected"), TEXTS)
def test_plain_text(text: str, expected: str) -> None:
    assert plain_text(text) == expected


def test_plain_text_none_and_empty() -> None:
    assert plain_text(None) is None
    assert plain_text("") == ""
    assert plain_text("$$") == ""


def test_feed_plain_text_has_no_latex_left() -> None:
    """On 3,000 real records no math `$`, brace or known macro survives in the index text."""
    with open_feed("rt") as f:
        rows = [json.loads(line) for line in islice(f, 3000)]
    leftovers = 0
    for r in rows:
        for field in ("title", "summary"):
            out = plain_text(r[field]) or ""
            assert "\n" not in out or "\n\n" in r[field] or "\n " in r[field]
            if re.search(r"\\(?:mathcal|textbf|emph|frac|cite)\b|\$|[{}]", out):
                if "\\$" not in r[field] and "\\{" not in r[field]:
                    leftovers += 1
    assert leftovers == 0


# --- finish -----------------------------------------------------------------------------


def feed_record(d: dict) -> SourceRecord:
    return SourceRecord(
        source="arxiv",
        source_id=d["id"],
        title=d["title"],
        abstract=d["summary"],
        authors=[Author(name=a) for a in d["authors"]],
        categories=d.get("categories") or d.get("cate") or [],
        comments=d.get("comment"),
        feed_date=d.get("feed_date"),
        versions=[Version("v1", d.get("feed_date"))],
    )


def test_finish_fills_normal_forms_on_a_real_record() -> None:
    with open_feed("rt") as f:
        d = json.loads(next(f))
    rec = finish(feed_record(d))
    assert rec.arxiv_id == "2503.11677"
    assert rec.year == 2025
    assert rec.title_text == d["title"]
    assert rec.abstract_text and "\n" not in rec.abstract_text
    assert rec.abstract == d["summary"]  # the original stays for display
    assert [a.key for a in rec.authors] == [
        "park j",
        "goldstein a",
        "zhou y",
        "jensen n",
        "palanker d",
    ]


def test_finish_is_idempotent_on_real_records() -> None:
    with open_feed("rt") as f:
        rows = [json.loads(line) for line in islice(f, 500)]
    for d in rows:
        once = finish(feed_record(d))
        before = copy.deepcopy(once.to_dict())
        assert finish(once).to_dict() == before


def test_finish_normalises_ids_and_years() -> None:
    rec = SourceRecord(
        source="crossref",
        source_id="10.1103/PhysRevD.75.124007",
        doi="https://doi.org/10.1103/PhysRevD.75.124007",
        arxiv_id="arXiv:hep-th/0703001v2",
        published="2007-06-15",
        submitted="2007-03-01",
        ids={
            "openreview": "https://openreview.net/forum?id=05T81ScPFb",
            "arxiv": "https://arxiv.org/abs/2401.01234v2",
            "dblp": "journals/corr/abs-2401-01234",
        },
    )
    finish(rec)
    assert rec.ids == {
        "openreview": "05T81ScPFb",
        "arxiv": "2401.01234",
        "dblp": "journals/corr/abs-2401-01234",
    }
    assert rec.doi == "10.1103/physrevd.75.124007"
    assert rec.arxiv_id == "hep-th/0703001"
    assert rec.year == 2007


def test_finish_keeps_unparseable_ids_as_written() -> None:
    rec = finish(
        SourceRecord(
            source="mylist", source_id="42", doi="not-a-doi", year=None, submitted="0000-00-00"
        )
    )
    assert rec.doi == "not-a-doi"
    assert rec.year is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: setattr(r, "title", "x" * (LIMITS["title"] + 1)), "title"),
        (lambda r: setattr(r, "abstract", "x" * (LIMITS["abstract"] + 1)), "abstract"),
        (lambda r: setattr(r, "comments", "x" * (LIMITS["comments"] + 1)), "comments"),
        (lambda r: setattr(r, "authors", [Author("a")] * (LIMITS["authors"] + 1)), "authors"),
        (lambda r: r.authors.append(Author("x" * (LIMITS["author_name"] + 1))), "authors[1].name"),
        (lambda r: r.authors[0].affiliations.append("x" * 5000), "authors[0].affiliations"),
        (
            lambda r: r.authors.append(Author("A B", "A", "B" * (LIMITS["author_name"] + 1))),
            "authors[1].family",
        ),
        (lambda r: setattr(r, "journal_ref", "x" * 5000), "journal_ref"),
        (lambda r: setattr(r, "categories", ["cs.LG"] * 5000), "categories"),
        (lambda r: setattr(r, "raw", b"x" * (LIMITS["raw"] + 1)), "raw"),
    ],
)
def test_oversized_fields_are_rejected_by_name(change, field: str) -> None:  # type: ignore[no-untyped-def]
    rec = SourceRecord(source="arxiv", source_id="2401.01234", authors=[Author("A. Author")])
    change(rec)
    with pytest.raises(ParseError) as err:
        finish(rec)
    assert err.value.message.startswith(field + " ")


def _snapshot_line(**changes: object) -> bytes:
    """A short bulk-snapshot line (~300 bytes) with `changes` applied to its JSON."""
    line: dict[str, object] = {
        "id": "2401.01234",
        "title": "A title",
        "abstract": "An abstract.",
        "categories": "cs.LG",
        "versions": [{"version": "v1", "created": "Mon, 8 Jan 2024 10:00:00 GMT"}],
        "authors_parsed": [["Author", "A.", ""]],
    }
    line.update(changes)
    return orjson.dumps(line)


_OVER = {
    "title": lambda n: {"title": "x" * n},
    "abstract": lambda n: {"abstract": "x" * n},
    "comments": lambda n: {"comments": "x" * n},
    "authors": lambda n: {"authors_parsed": [["B", "", ""]] * n},
    "authors[0].name": lambda n: {"authors_parsed": [["x" * (n - 2), "A", ""]]},
    "authors[0].affiliations": lambda n: {"authors_parsed": [["B", "A", "", *"x" * n]]},
    "journal_ref": lambda n: {"journal-ref": "x" * n},
    "doi": lambda n: {"doi": "10." + "1" * (n - 3)},
    "license": lambda n: {"license": "x" * n},
    "categories": lambda n: {"categories": " ".join(["a"] * n)},
    "versions": lambda n: {"versions": [{"version": "v1"}] * n},
}
_LIMIT_OF = {
    "authors[0].name": "author_name",
    "journal_ref": "short_field",
    "doi": "short_field",
    "license": "short_field",
    "categories": "list_items",
    "versions": "list_items",
    "authors[0].affiliations": "affiliations",
}


@pytest.mark.parametrize("field", list(_OVER))
def test_snapshot_lines_one_over_a_limit_are_rejected(field: str) -> None:
    """A snapshot line one over any limit is rejected naming the field, and one at the
    limit is kept."""
    limit = LIMITS[_LIMIT_OF.get(field, field)]
    for n, rejected in ((limit + 1, True), (limit, False)):
        (rec,) = arxiv_snapshot.parse(io.BytesIO(_snapshot_line(**_OVER[field](n))), "s")
        assert isinstance(rec, SourceRecord)
        if rejected:
            with pytest.raises(ParseError) as err:
                finish(rec)
            assert err.value.message.startswith(field + " "), err.value.message
        else:
            finish(rec)


def test_a_short_snapshot_line_with_too_many_affiliations_is_rejected() -> None:
    raw = _snapshot_line(authors_parsed=[["B", "A", "", *"x" * 101]])
    assert len(raw) < 1_000  # a short line is measured like any other
    (rec,) = arxiv_snapshot.parse(io.BytesIO(raw), "s")
    assert isinstance(rec, SourceRecord)
    with pytest.raises(ParseError, match="affiliations"):
        finish(rec)


def test_real_broken_author_name_is_within_limits() -> None:
    """2506.02197 in the feed has a 512-character "author" (names glued by `and`)."""
    rec = SourceRecord(
        source="arxiv",
        source_id="2506.02197",
        authors=[Author("Xiangyu Kongand Xiaoxia Xingand " * 16)],
    )
    assert finish(rec).authors[0].key


@pytest.mark.parametrize(
    "text",
    [
        "\\textbf{" * 6000 + "x" + "}" * 6000,  # deep nesting: the unwrapping loop is bounded
        "$a_" * 16000,
        "\\frac{" * 8000,
        "[a](" * 12000,
        "`a" * 25000,
        "<sub" * 12000,
        "\\'" * 25000,
        "\\begin{" * 7000,
        "{" * 25000 + "}" * 25000,
    ],
    ids=["nesting", "dollars", "frac", "links", "backticks", "tags", "accents", "begin", "braces"],
)
def test_hostile_text_stays_linear(text: str) -> None:
    """50,000 characters of one construct: a quadratic pattern would take minutes."""
    start = time.process_time()
    out = plain_text(text)
    assert isinstance(out, str)
    assert time.process_time() - start < 5.0


# --- properties -------------------------------------------------------------------------

_TEXTISH = st.lists(
    st.one_of(
        st.sampled_from(list("\\{}$~_^*`[]()<>&;#%'\"\n \t.-,:/abcxyzAEO019")),
        st.sampled_from(
            [
                "\\mathcal",
                "\\frac",
                "\\'",
                '\\"',
                "\\c",
                "\\begin",
                "\\end",
                "\\textbf",
                "\\href",
                "\\sqrt",
                "<sub>",
                "</jats:p>",
                "&amp;",
                "](",
                "**",
                "\\\\",
                "\\i",
                "\\ss",
                "{\\o}",
            ]
        ),
        st.characters(),
    ),
    max_size=120,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(_TEXTISH)
def test_plain_text_never_crashes(text: str) -> None:
    out = plain_text(text)
    assert isinstance(out, str)
    assert "\n\n" not in out and out == out.strip()
    assert "\ue000" not in out and "\x00" not in out


_NAMEISH = st.lists(
    st.one_of(
        st.sampled_from(list("\\{}~_`'\".,-() 0123abcdeXYZ")),
        st.sampled_from(
            [
                "\\'",
                '\\"',
                "\\c{c}",
                "{\\ss}",
                "van ",
                "de la ",
                "Jr.",
                ", ",
                "III",
                "张",
                "伟",
                "Ł",
                "é",
            ]
        ),
        st.characters(),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(_NAMEISH)
def test_names_never_crash_keys_are_ascii_lower(name: str) -> None:
    p = parse_name(name)
    assert p.key is None or re.fullmatch(r"[a-z]+(?: [a-z]+)*", p.key), p.key
    assert p.family or not p.given  # a given name alone is made the family


_WORDISH = st.lists(
    st.one_of(
        st.sampled_from(["Anna", "Jürgen", "Müller", "Łukasz", "van", "De", "Jr", "III", "Dr"]),
        st.sampled_from(["J.", "Y", "Ab", "Cd-Ef", "-Gh", "Ö", "Øre", "张伟", "Ʃx", "ǅz"]),
        st.text(st.characters(categories=["Lu", "Ll", "Lt", "Mn"]), min_size=1, max_size=6),
    ),
    min_size=1,
    max_size=4,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(_WORDISH)
def test_short_paths_agree_with_full_rules(name: str) -> None:
    assert parse_name_uncached(name) == parse_name_fully(name)


# The shape `_plain_parts` recognises, as a regular expression: capitalised ASCII words
# (hyphenated or not) after capitalised words or dotted initials; group 2 holds the last
# given word (None for two words).
_WORD = r"[A-Z][a-z]++(?:-[A-Z][a-z]++)*+"
_PLAIN_NAME = re.compile(rf"([A-Z]\.|{_WORD})(?: ([A-Z]\.|{_WORD}))* ({_WORD})")


def _regex_parts(name: str) -> tuple[str | None, ...] | None:
    m = _PLAIN_NAME.fullmatch(name)
    return None if m is None else m.groups()


def test_plain_parts_are_what_the_plain_name_pattern_matches() -> None:
    """`_plain_parts` (string methods) does what `_PLAIN_NAME.fullmatch(...).groups()` does
    on the short path: the same answer on every name of the feed and on edge shapes."""
    with open_feed("rt") as f:
        names = [n for line in f for n in json.loads(line)["authors"]]
    edges = [
        "", "A", "A.", "Ab", "Ab Cd", "A. Cd", "Ab C.", "A.B. Cd", "Ab  Cd", " Ab Cd", "Ab Cd ",
        "Ab-Cd Ef", "Ab-C Ef", "Ab--Cd Ef", "-Ab Cd", "Ab- Cd", "AB Cd", "Ab cD", "Ab Éf",
        "Ab\tCd", "Ab Cd\n", "a. Cd", "Ab 1b", "Ab O'Neil", "J. P. Ab-Cd-Ef Gh",
    ]
    expected = [_regex_parts(n) for n in names + edges]
    assert [names_module._plain_parts(n) for n in names + edges] == expected


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="AaBbZz-. \tÉé'1", max_size=14) | _WORDISH)
def test_plain_parts_agree_with_the_pattern_on_any_text(name: str) -> None:
    assert names_module._plain_parts(name) == _regex_parts(name)


@settings(max_examples=120, deadline=None)
@given(_NAMEISH, st.one_of(st.none(), _NAMEISH), st.one_of(st.none(), _NAMEISH))
@example("x", None, "\\'\\$\\c{c}")  # found by hypothesis: `\$` decoded, then read as math
def test_normalize_author_is_idempotent(name: str, given: str | None, family: str | None) -> None:
    a = normalize_author(Author(name=name, given=given, family=family))
    first = (a.given, a.family, a.display, a.key)
    normalize_author(a)
    assert (a.given, a.family, a.display, a.key) == first


def _split_as_parsed(name: str) -> tuple[Author, Author]:
    """The same name twice, split by the source exactly as the rules split it."""
    p = parse_name(name)
    return Author(name, p.given, p.family), Author(name, p.given, p.family)


def test_split_as_parsed_short_cut_on_real_names() -> None:
    """A source split equal to the parsed one skips cleaning; the answer must not change."""
    with open_feed("rt") as f:
        names = [n for line in islice(f, 3000) for n in json.loads(line).get("authors") or []]
    for name in names:
        fast, full = _split_as_parsed(name)
        normalize_author(fast)
        _apply_split(full, parse_name(name))
        assert fast == full, name


@settings(max_examples=300, deadline=None)
@given(st.one_of(_NAMEISH, _WORDISH))
def test_split_as_parsed_short_cut_on_arbitrary_names(name: str) -> None:
    fast, full = _split_as_parsed(name)
    normalize_author(fast)
    _apply_split(full, parse_name(name))
    assert fast == full


@settings(max_examples=150, deadline=None)
@given(
    title=st.one_of(st.none(), _TEXTISH),
    abstract=st.one_of(st.none(), _TEXTISH),
    names=st.lists(_NAMEISH, max_size=4),
    doi=st.one_of(st.none(), st.text(max_size=40), st.just("https://doi.org/10.1000/ABC.")),
    ax=st.one_of(st.none(), st.text(max_size=30), st.just("arXiv:math.AG/0101001v2")),
    date=st.one_of(st.none(), st.text(max_size=12), st.just("2024-05-01")),
)
def test_finish_idempotent_and_clean_on_arbitrary_records(
    title: str | None,
    abstract: str | None,
    names: list[str],
    doi: str | None,
    ax: str | None,
    date: str | None,
) -> None:
    rec = SourceRecord(
        source="x",
        source_id="1",
        title=title,
        abstract=abstract,
        authors=[Author(n) for n in names],
        doi=doi,
        arxiv_id=ax,
        submitted=date,
    )
    finish(rec)
    before = copy.deepcopy(rec.to_dict())
    finish(rec)
    assert rec.to_dict() == before


def test_plain_names_are_what_the_rules_give_on_every_feed_name() -> None:
    """`plain_name` (the uncached path of nearly every arXiv name, and what `finish` uses
    directly) against every rule, on every author name of the feed."""
    with open_feed("rt") as f:
        names = [n for line in f for n in json.loads(line)["authors"]]
    plain = 0
    for n in names:
        p = names_module.plain_name(n)
        if p is not None:
            plain += 1
            assert (p[0], p[1], None, n, p[2]) == parse_name_fully(n), n
    assert plain > 0.9 * len(names)
