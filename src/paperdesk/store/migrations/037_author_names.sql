-- Per profile, its signatures by folded name and by block, instead of two secondary
-- indexes over every signature. A 1M store's day inserted 10,650 signatures at random
-- places of `author_signatures_name` and `author_signatures_block` (5.1M entries each):
-- nearly every leaf of both was rewritten, 12,501 of the 27,535 16 KiB pages the day's
-- author transaction wrote. These tables have ~853k and ~460k short rows for those 5.1M
-- signatures, so a day rewrites far fewer pages. Name and block frequencies, profiles by
-- name, the profile search and the signatures of a block are answered from them
-- (`paperdesk.store.authors` keeps them equal to the signatures under every write).
CREATE TABLE author_names (
    name_folded TEXT NOT NULL,
    author_id TEXT NOT NULL,
    n INTEGER NOT NULL,                  -- signatures of the profile written so
    PRIMARY KEY (name_folded, author_id)
) WITHOUT ROWID;
CREATE TABLE author_blocks (
    block TEXT NOT NULL,
    author_id TEXT NOT NULL,
    n INTEGER NOT NULL,                  -- signatures of the profile in the block
    PRIMARY KEY (block, author_id)
) WITHOUT ROWID;
INSERT INTO author_names (name_folded, author_id, n)
    SELECT name_folded, author_id, COUNT(*) FROM author_signatures
    GROUP BY name_folded, author_id ORDER BY name_folded, author_id;
INSERT INTO author_blocks (block, author_id, n)
    SELECT block, author_id, COUNT(*) FROM author_signatures
    GROUP BY block, author_id ORDER BY block, author_id;
DROP INDEX IF EXISTS author_signatures_name;
DROP INDEX IF EXISTS author_signatures_block;
