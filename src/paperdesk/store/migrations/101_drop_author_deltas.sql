-- The author stage day deltas of migration 041 go. A day wrote the rows of the profiles
-- it touched to small *_delta tables, folded into the base ones once they held an eighth as
-- many profiles. Folding a 1M store's day of deltas took 0.58-1.24 s (2026-12-03), so they
-- bought at most about a tenth of the 10 s day, short of the 20 % a mechanism must buy
-- (#16). What they hold goes into the base tables as the fold did, and they are dropped.
INSERT OR REPLACE INTO author_profiles (author_id, name, name_folded, block, n_signatures, n_records, givens, reps, variants, created_at, updated_at)
    SELECT author_id, name, name_folded, block, n_signatures, n_records, givens, reps, variants, created_at, updated_at FROM author_profiles_delta ORDER BY author_id;
INSERT OR REPLACE INTO author_members (author_id, ids)
    SELECT author_id, ids FROM author_members_delta ORDER BY author_id;
INSERT INTO author_names (name_folded, author_id, n)
    SELECT name_folded, author_id, n FROM author_names_delta WHERE n <> 0 ORDER BY name_folded, author_id
    ON CONFLICT (name_folded, author_id) DO UPDATE SET n = author_names.n + excluded.n;
DELETE FROM author_names WHERE n <= 0 AND (name_folded, author_id) IN
    (SELECT name_folded, author_id FROM author_names_delta WHERE n < 0);
INSERT INTO author_blocks (block, author_id, n)
    SELECT block, author_id, n FROM author_blocks_delta WHERE n <> 0 ORDER BY block, author_id
    ON CONFLICT (block, author_id) DO UPDATE SET n = author_blocks.n + excluded.n;
DELETE FROM author_blocks WHERE n <= 0 AND (block, author_id) IN
    (SELECT block, author_id FROM author_blocks_delta WHERE n < 0);
DROP TABLE author_profiles_delta;
DROP TABLE author_members_delta;
DROP TABLE author_names_delta;
DROP TABLE author_blocks_delta;
