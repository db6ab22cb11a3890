-- Source records: parsed + normalised fields as one JSON document (`data`), with the few
-- columns that are looked up or sorted on pulled out and indexed. Raw payloads live in
-- `payloads`, byte for byte as received, one row per distinct payload.
CREATE TABLE records (
    rowid INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,            -- SOURCE:ID
    source TEXT NOT NULL,
    source_id TEXT NOT NULL,
    data BLOB NOT NULL,                  -- orjson of SourceRecord (without raw)
    title TEXT,
    year INTEGER,
    doi TEXT,
    arxiv_id TEXT,
    feed_date TEXT,
    submitted TEXT,
    latest_version TEXT,
    created_at TEXT NOT NULL,
    modified_at TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0       -- bumped on every change: downstream stages resume by it
);
CREATE INDEX records_source ON records(source, rowid);
CREATE INDEX records_doi ON records(doi) WHERE doi IS NOT NULL;
CREATE INDEX records_arxiv ON records(arxiv_id) WHERE arxiv_id IS NOT NULL;
CREATE INDEX records_feed_date ON records(feed_date) WHERE feed_date IS NOT NULL;
CREATE INDEX records_seq ON records(seq);

CREATE TABLE payloads (
    id INTEGER PRIMARY KEY,
    record_rowid INTEGER NOT NULL REFERENCES records(rowid),
    sha256 TEXT NOT NULL UNIQUE,
    format TEXT NOT NULL,
    origin TEXT,
    received_at TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX payloads_record ON payloads(record_rowid);

CREATE TABLE rejects (
    id INTEGER PRIMARY KEY,
    origin TEXT,
    record_no INTEGER,
    error TEXT NOT NULL,
    snippet TEXT,
    created_at TEXT NOT NULL
);
-- A re-run after a crash meets the same bad records again: keep one row for each.
CREATE UNIQUE INDEX rejects_once ON rejects(origin, record_no, error);

CREATE TABLE checkpoints (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,                 -- JSON
    updated_at TEXT NOT NULL
);

-- Inputs ingested to the end: an unchanged file is recognised by its digest and skipped.
CREATE TABLE ingested_files (
    sha256 TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    records INTEGER NOT NULL,
    rejected INTEGER NOT NULL,
    finished_at TEXT NOT NULL
);
