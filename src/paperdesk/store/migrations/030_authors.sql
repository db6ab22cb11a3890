-- Author profiles: every author position on every record (a signature, `KEY#POSITION`)
-- is attributed to one profile. Curations (merge / split / claim) are kept as the groups of
-- signatures they fixed, with who/when; resolve re-applies them as constraints every run.
CREATE TABLE author_profiles (
    author_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,                  -- canonical display name
    name_folded TEXT NOT NULL,
    block TEXT NOT NULL,                 -- blocking key, e.g. `bengio y`
    n_signatures INTEGER NOT NULL,
    n_records INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX author_profiles_block ON author_profiles(block);
CREATE INDEX author_profiles_name ON author_profiles(name_folded);

CREATE TABLE author_signatures (
    sig_id TEXT PRIMARY KEY,             -- RECORD_KEY#POSITION
    record_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,                  -- display name on this record
    name_folded TEXT NOT NULL,           -- folded `given family`, for look-ups and frequencies
    block TEXT NOT NULL,
    author_id TEXT NOT NULL,
    UNIQUE (record_key, position)
);
CREATE INDEX author_signatures_author ON author_signatures(author_id);
CREATE INDEX author_signatures_block ON author_signatures(block);
CREATE INDEX author_signatures_name ON author_signatures(name_folded);

CREATE TABLE author_curations (
    id INTEGER PRIMARY KEY,
    action TEXT NOT NULL,                -- merge | split | claim
    groups TEXT NOT NULL,                -- JSON list of lists of signature ids
    apart INTEGER NOT NULL,              -- 1: the groups stay apart; 0: all one person
    args TEXT NOT NULL,                  -- JSON: the command as given, for the log
    who TEXT NOT NULL,
    at TEXT NOT NULL
);

-- A profile that disappeared (merged away) points to the one that took its signatures.
CREATE TABLE author_redirects (
    old_id TEXT PRIMARY KEY,
    new_id TEXT NOT NULL,
    at TEXT NOT NULL
);
