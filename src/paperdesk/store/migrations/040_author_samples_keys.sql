-- A sampled member's co-author keys apart from its JSON, as packed 64-bit codes
-- (`paperdesk.store.samples_codec`): an incremental day reads ~60k members back and only
-- matches their keys against the day's, and parsing ~24 key strings a member out of the
-- JSON, then hashing them again to match, was most of decoding it. `meta` keeps the other
-- fields (the JSON of migration 033 without the co-author list), `keys` the codes sorted.
-- WITHOUT ROWID: a member is read by its id, and the rows now live in the id's B-tree
-- instead of a rowid table beside an index of the ids (one page read a member, not two).
-- A store still in the older layout has its author tables emptied and rebuilt by its next
-- `resolve`, as in 039 (derived data is rebuilt, not migrated).
DELETE FROM author_profiles;
DELETE FROM author_signatures;
DELETE FROM author_members;
DELETE FROM author_samples;
DELETE FROM author_names;
DELETE FROM author_blocks;
DELETE FROM author_redirects;
DELETE FROM checkpoints WHERE name = 'authors';
CREATE TABLE author_samples_040 (
    sig_id TEXT PRIMARY KEY,
    meta BLOB NOT NULL,
    keys BLOB NOT NULL,
    vec BLOB NOT NULL
) WITHOUT ROWID;
DROP TABLE author_samples;
ALTER TABLE author_samples_040 RENAME TO author_samples;
