-- As SQLite's 100_fold_work_lsh_day.sql: the day's band keys join `work_lsh` in their
-- order (its identity numbers them after every row there), and the table goes.
INSERT INTO work_lsh (band_key, record_rowid, work_id)
    SELECT band_key, record_rowid, work_id FROM work_lsh_day ORDER BY rowid;
DROP TABLE work_lsh_day;
