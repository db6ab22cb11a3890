-- The given name as the record wrote it, so an incremental resolve can tell which stored
-- profiles a new "Y. Wang" could belong to without re-reading their records.
ALTER TABLE author_signatures ADD COLUMN given TEXT;
