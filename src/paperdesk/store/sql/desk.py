"""The desk repository of both backends (`store/desk_base.py`; tables of migration
070_desk.sql).

Every write opens a transaction of its own or joins the caller's (`Tx`). The SQL is the
common dialect (no `json_each`, no rowid, `ON CONFLICT … DO NOTHING`), which the
PostgreSQL backend runs through its dialect layer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from paperdesk.store.authors_base import AuthorRepository
from paperdesk.store.desk_base import (
    CandidateRow,
    FeatureRow,
    FeedToken,
    FollowRow,
    LibraryItem,
    OwnRecord,
    SavedSearch,
    UserRow,
)
from paperdesk.store.sql.connection import Conn, Tx, chunks, has_table, placeholders

_CHUNK = 400






_USER = "SELECT username, role, created_at, email, digest FROM users"


def _user(row: tuple[Any, ...]) -> UserRow:
    return UserRow(row[0], row[1], row[2], row[3], bool(row[4]))


class Desk:
    """The desk repository of one connection (the store's writer or a reader)."""

    def __init__(self, conn: Conn, authors: AuthorRepository | None = None):
        self.conn = conn
        self.authors = authors
        """The store's author repository (a followed profile's records)."""

    def _write(self, sql: str, args: Sequence[Any] = ()) -> int:
        with Tx(self.conn):
            return self.conn.execute(sql, args).rowcount

    # -- users and sessions ----------------------------------------------------------
    def create_user(self, username: str, password_hash: str, role: str, stamp: str) -> bool:
        return self._write(
            "INSERT INTO users (username, password_hash, created_at, role) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (username) DO NOTHING",
            (username, password_hash, stamp, role),
        ) == 1

    def set_password(self, username: str, password_hash: str) -> bool:
        with Tx(self.conn):
            n = self.conn.execute(
                "UPDATE users SET password_hash = ? WHERE username = ?", (password_hash, username)
            ).rowcount
            # A new password ends every session signed in with the old one.
            self.conn.execute("DELETE FROM user_sessions WHERE username = ?", (username,))
        return n == 1

    def set_role(self, username: str, role: str) -> bool:
        return self._write("UPDATE users SET role = ? WHERE username = ?", (role, username)) == 1

    def set_email(self, username: str, email: str | None, digest: bool) -> bool:
        return self._write(
            "UPDATE users SET email = ?, digest = ? WHERE username = ?",
            (email, int(digest), username),
        ) == 1

    def remove_user(self, username: str) -> bool:
        # Foreign keys cascade; said explicitly too, for a connection opened without them.
        with Tx(self.conn):
            for table in ("user_sessions", "library", "user_records", "feedback", "follows",
                          "saved_searches", "feed_tokens", "seen"):
                self.conn.execute(f"DELETE FROM {table} WHERE username = ?", (username,))  # noqa: S608 - our table names
            return self.conn.execute("DELETE FROM users WHERE username = ?", (username,)).rowcount == 1

    def user(self, username: str) -> UserRow | None:
        row = self.conn.execute(_USER + " WHERE username = ?", (username,)).fetchone()
        return None if row is None else _user(row)

    def users(self) -> list[UserRow]:
        return [_user(r) for r in self.conn.execute(_USER + " ORDER BY username")]

    def users_with_digest(self) -> list[UserRow]:
        return [_user(r) for r in self.conn.execute(
            _USER + " WHERE digest = 1 AND email IS NOT NULL ORDER BY username")]

    def password_hash(self, username: str) -> str | None:
        row = self.conn.execute(
            "SELECT password_hash FROM users WHERE username = ?", (username,)
        ).fetchone()
        return None if row is None else str(row[0])

    def add_session(self, token_hash: str, username: str, created: str, expires: str) -> None:
        with Tx(self.conn):
            self.conn.execute("DELETE FROM user_sessions WHERE expires_at < ?", (created,))
            self.conn.execute(
                "INSERT INTO user_sessions (token_hash, username, created_at, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (token_hash, username, created, expires),
            )

    def session_user(self, token_hash: str, at: str) -> str | None:
        row = self.conn.execute(
            "SELECT username FROM user_sessions WHERE token_hash = ? AND expires_at >= ?",
            (token_hash, at),
        ).fetchone()
        return None if row is None else str(row[0])

    def delete_session(self, token_hash: str) -> None:
        self._write("DELETE FROM user_sessions WHERE token_hash = ?", (token_hash,))

    # -- library ---------------------------------------------------------------------
    def add_items(self, username: str, items: Sequence[str], stamp: str) -> int:
        n = 0
        with Tx(self.conn):
            for item in items:
                n += self.conn.execute(
                    "INSERT INTO library (username, item, added_at) VALUES (?, ?, ?)"
                    " ON CONFLICT (username, item) DO NOTHING",
                    (username, item, stamp),
                ).rowcount
        return n

    def remove_items(self, username: str, items: Sequence[str]) -> int:
        n = 0
        with Tx(self.conn):
            for item in items:
                n += self.conn.execute(
                    "DELETE FROM library WHERE username = ? AND item = ?", (username, item)
                ).rowcount
        return n

    def library(self, username: str) -> list[LibraryItem]:
        rows = self.conn.execute(
            "SELECT item, added_at, tags, note, read_at FROM library WHERE username = ?"
            " ORDER BY added_at DESC, item",
            (username,),
        )
        return [LibraryItem(i, a, orjson.loads(t), n, r) for i, a, t, n, r in rows]

    def update_item(
        self,
        username: str,
        item: str,
        *,
        tags: list[str] | None = None,
        note: str | None = None,
        read_at: str | None = None,
        unread: bool = False,
    ) -> bool:
        sets: list[str] = []
        args: list[Any] = []
        if tags is not None:
            sets.append("tags = ?")
            args.append(orjson.dumps(tags).decode())
        if note is not None:
            sets.append("note = ?")
            args.append(note or None)
        if read_at is not None:
            sets.append("read_at = ?")
            args.append(read_at)
        elif unread:
            sets.append("read_at = NULL")
        if not sets:
            return self.conn.execute(
                "SELECT 1 FROM library WHERE username = ? AND item = ?", (username, item)
            ).fetchone() is not None
        sql = f"UPDATE library SET {', '.join(sets)} WHERE username = ? AND item = ?"  # noqa: S608 - fixed column names
        return self._write(sql, [*args, username, item]) == 1

    def add_own(self, username: str, data: dict[str, Any], origin: str, stamp: str) -> int:
        with Tx(self.conn):
            cur = self.conn.execute(
                "INSERT INTO user_records (username, data, origin, created_at) VALUES (?, ?, ?, ?)",
                (username, orjson.dumps(data).decode(), origin, stamp),
            )
            return int(cur.lastrowid or 0)

    def own_records(self, username: str, ids: Sequence[int] | None = None) -> list[OwnRecord]:
        sql = "SELECT id, data, origin, created_at FROM user_records WHERE username = ?"
        if ids is None:
            rows = list(self.conn.execute(sql + " ORDER BY id", (username,)))
        else:
            rows = []
            for part in chunks(list(ids), _CHUNK):
                rows += self.conn.execute(sql + f" AND id IN ({placeholders(len(part))})", [username, *part])
        return [OwnRecord(int(i), orjson.loads(d), o, c) for i, d, o, c in rows]

    def delete_own(self, username: str, ids: Sequence[int]) -> None:
        with Tx(self.conn):
            for i in ids:
                self.conn.execute("DELETE FROM user_records WHERE username = ? AND id = ?", (username, i))

    # -- feedback and follows ----------------------------------------------------------
    def put_feedback(self, username: str, items: Sequence[str], label: int, stamp: str) -> None:
        with Tx(self.conn):
            for item in items:
                self.conn.execute(
                    "INSERT INTO feedback (username, item, label, at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (username, item) DO UPDATE SET label = excluded.label, at = excluded.at",
                    (username, item, label, stamp),
                )

    def remove_feedback(self, username: str, items: Sequence[str]) -> int:
        n = 0
        with Tx(self.conn):
            for item in items:
                n += self.conn.execute(
                    "DELETE FROM feedback WHERE username = ? AND item = ?", (username, item)
                ).rowcount
        return n

    def feedback(self, username: str) -> dict[str, int]:
        rows = self.conn.execute("SELECT item, label FROM feedback WHERE username = ?", (username,))
        return {i: int(label) for i, label in rows}

    def follow(self, username: str, kind: str, value: str, stamp: str, label: str | None = None) -> bool:
        return self._write(
            "INSERT INTO follows (username, kind, value, created_at, label) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (username, kind, value) DO NOTHING",
            (username, kind, value, stamp, label or value),
        ) == 1

    def unfollow(self, username: str, kind: str, value: str) -> bool:
        return self._write(
            "DELETE FROM follows WHERE username = ? AND kind = ? AND (value = ? OR label = ?)",
            (username, kind, value, value),
        ) >= 1

    def follows(self, username: str) -> list[FollowRow]:
        rows = self.conn.execute(
            "SELECT kind, value, label FROM follows WHERE username = ? ORDER BY kind, label, value",
            (username,),
        )
        return [FollowRow(k, v, lab or v) for k, v, lab in rows]

    # -- saved searches and feed tokens --------------------------------------------------
    def add_search(self, username: str, name: str, query: str, stamp: str) -> int | None:
        with Tx(self.conn):
            cur = self.conn.execute(
                "INSERT INTO saved_searches (username, name, query, created_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (username, name) DO NOTHING",
                (username, name, query, stamp),
            )
            if cur.rowcount != 1:
                return None
            return int(cur.lastrowid or 0)

    def remove_search(self, username: str, name: str) -> bool:
        with Tx(self.conn):
            self.conn.execute(
                "DELETE FROM feed_tokens WHERE username = ? AND scope = ?", (username, f"search:{name}")
            )
            return self.conn.execute(
                "DELETE FROM saved_searches WHERE username = ? AND name = ?", (username, name)
            ).rowcount == 1

    def searches(self, username: str) -> list[SavedSearch]:
        rows = self.conn.execute(
            "SELECT id, name, query, created_at FROM saved_searches WHERE username = ? ORDER BY name",
            (username,),
        )
        return [SavedSearch(int(i), n, q, c) for i, n, q, c in rows]

    def add_token(self, token_hash: str, username: str, scope: str, stamp: str) -> None:
        self._write(
            "INSERT INTO feed_tokens (token_hash, username, scope, created_at) VALUES (?, ?, ?, ?)",
            (token_hash, username, scope, stamp),
        )

    def token_owner(self, token_hash: str) -> tuple[str, str] | None:
        row = self.conn.execute(
            "SELECT username, scope FROM feed_tokens WHERE token_hash = ?", (token_hash,)
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def revoke_tokens(self, username: str, token_id: str | None = None, scope: str | None = None) -> int:
        sql = "DELETE FROM feed_tokens WHERE username = ?"
        args: list[Any] = [username]
        if token_id:
            sql += " AND substr(token_hash, 1, ?) = ?"
            args += [len(token_id), token_id.lower()]
        if scope:
            sql += " AND scope = ?"
            args.append(scope)
        return self._write(sql, args)

    def tokens(self, username: str) -> list[FeedToken]:
        rows = self.conn.execute(
            "SELECT token_hash, scope, created_at FROM feed_tokens WHERE username = ?"
            " ORDER BY created_at, token_hash",
            (username,),
        )
        return [FeedToken(h[:12], s, c) for h, s, c in rows]

    # -- seen works ----------------------------------------------------------------------
    def mark_seen(self, username: str, items: Sequence[str], stamp: str) -> None:
        with Tx(self.conn):
            for item in items:
                self.conn.execute(
                    "INSERT INTO seen (username, item, first_at) VALUES (?, ?, ?)"
                    " ON CONFLICT (username, item) DO NOTHING",
                    (username, item, stamp),
                )

    def seen(self, username: str, items: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for part in chunks(list(items), _CHUNK):
            sql = f"SELECT item, first_at FROM seen WHERE username = ? AND item IN ({placeholders(len(part))})"  # noqa: S608
            out.update({i: t for i, t in self.conn.execute(sql, [username, *part])})
        return out

    # -- reads over the catalog ------------------------------------------------------------
    def _work_col(self) -> tuple[str, str]:
        if has_table(self.conn, "work_records"):
            return "wr.work_id", " LEFT JOIN work_records wr ON wr.record_key = r.key"
        return "NULL", ""

    def records_by_ids(self, kind: str, values: Sequence[str]) -> dict[str, list[tuple[str, int | None]]]:
        column = {"doi": "doi", "arxiv": "arxiv_id"}[kind]
        col, join = self._work_col()
        out: dict[str, list[tuple[str, int | None]]] = {}
        for part in chunks(list(values), _CHUNK):
            sql = (f"SELECT r.{column}, r.key, {col} FROM records r{join}"  # noqa: S608 - fixed names
                   f" WHERE r.{column} IN ({placeholders(len(part))}) ORDER BY r.key")
            for v, key, wid in self.conn.execute(sql, part):
                out.setdefault(v, []).append((key, None if wid is None else int(wid)))
        return out

    def titles(self) -> Iterator[tuple[str, str]]:
        cur = self.conn.execute("SELECT key, title FROM records WHERE title IS NOT NULL")
        while rows := cur.fetchmany(5000):
            yield from rows

    def record_works(self, keys: Sequence[str]) -> dict[str, int]:
        if not has_table(self.conn, "work_records"):
            return {}
        out: dict[str, int] = {}
        for part in chunks(list(keys), _CHUNK):
            sql = f"SELECT record_key, work_id FROM work_records WHERE record_key IN ({placeholders(len(part))})"  # noqa: S608
            out.update({k: int(w) for k, w in self.conn.execute(sql, part)})
        return out

    def record_data(self, keys: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for part in chunks(list(keys), _CHUNK):
            sql = f"SELECT key, data FROM records WHERE key IN ({placeholders(len(part))})"  # noqa: S608
            out.update({k: bytes(d) for k, d in self.conn.execute(sql, part)})
        return out

    def candidates(self, since: str, until: str) -> list[CandidateRow]:
        col, join = self._work_col()
        sql = (f"SELECT r.key, {col}, r.appeared, r.data FROM records r{join}"  # noqa: S608
               " WHERE r.appeared >= ? AND r.appeared <= ? ORDER BY r.appeared, r.key")
        return [CandidateRow(k, None if w is None else int(w), a, bytes(d))
                for k, w, a, d in self.conn.execute(sql, (since, until[:10]))]

    def latest_day(self) -> str | None:
        row = self.conn.execute("SELECT MAX(appeared) FROM records").fetchone()
        return None if row is None or row[0] is None else str(row[0])[:10]

    # -- the recommender's stored features -------------------------------------------------
    def _feature_sql(self, where: str) -> str:
        col, join = self._work_col()
        return (f"SELECT r.key, {col}, r.appeared, r.seq, f.terms, f.meta FROM records r{join}"  # noqa: S608
                " LEFT JOIN desk_features f ON f.record_key = r.key AND f.seq = r.seq AND f.format = ?"
                f" WHERE {where}")

    @staticmethod
    def _feature_row(row: tuple[Any, ...]) -> FeatureRow:
        k, w, a, q, t, m = row
        return FeatureRow(k, None if w is None else int(w), a, int(q), None if t is None else bytes(t), m)

    def feature_rows(self, since: str, until: str, fmt: int) -> list[FeatureRow]:
        sql = self._feature_sql("r.appeared >= ? AND r.appeared <= ?") + " ORDER BY r.appeared, r.key"
        return [self._feature_row(r) for r in self.conn.execute(sql, (fmt, since, until[:10]))]

    def feature_rows_of(self, keys: Sequence[str], fmt: int) -> list[FeatureRow]:
        out: list[FeatureRow] = []
        for part in chunks(sorted(set(keys)), _CHUNK):
            sql = self._feature_sql(f"r.key IN ({placeholders(len(part))})")
            out += [self._feature_row(r) for r in self.conn.execute(sql, [fmt, *part])]
        return out

    def put_features(self, rows: Sequence[tuple[str, int, int, bytes, str]]) -> None:
        with Tx(self.conn):
            for row in rows:
                self.conn.execute(
                    "INSERT INTO desk_features (record_key, seq, format, terms, meta) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (record_key) DO UPDATE SET seq = excluded.seq, format = excluded.format,"
                    " terms = excluded.terms, meta = excluded.meta",
                    row,
                )

    def author_records(self, author_ids: Sequence[str]) -> dict[str, tuple[str, set[str]]]:
        out: dict[str, tuple[str, set[str]]] = {}
        authors = self.authors
        if authors is None or not has_table(self.conn, "author_signatures"):
            return out
        for aid in author_ids:
            now_id = authors.follow_redirects(aid)
            if authors.get_profile_row(now_id) is None:
                continue
            out[aid] = (now_id, {s.record_key for s in authors.signatures_of_author(now_id)})
        return out

    def vectors(self, refs: Sequence[str], model: str) -> dict[str, bytes]:
        if not has_table(self.conn, "search_vectors"):
            return {}
        out: dict[str, bytes] = {}
        for part in chunks(list(refs), _CHUNK):
            sql = ("SELECT d.work_id, v.vector FROM search_docs d JOIN search_vectors v"  # noqa: S608
                   f" ON v.docno = d.docno WHERE v.model = ? AND d.work_id IN ({placeholders(len(part))})")
            out.update({w: bytes(v) for w, v in self.conn.execute(sql, [model, *part])})
        return out
