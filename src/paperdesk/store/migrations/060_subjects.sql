-- Subjects per source record: canonical arXiv subjects the source gave (predicted = 0) or,
-- for records that came without any, the classifier's (predicted = 1, with probabilities).
-- A record has one kind or the other, never both. Work-level subjects are derived from
-- these at read time (store/subjects.py), so merging or splitting works needs no rewrite.
CREATE TABLE record_subjects (
    record_key TEXT NOT NULL,            -- SOURCE:ID
    rank INTEGER NOT NULL,               -- 0 = primary
    subject TEXT NOT NULL,               -- canonical arXiv code (cs.IT, never math.IT)
    predicted INTEGER NOT NULL,          -- 0 = given by the source, 1 = predicted
    probability REAL,                    -- predicted: P(subject is one of the paper's)
    primary_probability REAL,            -- predicted: P(subject is the primary)
    PRIMARY KEY (record_key, rank)
) WITHOUT ROWID;
CREATE INDEX record_subjects_subject ON record_subjects(subject, predicted);

-- ACM / MSC / unrecognised codes found in category lists: kept, never shown as subjects.
CREATE TABLE record_codes (
    record_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    scheme TEXT NOT NULL,                -- acm | msc | other
    code TEXT NOT NULL,
    PRIMARY KEY (record_key, position)
) WITHOUT ROWID;

-- Which model classified a record, so a new model can re-classify (`classify --all`).
CREATE TABLE record_subjects_state (
    record_key TEXT PRIMARY KEY,
    model TEXT,                          -- NULL when the source gave subjects
    classified_at TEXT NOT NULL
) WITHOUT ROWID;
