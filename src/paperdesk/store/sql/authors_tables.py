"""The author tables of both backends: signatures, profiles, samples, their day deltas,
redirects.

`AuthorTables` holds what the resolve stage writes and reads; `authors_lookup` adds the
look-ups of pages and the CLI and the curation log, `authors.Authors` the reads of the
records a run resolves. Each backend completes it into its repository (`store.authors`,
`paperdesk.store.authors_base.AuthorRepository`) with a run's staged rows and the few
statements it spells its own way (`sqlite/authors*.py`, `postgres/authors.py`). Tables come
from `migrations/030_authors.sql` … `039_author_profiles_slim.sql` (`041`'s day deltas
went in migration 101).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson

from paperdesk.model import SourceRecord
from paperdesk.store.authors_base import (
    PackedProfile,
    ProfileRow,
    ProfileState,
    SampleRow,
    SignatureRow,
    pack_profile,
)
from paperdesk.store.base import now
from paperdesk.store.codec import decode_record
from paperdesk.store.profiles_codec import now_seconds, unpack_folded, unpack_variants
from paperdesk.store.rows import pack_ids, unpack_ids
from paperdesk.store.sql.connection import chunks, placeholders

_CHUNK = 500




def _select(base: str, cols: str, where: str) -> str:
    """SQL for `cols` of the rows of `base` restricted by `where` (table, columns and
    condition are ours)."""
    return f"SELECT {cols} FROM {base} WHERE {where}"  # noqa: S608


_SIG_COLS = "sig_id, record_key, position, name, name_folded, block, author_id, given"


# -- author_names / author_blocks: a profile's signatures per name and per block ----------

NameKey = tuple[str, str, str]
"""(name_folded, author_id, block) of a signature."""

_COUNTED = {"author_names": "name_folded", "author_blocks": "block"}


CountedRow = tuple[int, str, str, str]
"""(id, name_folded, author_id, block) of a signature: what the count tables and the
member lists hold of it."""


_PROFILE_SET = (
    " ON CONFLICT(author_id) DO UPDATE SET name = excluded.name,"
    " name_folded = excluded.name_folded, block = excluded.block,"
    " n_signatures = excluded.n_signatures, n_records = excluded.n_records,"
    " givens = excluded.givens, reps = excluded.reps, variants = excluded.variants,"
    " updated_at = excluded.updated_at"
)
_PROFILE_INTO = (
    " (author_id, name, name_folded, block, n_signatures, n_records, givens, reps, variants,"
    " created_at, updated_at)"
)
_PROFILE_UPSERT = (
    f"INSERT INTO author_profiles{_PROFILE_INTO} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"  # noqa: S608
    + _PROFILE_SET
)


_PROFILE_COLS = "author_id, name, name_folded, block, n_signatures, n_records, givens, reps, variants"


class AuthorTables:
    """Signatures, profiles and samples of one connection (the store's writer or a
    reader). Writes run inside the caller's `store.transaction()`."""

    _IN_IDS: str
    """Rows whose id is in a list bound as one parameter (`_ids`): a profile may have more
    signatures than SQLite takes variables. Each backend spells it its own way."""
    _VARIANT_ORDER = "author_id"
    """A profile's variants come in group order (SQLite sorts the groups by their key)."""

    def __init__(self, conn: Any):
        self.conn = conn

    def _ids(self, ids: Sequence[int]) -> Any:
        """The one parameter `_IN_IDS` takes for these (sorted) ids."""
        raise NotImplementedError

    def _signatures_where(
        self, column: str, values: Iterable[str]
    ) -> list[SignatureRow]:
        """Signature rows whose `column` (one of our own column names) is in `values`."""
        assert column in {"sig_id", "record_key"}
        rows = self._in_chunks(f"SELECT {_SIG_COLS} FROM author_signatures WHERE {column}",  # noqa: S608
                               values, " ORDER BY record_key, position")
        return [SignatureRow(*r) for r in rows]

    def _in_chunks(self, select: str, values: Iterable[str], tail: str = "") -> list[Any]:
        """The rows of `select … IN (values) tail` (our own SQL text around the values),
        the values sorted and a few hundred a statement."""
        out: list[Any] = []
        for chunk in chunks(sorted(set(values))):
            out.extend(self.conn.execute(f"{select} IN ({placeholders(len(chunk))}){tail}", list(chunk)))
        return out

    def signatures_in_blocks(self, blocks: Iterable[str]) -> list[SignatureRow]:
        """The signatures written in these blocks: the profiles that have signatures in them
        (`author_blocks`), then those profiles' signatures of these blocks. In the order the
        block index gave them before migration 037: per chunk of 500 sorted blocks, by
        record key and position."""
        chunk_of = {b: k // _CHUNK for k, b in enumerate(sorted(set(blocks)))}
        authors: set[str] = set()
        for chunk in chunks(list(chunk_of)):
            where = f"block IN ({placeholders(len(chunk))})"
            authors.update(
                r[0]
                for r in self.conn.execute(
                    _select("author_blocks", "author_id", where), list(chunk)
                )
            )
        out = [SignatureRow(*r) for r in self._member_rows(authors, _SIG_COLS) if r[5] in chunk_of]
        out.sort(key=lambda r: (chunk_of[r.block], r.record_key, r.position))
        return out

    def signatures_by_id(self, sig_ids: Iterable[str]) -> list[SignatureRow]:
        return self._signatures_where("sig_id", sig_ids)

    def signatures_of_records(self, keys: Iterable[str]) -> list[SignatureRow]:
        return self._signatures_where("record_key", keys)

    def authors_of_records(self, keys: Iterable[str]) -> list[tuple[str, str]]:
        return self._in_chunks("SELECT author_id, name FROM author_signatures WHERE record_key",
                               keys, " ORDER BY record_key, position")

    def unit_rows_of_records(
        self, keys: Iterable[str]
    ) -> list[tuple[str, str, int, str, str | None, str]]:
        """(record_key, sig_id, position, block, given, author_id) of these records'
        signatures, by record and position: what `authors_units.stored_units` takes, as
        plain tuples (a 1M day's attach reads ~49k of them)."""
        out: list[tuple[str, str, int, str, str | None, str]] = []
        for chunk in chunks(sorted(set(keys))):
            out.extend(
                self.conn.execute(
                    "SELECT record_key, sig_id, position, block, given, author_id"  # noqa: S608
                    f" FROM author_signatures WHERE record_key IN ({placeholders(len(chunk))})"
                    " ORDER BY record_key, position",
                    list(chunk),
                )
            )
        return out

    def signatures_of_author(self, author_id: str) -> list[SignatureRow]:
        rows = [SignatureRow(*r) for r in self._member_rows([author_id], _SIG_COLS)]
        rows.sort(key=lambda r: (r.record_key, r.position))
        return rows

    def _members(self, author_ids: Iterable[str]) -> dict[str, list[int]]:
        """The signature ids of these profiles (those that have any)."""
        out: dict[str, list[int]] = {}
        for chunk in chunks(sorted(set(author_ids))):
            where = f"author_id IN ({placeholders(len(chunk))})"
            out.update(
                (a, unpack_ids(b))
                for a, b in self.conn.execute(
                    _select("author_members", "author_id, ids", where), list(chunk)
                )
            )
        return out

    def _member_rows(
        self, author_ids: Iterable[str], cols: str
    ) -> Iterator[tuple[Any, ...]]:
        """`cols` of the signatures of these profiles, a few hundred profiles a statement."""
        for chunk in chunks(sorted(set(author_ids))):
            ids = [i for m in self._members(chunk).values() for i in m]
            if ids:
                yield from self.conn.execute(
                    f"SELECT {cols} FROM author_signatures WHERE {self._IN_IDS}",  # noqa: S608
                    (self._ids(sorted(ids)),),
                )

    def _members_change(
        self, gained: dict[str, set[int]], lost: dict[str, set[int]]
    ) -> None:
        """Add and remove signature ids of profiles; a profile left with none loses its
        row."""
        current = self._members([*gained, *lost])
        puts: list[tuple[str, bytes]] = []
        gone: list[tuple[str]] = []
        for aid in sorted({*gained, *lost}):
            ids = (set(current.get(aid, ())) - lost.get(aid, set())) | gained.get(aid, set())
            if ids:
                puts.append((aid, pack_ids(ids)))
            else:
                gone.append((aid,))
        self.conn.executemany(
            "INSERT OR REPLACE INTO author_members (author_id, ids) VALUES (?, ?)", puts
        )
        self.conn.executemany("DELETE FROM author_members WHERE author_id = ?", gone)

    def _members_rebuild(self) -> None:
        """`author_members` packed again from every signature (after a bulk write)."""
        raise NotImplementedError

    def count_signatures(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM author_signatures").fetchone()[0])

    def name_forms(self) -> list[str]:
        """Every folded name the store's signatures carry."""
        rows = self.conn.execute("SELECT DISTINCT name_folded FROM author_names")
        return [r[0] for r in rows]

    def counted_rows(self, table: str) -> list[tuple[str, str, int]]:
        """Every (name or block, profile, signatures) that `author_names` or `author_blocks`
        (`table`) holds, in key order (tests and checks)."""
        column = _COUNTED[table]
        sql = _select(table, f"{column}, author_id, n", "1 = 1")
        return self.conn.execute(f"{sql} ORDER BY {column}, author_id").fetchall()

    def _names_change(self, deltas: dict[NameKey, int]) -> None:
        """Add `deltas` (signatures gained, or lost when negative) to the counts of
        `author_names` and `author_blocks`; a row whose count comes to zero goes."""
        for table, column in _COUNTED.items():
            by: Counter[tuple[str, str]] = Counter()
            for (folded, aid, block), d in deltas.items():
                by[(folded if column == "name_folded" else block, aid)] += d
            changed = sorted((k, d) for k, d in by.items() if d)
            self.conn.executemany(
                f"INSERT INTO {table} ({column}, author_id, n) VALUES (?, ?, ?)"  # noqa: S608
                f" ON CONFLICT({column}, author_id) DO UPDATE SET n = {table}.n + excluded.n",
                ((*k, d) for k, d in changed),
            )
            self.conn.executemany(
                f"DELETE FROM {table} WHERE {column} = ? AND author_id = ? AND n <= 0",  # noqa: S608
                (k for k, d in changed if d < 0),
            )

    def _counted_rows(self, where: str, args: Sequence[Any]) -> list[CountedRow]:
        return self.conn.execute(
            f"SELECT id, name_folded, author_id, block FROM author_signatures WHERE {where}",  # noqa: S608
            list(args),
        ).fetchall()

    def _count(self, rows: Sequence[CountedRow], sign: int) -> None:
        """Add (`sign` 1) or take away (-1) these signature rows in `author_names`,
        `author_blocks` and `author_members`."""
        deltas: Counter[NameKey] = Counter()
        ids: dict[str, set[int]] = {}
        for i, folded, aid, block in rows:
            deltas[(folded, aid, block)] += sign
            ids.setdefault(aid, set()).add(i)
        self._names_change(deltas)
        self._members_change(ids if sign > 0 else {}, ids if sign < 0 else {})

    def _names_rebuild(self) -> None:
        """`author_names` and `author_blocks` counted again from every signature (after a
        bulk write): one sort of the table each instead of a random upsert per row."""
        for table, column in _COUNTED.items():
            self.conn.execute(f"DELETE FROM {table}")  # noqa: S608
            self.conn.execute(
                f"INSERT INTO {table} ({column}, author_id, n)"  # noqa: S608
                f" SELECT {column}, author_id, COUNT(*) FROM author_signatures"
                f" GROUP BY {column}, author_id ORDER BY {column}, author_id"
            )

    def delete_signatures_of_records(self, keys: Iterable[str]) -> None:
        for chunk in chunks(sorted(set(keys))):
            where = f"record_key IN ({placeholders(len(chunk))})"
            gone = self._counted_rows(where, chunk)
            self.conn.execute(f"DELETE FROM author_signatures WHERE {where}", list(chunk))  # noqa: S608
            self._count(gone, -1)

    def put_profiles(self, profiles: Iterable[ProfileRow | PackedProfile]) -> None:
        """Insert or update these profiles' rows (given as `ProfileRow`, or already packed by
        `pack_profile`), in the slim form of migration 039; an updated row keeps its
        creation time."""
        stamp = now_seconds()
        rows = [p if isinstance(p, tuple) else pack_profile(p) for p in profiles]
        self.conn.executemany(_PROFILE_UPSERT, [(*p, stamp, stamp) for p in rows])

    def profile_rows(
        self, author_ids: Iterable[str] | None = None
    ) -> Iterator[ProfileRow]:
        """The stored rows of these profiles (all, in id order, when `author_ids` is None),
        decoded: what `put_profiles` was given (a row from before migration 034 has no
        variants: an empty list)."""
        def decode(r: tuple[Any, ...]) -> ProfileRow:
            aid, name, folded, block, n_sig, n_rec, givens, reps, variants = r
            return ProfileRow(
                aid, name, unpack_folded(name, folded), block, int(n_sig), int(n_rec),
                orjson.loads(givens or "[]"), orjson.loads(reps or "[]"),
                [] if variants is None else unpack_variants(variants, block),
            )

        if author_ids is None:
            sql = _select("author_profiles", _PROFILE_COLS, "1 = 1") + " ORDER BY author_id"
            yield from map(decode, self.conn.execute(sql))
            return
        for chunk in chunks(sorted(set(author_ids))):
            where = f"author_id IN ({placeholders(len(chunk))})"
            yield from map(decode, self.conn.execute(
                _select("author_profiles", _PROFILE_COLS, where) + " ORDER BY author_id",
                list(chunk),
            ))

    def delete_profiles(self, author_ids: Iterable[str]) -> None:
        gone = [(a,) for a in sorted(set(author_ids))]
        self.conn.executemany("DELETE FROM author_profiles WHERE author_id = ?", gone)

    def count_profiles(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM author_profiles").fetchone()[0])

    def delete_all(self) -> None:
        """Every signature, profile and sample (a full run rebuilds them; curations and
        redirects stay)."""
        self.conn.execute("DELETE FROM author_signatures")
        for table in ("author_names", "author_blocks", "author_members", "author_profiles"):
            self.conn.execute(f"DELETE FROM {table}")  # noqa: S608
        self.conn.execute("DELETE FROM author_samples")

    def put_samples(self, rows: Iterable[tuple[str, bytes, bytes, bytes]]) -> None:
        """Samples as (sig_id, *`SampleRow`)."""
        self.conn.executemany(
            "INSERT OR REPLACE INTO author_samples (sig_id, meta, keys, vec) VALUES (?, ?, ?, ?)", rows
        )

    def get_samples(self, sig_ids: Iterable[str]) -> dict[str, SampleRow]:
        out: dict[str, SampleRow] = {}
        for chunk in chunks(sorted(set(sig_ids))):
            out.update(
                (s, (m, k, v))
                for s, m, k, v in self.conn.execute(
                    "SELECT sig_id, meta, keys, vec FROM author_samples"  # noqa: S608
                    f" WHERE sig_id IN ({placeholders(len(chunk))})",
                    list(chunk),
                )
            )
        return out

    def records_by_key(self, keys: Iterable[str]) -> dict[str, SourceRecord]:
        """Records (without raw payloads) by key, on any connection (a worker's read-only one
        too)."""
        out: dict[str, SourceRecord] = {}
        for chunk in chunks(sorted(set(keys))):
            for key, data in self.conn.execute(
                f"SELECT key, data FROM records WHERE key IN ({placeholders(len(chunk))})",  # noqa: S608
                list(chunk),
            ):
                out[key] = decode_record(data)
        return out

    def delete_samples_of_records(self, keys: Iterable[str]) -> None:
        """Samples of these records' signatures (ids `KEY#N`: the range `KEY#` … `KEY$`)."""
        self.conn.executemany(
            "DELETE FROM author_samples WHERE sig_id >= ? AND sig_id < ?",
            ((k + "#", k + "$") for k in sorted(set(keys))),
        )

    def profile_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT author_id FROM author_profiles")}

    def ids_in_use(self, ids: Sequence[str]) -> set[str]:
        """Those of `ids` that a profile or a redirect has (a superset when `ids` is long:
        then every id in use, read in one scan instead of many look-ups)."""
        if len(ids) > 20_000:
            return self.profile_ids() | {r[0] for r in self.conn.execute("SELECT old_id FROM author_redirects")}
        out: set[str] = set()
        for chunk in chunks(sorted(set(ids))):
            marks = placeholders(len(chunk))
            out.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT author_id FROM author_profiles WHERE author_id IN ({marks})"  # noqa: S608
                    f" UNION SELECT old_id FROM author_redirects WHERE old_id IN ({marks})",
                    [*chunk, *chunk],
                )
            )
        return out

    def profile_summaries(
        self, blocks: Iterable[str]
    ) -> list[tuple[str, str, str, int]]:
        """(author_id, block, givens, n_signatures) of the profiles in these blocks, givens
        as their stored JSON text. A day reads ~200k of them and keeps a few, so this is
        answered from an index alone (migration 035), and the caller decodes each distinct
        givens text once and reads the samples of the kept ones (`profile_samples`). In no
        particular order."""
        return self._in_chunks("SELECT author_id, block, COALESCE(givens, '[]'), n_signatures"
                               " FROM author_profiles WHERE block", blocks)

    def profile_samples(self, author_ids: Iterable[str]) -> dict[str, list[str]]:
        """The sampled member ids (`reps`) of these profiles."""
        out: dict[str, list[str]] = {}
        for chunk in chunks(sorted(set(author_ids))):
            where = f"author_id IN ({placeholders(len(chunk))})"
            rows = self.conn.execute(_select("author_profiles", "author_id, reps", where), list(chunk))
            out.update((a, orjson.loads(r or "[]")) for a, r in rows)
        return out

    def profile_states(self, author_ids: Iterable[str]) -> dict[str, ProfileState]:
        out: dict[str, ProfileState] = {}
        for chunk in chunks(sorted(set(author_ids))):
            where = f"author_id IN ({placeholders(len(chunk))})"
            rows = self.conn.execute(
                _select("author_profiles", "author_id, reps, n_records, variants, block", where),
                list(chunk),
            )
            out.update(
                (
                    a,
                    ProfileState(
                        orjson.loads(r or "[]"),
                        int(n),
                        None if v is None else unpack_variants(v, b),
                        b,
                    ),
                )
                for a, r, n, v, b in rows
            )
        return out

    def name_variants_by_author(
        self, author_ids: Iterable[str] | None = None
    ) -> Iterator[tuple[str, list[tuple[str, str, str | None, str, int]], int]]:
        """Per profile (in id order): its (name, name_folded, given, block, count) variants and
        its number of distinct records — what a profile row is computed from. All profiles
        when `author_ids` is None (one scan), else just those."""
        if author_ids is None:
            yield from self._variants("", [])
            return
        for chunk in chunks(sorted(set(author_ids))):
            ids = sorted(i for m in self._members(chunk).values() for i in m)
            if ids:
                yield from self._variants(f" WHERE {self._IN_IDS}", [self._ids(ids)])

    def _variants(
        self, where: str, args: list[str]
    ) -> Iterator[tuple[str, list[tuple[str, str, str | None, str, int]], int]]:
        n_records = dict(
            self.conn.execute(
                f"SELECT author_id, COUNT(DISTINCT record_key) FROM author_signatures{where}"  # noqa: S608
                " GROUP BY author_id",
                args,
            ).fetchall()
        )
        rows = self.conn.execute(
            "SELECT author_id, name, name_folded, given, block, COUNT(*)"  # noqa: S608
            f" FROM author_signatures{where} GROUP BY author_id, name, name_folded, given, block"
            f" ORDER BY {self._VARIANT_ORDER}",
            args,
        )
        current: str | None = None
        acc: list[tuple[str, str, str | None, str, int]] = []
        for aid, name, folded, given, block, n in rows:
            if aid != current:
                if current is not None:
                    yield current, acc, int(n_records[current])
                current, acc = aid, []
            acc.append((name, folded, given, block, int(n)))
        if current is not None:
            yield current, acc, int(n_records[current])

    def record_counts(self, author_ids: Iterable[str]) -> dict[str, int]:
        """Distinct records per profile (of those that have signatures)."""
        keys: dict[str, set[str]] = {}
        for aid, key in self._member_rows(author_ids, "author_id, record_key"):
            keys.setdefault(aid, set()).add(key)
        return {aid: len(k) for aid, k in keys.items()}

    def member_ids(self, author_id: str) -> list[str]:
        return sorted(r[0] for r in self._member_rows([author_id], "sig_id"))

    def set_authors(self, moves: Iterable[tuple[str, str]]) -> None:
        """(sig_id, author_id): stored signatures that changed profile (the last move of a
        signature named twice wins); their name and block counts move with them."""
        to = dict(moves)
        old: list[CountedRow] = []
        new: list[CountedRow] = []
        for chunk in chunks(sorted(to)):
            for sig, i, folded, aid, block in self.conn.execute(
                "SELECT sig_id, id, name_folded, author_id, block FROM author_signatures"  # noqa: S608
                f" WHERE sig_id IN ({placeholders(len(chunk))})",
                list(chunk),
            ):
                if to[sig] != aid:
                    old.append((i, folded, aid, block))
                    new.append((i, folded, to[sig], block))
        self.conn.executemany(
            "UPDATE author_signatures SET author_id = ? WHERE sig_id = ?", ((a, s) for s, a in to.items())
        )
        self._count(old, -1)
        self._count(new, 1)

    def add_redirect(self, old_id: str, new_id: str) -> None:
        if old_id == new_id:
            return
        self.conn.execute(
            "INSERT OR REPLACE INTO author_redirects (old_id, new_id, at) VALUES (?, ?, ?)",
            (old_id, new_id, now()),
        )
        # An id that comes back to life is no longer redirected.
        self.conn.execute("DELETE FROM author_redirects WHERE old_id = ?", (new_id,))

