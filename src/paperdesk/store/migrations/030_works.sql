-- Works: one paper = one work; every source record belongs to exactly one work.
-- Work ids are integers shown as `W<n>`; they never change meaning: a merged work leaves a
-- redirect, so an old link still finds its paper.
CREATE TABLE works (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    indexed_title INTEGER NOT NULL DEFAULT 0,     -- a title of this work is in work_lsh
    indexed_abstract INTEGER NOT NULL DEFAULT 0   -- an abstract of this work is in work_lsh
);

CREATE TABLE work_records (
    record_key TEXT PRIMARY KEY,           -- SOURCE:ID
    work_id INTEGER NOT NULL,
    how TEXT NOT NULL,                     -- new | id:<kind> | content | curation
    score REAL                             -- the match score for `content`
);
CREATE INDEX work_records_work ON work_records(work_id);

-- The identity registry: every stable identifier seen, and the work it names.
CREATE TABLE work_keys (
    kind TEXT NOT NULL,                    -- doi | arxiv | openreview | dblp | …
    value TEXT NOT NULL,
    work_id INTEGER NOT NULL,
    PRIMARY KEY (kind, value)
) WITHOUT ROWID;
CREATE INDEX work_keys_work ON work_keys(work_id);

CREATE TABLE work_redirects (
    old_id INTEGER PRIMARY KEY,
    new_id INTEGER NOT NULL,
    reason TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- LSH band keys of the records that founded a work (or first brought it a title or an
-- abstract): what new records are matched against without recomputing everything.
CREATE TABLE work_lsh (
    band_key INTEGER NOT NULL,
    record_rowid INTEGER NOT NULL,
    work_id INTEGER NOT NULL
);
CREATE INDEX work_lsh_key ON work_lsh(band_key);
CREATE INDEX work_lsh_work ON work_lsh(work_id);

-- Curations: a person's corrections, logged with who/when, replayed as constraints.
CREATE TABLE work_curations (
    id INTEGER PRIMARY KEY,
    action TEXT NOT NULL,                  -- merge | split
    work_a INTEGER NOT NULL,
    work_b INTEGER,
    records TEXT NOT NULL,                 -- JSON: the record keys involved
    who TEXT NOT NULL,
    note TEXT,
    created_at TEXT NOT NULL
);

-- Record-level constraints derived from curations: must (same work) / cannot (apart).
CREATE TABLE work_constraints (
    key_a TEXT NOT NULL,
    key_b TEXT NOT NULL,
    kind TEXT NOT NULL,                    -- must | cannot
    curation_id INTEGER NOT NULL,
    PRIMARY KEY (key_a, key_b, kind)
) WITHOUT ROWID;
CREATE INDEX work_constraints_b ON work_constraints(key_b);
