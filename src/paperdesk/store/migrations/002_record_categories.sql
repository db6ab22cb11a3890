-- Category codes of each record, as the source lists them (position 0 = primary), so that
-- subject pages and counts are index look-ups instead of scans of every record's JSON.
-- Canonicalisation (aliases, legacy archives) happens when reading, with the taxonomy.
CREATE TABLE record_categories (
    record_rowid INTEGER NOT NULL REFERENCES records(rowid),
    position INTEGER NOT NULL,
    code TEXT NOT NULL,
    feed_date TEXT,
    PRIMARY KEY (record_rowid, position)
) WITHOUT ROWID;
CREATE INDEX record_categories_code ON record_categories(code, feed_date);

INSERT INTO record_categories (record_rowid, position, code, feed_date)
SELECT r.rowid, CAST(j.key AS INTEGER), j.value, r.feed_date
FROM records r, json_each(CAST(r.data AS TEXT), '$.categories') j
WHERE j.type = 'text';
