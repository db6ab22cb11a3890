-- SQLite's 095_work_related.sql on PostgreSQL: errata, replies, comments and other parts
-- linked to the paper they refer to, by record key (derived; a full works run refills it).
CREATE TABLE work_related (
    from_key TEXT COLLATE "C" NOT NULL,
    to_key TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (from_key, to_key)
);
CREATE INDEX work_related_to ON work_related(to_key);
