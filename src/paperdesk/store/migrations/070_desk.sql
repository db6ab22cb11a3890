-- The personal desk (issue 20). Curators become users with a role: every account can keep
-- a library, and only those with the `curator` role may apply corrections. Existing
-- accounts were all curators, so they keep that role; `paperdesk user add` makes `user`s.
-- Portable SQL: the PostgreSQL schema follows this file (INTEGER PRIMARY KEY ids become
-- identity columns there; the rest is standard).
ALTER TABLE curators RENAME TO users;
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'curator';
ALTER TABLE users ADD COLUMN email TEXT;                       -- for the daily digest
ALTER TABLE users ADD COLUMN digest INTEGER NOT NULL DEFAULT 0; -- 1: send the daily e-mail
ALTER TABLE curator_sessions RENAME TO user_sessions;

-- Entries of an imported library that match no work: kept as the user's own records, so
-- they show in the library and still teach the recommender. `item` `mine:<id>` names one.
CREATE TABLE user_records (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
    data TEXT NOT NULL,                  -- JSON: title, authors[], year, doi, arxiv_id, abstract, venue, categories
    origin TEXT NOT NULL,                -- the file's format and the entry's key (bibtex:smith2020)
    created_at TEXT NOT NULL
);
CREATE INDEX user_records_by_user ON user_records (username);

-- A user's saved works: `item` is a work id (W123), a record key (SOURCE:ID, before the
-- works stage has run) or `mine:<id>` (a user_records row).
CREATE TABLE library (
    username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
    item TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',     -- JSON list of strings
    note TEXT,
    read_at TEXT,                        -- when marked read; NULL: unread
    added_at TEXT NOT NULL,
    PRIMARY KEY (username, item)
);

-- Explicit ratings: +1 relevant (a positive like a saved work), -1 not relevant (never
-- recommended again, and works like it rank lower).
CREATE TABLE feedback (
    username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
    item TEXT NOT NULL,
    label INTEGER NOT NULL CHECK (label IN (-1, 1)),
    at TEXT NOT NULL,
    PRIMARY KEY (username, item)
);

CREATE TABLE follows (
    username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('author', 'subject')),
    value TEXT NOT NULL,                 -- an author profile id or name; a subject code
    created_at TEXT NOT NULL,
    PRIMARY KEY (username, kind, value)
);

CREATE TABLE saved_searches (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
    name TEXT NOT NULL,
    query TEXT NOT NULL,                 -- the search language: `diffusion -medical cat:cs.CV`
    created_at TEXT NOT NULL,
    UNIQUE (username, name)
);

-- Secret feed addresses: the token is random and shown once; only its sha256 is kept, so a
-- copy of the database opens no feed. Deleting the row revokes it.
CREATE TABLE feed_tokens (
    token_hash TEXT PRIMARY KEY,
    username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
    scope TEXT NOT NULL,                 -- `personal` or `search:<saved search name>`
    created_at TEXT NOT NULL
);
CREATE INDEX feed_tokens_by_user ON feed_tokens (username);

-- Works already shown to a user (for-you page, feed, digest): "new since your last visit".
-- Keyed by work id, so a paper is shown once across days, versions and sources.
CREATE TABLE seen (
    username TEXT NOT NULL REFERENCES users (username) ON DELETE CASCADE,
    item TEXT NOT NULL,
    first_at TEXT NOT NULL,
    PRIMARY KEY (username, item)
);
