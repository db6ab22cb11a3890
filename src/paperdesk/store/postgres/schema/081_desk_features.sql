-- SQLite's 071_desk_features.sql and 072_follow_labels.sql on PostgreSQL: the
-- recommender's per-record text features (derived, computed lazily) and the name kept
-- beside a followed author profile's id.
-- covers: 071_desk_features.sql 072_follow_labels.sql
CREATE TABLE desk_features (
    record_key TEXT COLLATE "C" PRIMARY KEY,
    seq BIGINT NOT NULL,
    format BIGINT NOT NULL,
    terms BYTEA NOT NULL,
    meta TEXT COLLATE "C" NOT NULL
);
ALTER TABLE follows ADD COLUMN label TEXT COLLATE "C";
UPDATE follows SET label = value;
