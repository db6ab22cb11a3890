-- SQLite's 096_record_context.sql on PostgreSQL: the context keys (authors' folded names,
-- venues) of the records that came with arXiv subjects (derived by the subjects stage).
CREATE TABLE record_context (
    key TEXT COLLATE "C" NOT NULL,
    record_key TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (key, record_key)
);
CREATE INDEX record_context_record ON record_context(record_key);
