-- The LSH band keys of the works founded since the last fold, kept apart from `work_lsh`.
-- Band keys are random, so each of a day's ~30k new keys landed on a random leaf of
-- `work_lsh_key`: a 1M store's day dirtied 3,681 of that index's 3,648+ pages (74 % of
-- the 4,970 pages the works stage wrote). Appended here, they fill a small index instead;
-- readers take both tables (this one's rows after `work_lsh`'s, in rowid order), and a
-- run folds this table into `work_lsh` past a bound, before a large or full run
-- (`paperdesk.resolve.works_run.fold_lsh`), giving the rows `work_lsh` would have held.
CREATE TABLE work_lsh_day (
    band_key INTEGER NOT NULL,
    record_rowid INTEGER NOT NULL,
    work_id INTEGER NOT NULL
);
CREATE INDEX work_lsh_day_key ON work_lsh_day(band_key);
CREATE INDEX work_lsh_day_work ON work_lsh_day(work_id);
