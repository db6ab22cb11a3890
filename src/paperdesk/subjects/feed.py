"""Labelled examples from the shared arXiv daily feed (JSON lines), for training and
benchmarking the subject classifier.

The feed is not uniform: most lines list `categories` (primary first, ACM/MSC codes mixed
in), some carry only the primary as a string under `cate`. Both become canonical subjects
via `split_categories`; lines without any arXiv subject are skipped.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from paperdesk.subjects.context import context_keys
from paperdesk.subjects.taxonomy import Taxonomy, load, split_categories


@dataclass(frozen=True)
class Example:
    id: str
    title: str
    abstract: str
    subjects: tuple[str, ...]
    """Canonical subjects, primary first."""
    date: str
    """`feed_date`, ISO `YYYY-MM-DD`: the time axis of the train/test split."""
    context: tuple[str, ...] = ()
    """Context keys (`paperdesk.subjects.context.context_keys`): its authors, its venue."""

    @property
    def primary(self) -> str:
        return self.subjects[0]

    @property
    def month(self) -> str:
        return self.date[:7]


def read_feed(path: str | Path, tax: Taxonomy | None = None) -> Iterator[Example]:
    """Examples from a daily-feed file (`.jsonl` or `.jsonl.gz`), in file order."""
    tax = tax or load()
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(rec, dict):
                continue
            split = split_categories(rec.get("categories") or rec.get("cate"), tax)
            date = rec.get("feed_date")
            if not split.subjects or not isinstance(date, str):
                continue
            yield Example(
                id=str(rec.get("id") or ""),
                title=_str(rec.get("title")),
                abstract=_str(rec.get("summary")),
                subjects=tuple(split.subjects),
                date=date,
                context=tuple(
                    context_keys(
                        [a for a in rec.get("authors") or [] if isinstance(a, str)],
                        comment=_str(rec.get("comment")),
                    )
                ),
            )


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def time_split(
    examples: list[Example], test_months: int = 1, calib_months: int = 1
) -> tuple[list[Example], list[Example], list[Example]]:
    """(train, calibration, test) by feed month: the latest `test_months` are the test set,
    the `calib_months` before them fit the probability calibration, the rest train.

    Splitting by time, not at random, measures what matters: how the model does on papers
    written after it was trained (topics drift month to month)."""
    months = sorted({e.month for e in examples})
    if len(months) < test_months + calib_months + 1:
        raise ValueError(f"need at least {test_months + calib_months + 1} months, got {months}")
    test = set(months[-test_months:])
    calib = set(months[-test_months - calib_months : -test_months])
    return (
        [e for e in examples if e.month not in test and e.month not in calib],
        [e for e in examples if e.month in calib],
        [e for e in examples if e.month in test],
    )
