"""The subjects tables of both backends: each record's subjects (given or predicted, in rank
order), its classification codes, and whether it has been classified (migration
060_subjects.sql). The classify stage is `paperdesk.subjects.classify`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import date, timedelta
from typing import Any

from paperdesk.model import SourceRecord
from paperdesk.store.codec import decode_record
from paperdesk.store.sql.connection import Conn, chunks


def _entry(subject: str, predicted: int, prob: float | None, pprob: float | None) -> dict[str, Any]:
    e: dict[str, Any] = {"subject": subject, "predicted": bool(predicted)}
    if predicted:
        e["probability"] = prob
        e["primary_probability"] = pprob
    return e


class Subjects:
    """The subjects repository of one connection."""

    def __init__(self, conn: Conn):
        self.conn = conn

    def pending(self, upto_seq: int) -> Iterator[tuple[int, SourceRecord]]:
        cur = self.conn.execute(
            "SELECT r.seq, r.data FROM records r WHERE r.seq <= ? AND NOT EXISTS"
            " (SELECT 1 FROM record_subjects_state s WHERE s.record_key = r.key) ORDER BY r.seq",
            (upto_seq,),
        )
        while rows := cur.fetchmany(1000):
            for seq, data in rows:
                yield seq, decode_record(data)

    def replace(
        self,
        keys: Sequence[str],
        subjects: Sequence[tuple[str, int, str, int, float | None, float | None]],
        codes: Sequence[tuple[str, int, str, str]],
        states: Sequence[tuple[str, str | None, str]],
        contexts: Sequence[tuple[str, str]] = (),
    ) -> None:
        for chunk in chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            self.conn.execute(f"DELETE FROM record_subjects WHERE record_key IN ({marks})", chunk)  # noqa: S608
            self.conn.execute(f"DELETE FROM record_codes WHERE record_key IN ({marks})", chunk)  # noqa: S608
            self.conn.execute(f"DELETE FROM record_context WHERE record_key IN ({marks})", chunk)  # noqa: S608
        self.conn.executemany("INSERT INTO record_subjects VALUES (?, ?, ?, ?, ?, ?)", subjects)
        self.conn.executemany("INSERT INTO record_codes VALUES (?, ?, ?, ?)", codes)
        self.conn.executemany("INSERT OR REPLACE INTO record_subjects_state VALUES (?, ?, ?)", states)
        self.conn.executemany(
            "INSERT OR IGNORE INTO record_context (record_key, key) VALUES (?, ?)", contexts
        )

    def put_predicted(
        self,
        keys: Sequence[str],
        subjects: Sequence[tuple[str, int, str, int, float | None, float | None]],
        states: Sequence[tuple[str, str | None, str]],
    ) -> None:
        """The predicted subjects of records `keys` (their codes and context stay)."""
        for chunk in chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            self.conn.execute(f"DELETE FROM record_subjects WHERE record_key IN ({marks})", chunk)  # noqa: S608
        self.conn.executemany("INSERT INTO record_subjects VALUES (?, ?, ?, ?, ?, ?)", subjects)
        self.conn.executemany("INSERT OR REPLACE INTO record_subjects_state VALUES (?, ?, ?)", states)

    def context_counts(
        self, keys: Sequence[str], secondary_weight: float
    ) -> dict[str, dict[str, float]]:
        """Context key → subject → weight of the given subjects of the records holding the
        key (a primary counts 1, a cross-list `secondary_weight`)."""
        out: dict[str, dict[str, float]] = defaultdict(dict)
        for chunk in chunks(sorted(set(keys))):
            marks = ",".join("?" * len(chunk))
            for key, subject, primary, n in self.conn.execute(
                "SELECT c.key, s.subject, s.rank = 0, COUNT(*) FROM record_context c"  # noqa: S608
                " JOIN record_subjects s ON s.record_key = c.record_key AND s.predicted = 0"
                f" WHERE c.key IN ({marks}) GROUP BY c.key, s.subject, s.rank = 0",
                chunk,
            ):
                w = float(n) * (1.0 if primary else secondary_weight)
                row = out[key]
                row[subject] = row.get(subject, 0.0) + w
        return dict(out)

    def recent_primaries(self, days: int) -> dict[str, float]:
        """Subject → how many records gave it as their primary in the `days` days before
        the latest day a record with given subjects appeared (that day excluded, as a
        daily run sees the days before its own)."""
        row = self.conn.execute(
            "SELECT r.appeared FROM records r WHERE r.appeared IS NOT NULL AND EXISTS"
            " (SELECT 1 FROM record_subjects s WHERE s.record_key = r.key AND s.rank = 0"
            " AND s.predicted = 0) ORDER BY r.appeared DESC LIMIT 1"
        ).fetchone()
        if not row or not row[0]:
            return {}
        try:
            last = date.fromisoformat(str(row[0])[:10])
        except ValueError:
            return {}
        start, end = (last - timedelta(days=days)).isoformat(), last.isoformat()
        return {
            subject: float(n)
            for subject, n in self.conn.execute(
                "SELECT s.subject, COUNT(*) FROM records r JOIN record_subjects s"
                " ON s.record_key = r.key AND s.rank = 0 AND s.predicted = 0"
                " WHERE r.appeared >= ? AND r.appeared < ? GROUP BY s.subject",
                (start, end),
            )
        }

    def of_records(self, keys: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Stored subjects of each record, rank order: `{subject, predicted[, probability,
        primary_probability]}`."""
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for chunk in chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            for key, subject, predicted, prob, pprob in self.conn.execute(
                "SELECT record_key, subject, predicted, probability, primary_probability"  # noqa: S608
                f" FROM record_subjects WHERE record_key IN ({marks}) ORDER BY record_key, rank",
                chunk,
            ):
                out[key].append(_entry(subject, predicted, prob, pprob))
        return dict(out)

    def codes_of(self, key: str) -> list[dict[str, str]]:
        return [
            {"scheme": s, "code": c}
            for s, c in self.conn.execute(
                "SELECT scheme, code FROM record_codes WHERE record_key = ? ORDER BY position", (key,)
            )
        ]

    def count_classified(self, keys: Sequence[str]) -> int:
        n = 0
        for chunk in chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            n += self.conn.execute(
                f"SELECT COUNT(*) FROM record_subjects_state WHERE record_key IN ({marks})",  # noqa: S608
                chunk,
            ).fetchone()[0]
        return int(n)

    def all_rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(record key, subject entry) of every record, by key and rank."""
        for key, subject, predicted, prob, pprob in self.conn.execute(
            "SELECT record_key, subject, predicted, probability, primary_probability"
            " FROM record_subjects ORDER BY record_key, rank"
        ):
            yield key, _entry(subject, predicted, prob, pprob)
