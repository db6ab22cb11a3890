"""Name rarity (`authors_rarity`) and what it buys: one profile per prolific person, common
names kept apart — on real records of the shared daily feed (tests/data/feed, see
tests/data/README.md), with no shared data needed."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from paperdesk.cli import main
from paperdesk.model import Author
from paperdesk.normalize.names import normalize_author
from paperdesk.resolve.authors_rarity import NO_NAME, NameStats, default_prior
from paperdesk.store import open_store

SLICE = Path(__file__).parent / "data" / "feed" / "authors-slice.jsonl.gz"
"""Every feed record of Percy Liang, Yoshua Bengio, Sergey Levine and Yann LeCun, and the
first 25 of "Wei Zhang" and of "Yang Liu" (147 records)."""

PROLIFIC = ("Percy Liang", "Yoshua Bengio", "Sergey Levine", "Yann LeCun")


def _slice_names() -> list[str]:
    with gzip.open(SLICE, "rb") as fh:
        return [n for line in fh for n in orjson.loads(line)["authors"]]


def _form(name: str) -> str:
    from paperdesk.resolve.authors_names import fold, parse_given

    a = normalize_author(Author(name=name))
    return " ".join((*parse_given(a.given).tokens, fold(a.family or ""))).strip()


def test_rare_and_common_names_from_the_slice_and_the_prior() -> None:
    stats = NameStats(_form(n) for n in _slice_names())
    for name in PROLIFIC:
        assert stats.people(_form(name)) < 0.05, name
    # The slice alone is too small to know these are common; the prior knows.
    alone = NameStats((_form(n) for n in _slice_names()), prior=None)
    for name in ("Wei Zhang", "Yang Liu"):
        assert alone.people(_form(name)) < stats.people(_form(name))
        assert stats.people(_form(name)) > 1.0, name
    assert stats.log_people("y bengio") == NO_NAME  # an initial: no estimate of its own
    assert stats.block_people("y bengio") == 1  # but one spelt-out Yoshua in the block
    assert default_prior().distinct > 200_000


def test_block_crowding_is_counted_on_the_prior_scale() -> None:
    """A store holding only Percy Liang's records still sees "liang p" as crowded as the
    feed's ~234k names make it (Peng, Ping, Pei … Liang): the model is trained on
    OpenReview's names plus this prior, so a block must not look emptier in a small store
    than it did in training (nor crowded only in a big one)."""
    liang = [n for n in _slice_names() if _form(n) == "percy liang"]
    assert liang
    alone = NameStats((_form(n) for n in liang), prior=None)
    stats = NameStats(_form(n) for n in liang)
    assert alone.block_people("percy liang") == 1
    assert stats.block_people("percy liang") == default_prior().block_people("percy liang") >= 10
    # A block the prior does not list keeps the store's own count.
    assert NameStats(["vardan papyan", "v papyan"]).block_people("v papyan") == 1
    # The prior's format keeps block counts from PRIOR_BLOCK_MIN given names on.
    three = NameStats(["peng liang", "percy liang", "ping liang", "yann lecun"], prior=None)
    back = NameStats.from_json(three.to_json())
    assert back.block_people("p liang") == 3 and back.block_people("yann lecun") == 0


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rarity") / "slice.db"
    runner = CliRunner()
    for args in (["ingest", str(SLICE)], ["resolve"]):
        result = runner.invoke(main, ["--db", str(path), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return path


def _profiles(path: Path, name: str) -> Counter[str]:
    key = normalize_author(Author(name=name)).key or ""
    with open_store(path) as store:
        rows = store.authors.signatures_in_blocks([key])
    return Counter(r.author_id for r in rows if r.name_folded == _form(name))


@pytest.mark.parametrize("name", PROLIFIC)
def test_a_prolific_person_with_a_rare_name_is_one_profile(resolved: Path, name: str) -> None:
    """Their records share few co-authors across groups and topics; the rare name joins
    them (before name rarity: 22 records of Percy Liang were 22 profiles)."""
    by = _profiles(resolved, name)
    assert sum(by.values()) >= 20
    assert by.most_common(1)[0][1] >= 0.9 * sum(by.values()), by


@pytest.mark.parametrize("name", ["Wei Zhang", "Yang Liu"])
def test_a_common_name_stays_split(resolved: Path, name: str) -> None:
    """25 records of a name many people carry are not glued into one profile."""
    by = _profiles(resolved, name)
    assert sum(by.values()) >= 25
    assert len(by) >= 5, by
    assert by.most_common(1)[0][1] <= 0.5 * sum(by.values()), by
