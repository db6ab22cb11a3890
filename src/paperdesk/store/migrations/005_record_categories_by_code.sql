-- Category codes in ONE B-tree, keyed the way its readers look them up: by code, then feed
-- day (subject pages take the newest records of a code; code counts group by code). It was
-- keyed by (record_rowid, position) with a second index on (code, feed_date), so each of a
-- record's ~1.7 codes (daily feed; ~2.5 in the bulk snapshot) was written into two B-trees by
-- the ingest writer, the pipeline's bottleneck. The record-to-codes direction that key
-- served (a day's codes for the daily page) is read from the day's records' own JSON
-- (`catalog.day_index`), and the writer deletes a changed record's rows by their full key.
-- `feed_date` is '' for a record without one: a WITHOUT ROWID key cannot hold NULL, and ''
-- sorts where NULL did (before every day), so "newest first" is unchanged.
CREATE TABLE record_categories_new (
    code TEXT NOT NULL,
    feed_date TEXT NOT NULL,
    record_rowid INTEGER NOT NULL REFERENCES records(rowid),
    position INTEGER NOT NULL,
    PRIMARY KEY (code, feed_date, record_rowid, position)
) WITHOUT ROWID;
INSERT INTO record_categories_new (code, feed_date, record_rowid, position)
SELECT code, COALESCE(feed_date, ''), record_rowid, position FROM record_categories
ORDER BY code, COALESCE(feed_date, ''), record_rowid, position;
DROP TABLE record_categories;
ALTER TABLE record_categories_new RENAME TO record_categories;
