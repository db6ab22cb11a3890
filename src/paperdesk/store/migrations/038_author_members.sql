-- A profile's signatures as one packed row per profile instead of an index entry per
-- signature. After migration 037, `author_signatures_author` (5.1M entries of author id and
-- rowid at 1M records) was the largest B-tree a day wrote at random: 7,349 of its 17,470
-- pages. `author_members` holds each profile's signature ids sorted and packed, 4 bytes
-- each (`paperdesk.store.sqlite.pack_ids`): a day rewrites the rows of the profiles it
-- grows, in a table a quarter of the index's size.
-- Its ids must never change, so the signatures get an explicit INTEGER PRIMARY KEY (VACUUM
-- may renumber an implicit rowid): the table is rebuilt with every row keeping its rowid.
CREATE TABLE author_signatures_038 (
    id INTEGER PRIMARY KEY,
    sig_id TEXT NOT NULL UNIQUE,         -- RECORD_KEY#POSITION
    record_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,                  -- display name on this record
    name_folded TEXT NOT NULL,           -- folded `given family`, for look-ups and frequencies
    block TEXT NOT NULL,
    author_id TEXT NOT NULL,
    given TEXT,                          -- the given name as the record wrote it
    UNIQUE (record_key, position)
);
INSERT INTO author_signatures_038
    (id, sig_id, record_key, position, name, name_folded, block, author_id, given)
    SELECT rowid, sig_id, record_key, position, name, name_folded, block, author_id, given
    FROM author_signatures ORDER BY rowid;
DROP TABLE author_signatures;
ALTER TABLE author_signatures_038 RENAME TO author_signatures;
CREATE TABLE author_members (
    author_id TEXT PRIMARY KEY,
    ids BLOB NOT NULL                    -- its signatures' ids, sorted, packed
) WITHOUT ROWID;
INSERT INTO author_members (author_id, ids)
    SELECT author_id, paperdesk_pack_ids(id) FROM author_signatures
    GROUP BY author_id ORDER BY author_id;
