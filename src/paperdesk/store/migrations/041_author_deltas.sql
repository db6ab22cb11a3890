-- Where a day writes its per-profile rows: small tables beside the large ones. A 1M store's
-- day touches ~10.5k profiles spread at random over 455k, and each per-profile B-tree cost a
-- random leaf page per touched profile: 9,766 of the day's 10,441 dirtied pages of 16 KiB
-- (the profile rows 3,952 and their fit index 1,424, the member lists 1,955, the name and
-- block counts 1,609 and 826), nearly every leaf of each, whatever the day's size.
-- A day writes here instead (`paperdesk.store.authors`):
-- * `author_profiles_delta`, `author_members_delta`: a profile's whole current row; it
--   stands for the base row of the same id (a profile that loses its row loses both).
-- * `author_names_delta`, `author_blocks_delta`: signatures gained (n > 0) or lost (n < 0)
--   per (name, profile) and (block, profile) since the base was written; a count is the
--   sum of both tables, and a (name, profile) holds while that sum is above zero.
-- Readers combine the two; a full run writes the base tables and leaves these empty, and a
-- day folds them into the base once they hold more than a share of the profiles.
CREATE TABLE author_profiles_delta (
    author_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_folded TEXT,
    block TEXT NOT NULL,
    n_signatures INTEGER NOT NULL,
    n_records INTEGER NOT NULL,
    givens TEXT,
    reps TEXT,
    variants TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX author_profiles_delta_fit
    ON author_profiles_delta(block, givens, n_signatures, author_id);
CREATE TABLE author_members_delta (
    author_id TEXT PRIMARY KEY,
    ids BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE author_names_delta (
    name_folded TEXT NOT NULL,
    author_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (name_folded, author_id)
) WITHOUT ROWID;
CREATE TABLE author_blocks_delta (
    block TEXT NOT NULL,
    author_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (block, author_id)
) WITHOUT ROWID;
