-- The format version of each stage's derived tables (docs/architecture.md). Derived data
-- is rebuilt, not migrated: when a stage's code writes another format than the store
-- holds, its next run rebuilds its tables from the records (a works run is then a full
-- run, which keeps every work's id), and records the new version here. Every migration
-- before this one has run, so the tables a store holds now are in format 1.
CREATE TABLE derived_formats (
    name TEXT PRIMARY KEY,                -- the stage: works, authors, subjects, search
    version INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
INSERT INTO derived_formats (name, version, updated_at) VALUES
    ('works', 1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    ('authors', 1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    ('subjects', 1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    ('search', 1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
