-- Smaller profile rows, kept by their id alone. A 1M store's day rewrites the rows of
-- ~10k grown profiles spread over all 460k: it dirtied 4,963 of the table's 7,124 pages
-- of 16 KiB, 1,416 of `author_profiles_fit` and 632 of the id index (7,011 of the day's
-- 12,076). WITHOUT ROWID drops the id index (the rows live in the id's B-tree), and the
-- rows keep what they held in about half the bytes (`paperdesk.store.profiles_codec`):
-- variants without the fields their name predicts, the folded name NULL where the
-- display name predicts it, times as Unix seconds. `paperdesk.store.authors` decodes them.
-- Derived data is rebuilt, not migrated (docs/architecture.md): a store still in the older
-- layout has its author tables emptied here, and its next `resolve` rebuilds them from the
-- records (the author stage's checkpoint is reset, so that run clusters every block; the
-- curations are kept and applied again). No Python function in SQL is needed for it.
DELETE FROM author_profiles;
DELETE FROM author_signatures;
DELETE FROM author_members;
DELETE FROM author_samples;
DELETE FROM author_names;
DELETE FROM author_blocks;
DELETE FROM author_redirects;
DELETE FROM checkpoints WHERE name = 'authors';
CREATE TABLE author_profiles_039 (
    author_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,                  -- canonical display name
    name_folded TEXT,                    -- NULL: profiles_codec.fold_guess(name)
    block TEXT NOT NULL,                 -- blocking key, e.g. `bengio y`
    n_signatures INTEGER NOT NULL,
    n_records INTEGER NOT NULL,
    givens TEXT,                         -- JSON list of the given names written
    reps TEXT,                           -- JSON list of sampled signature ids
    variants TEXT,                       -- profiles_codec.pack_variants (NULL: recount)
    created_at INTEGER NOT NULL,         -- Unix seconds
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
DROP TABLE author_profiles;
ALTER TABLE author_profiles_039 RENAME TO author_profiles;
CREATE INDEX author_profiles_fit ON author_profiles(block, givens, n_signatures, author_id);
