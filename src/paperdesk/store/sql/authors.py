"""The author repository's part both backends share: `authors_tables` (what the resolve
stage writes and reads), `authors_lookup` (look-ups and the curation log) and the reads of
the records a run resolves, as one class. Each backend's repository adds a run's staged
rows and its own id binding (`sqlite/authors.py`, `postgres/authors.py`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from paperdesk.store.sql.authors_lookup import AuthorLookups
from paperdesk.store.sql.connection import chunks, placeholders


class Authors(AuthorLookups):
    """Author signatures, profiles, samples, redirects and curations of one connection
    (the store's writer or a reader)."""

    # -- the records a run resolves -------------------------------------------------------
    def changed_records(self, since: int) -> Iterator[tuple[int, str, bytes]]:
        """(seq, key, stored data) for records changed after `since`, in seq order —
        `iter_changed` without building `SourceRecord`s, which the author stage only needs
        for a few of a million records (decode them with `decode_record`)."""
        cur = self.conn.execute(
            "SELECT seq, key, data FROM records WHERE seq > ? ORDER BY seq, rowid", (since,)
        )
        while rows := cur.fetchmany(1000):
            yield from rows

    def all_works(self) -> dict[str, str]:
        return {
            k: f"W{w}" for k, w in self.conn.execute("SELECT record_key, work_id FROM work_records")
        }

    def records_of_works(self, works: Iterable[str]) -> dict[str, str]:
        """Record key → work id for every record of these works (ids as `W<n>`)."""
        ids: Sequence[int] = sorted({int(w[1:]) for w in works if w.startswith("W")})
        out: dict[str, str] = {}
        for chunk in chunks(ids):
            out.update(
                (k, f"W{w}")
                for k, w in self.conn.execute(
                    "SELECT record_key, work_id FROM work_records"  # noqa: S608
                    f" WHERE work_id IN ({placeholders(len(chunk))})",
                    list(chunk),
                )
            )
        return out

    def records_of_part(
        self, since: int, part: int, parts: int
    ) -> Iterator[tuple[int, int, str, bytes, str | None]]:
        """(seq, rowid, key, stored data, work id `W<n>` or None) of the records changed
        after `since` whose work (or, for a record in no work, its rowid) falls in `part`
        of `parts`, in seq order: the records of one work always land in one part."""
        cur = self.conn.execute(
            "SELECT r.seq, r.rowid, r.key, r.data, w.work_id FROM records r"
            " LEFT JOIN work_records w ON w.record_key = r.key"
            " WHERE r.seq > ? AND COALESCE(w.work_id, r.rowid) % ? = ? ORDER BY r.seq, r.rowid",
            (since, parts, part),
        )
        while rows := cur.fetchmany(1000):
            for seq, rowid, key, data, work in rows:
                yield seq, rowid, key, data, None if work is None else f"W{work}"
