-- The recommender's per-record text features (desk/features.py, desk/cache.py): derived,
-- computed lazily the first time a record is ranked and again whenever the record changes
-- (`seq`) or the code's format does (`format`), so ranking a month reads stored counts
-- instead of tokenising every candidate on every call. Safe to empty at any time.
CREATE TABLE desk_features (
    record_key TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,                -- the record's seq the row was computed from
    format INTEGER NOT NULL,             -- desk/features.py FORMAT
    terms BLOB NOT NULL,                 -- hashed uni+bigram counts: uint32 columns, uint16 counts
    meta TEXT NOT NULL                   -- JSON [lead rank, [folded author names], [subject codes]]
);
