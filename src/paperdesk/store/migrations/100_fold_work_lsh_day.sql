-- The day's band key table of migration 042 goes: timed side by side on the 1M day it
-- bought under 10 % (10.3/10.4 s with it, 11.0/10.3 s without, 2026-12-03), short of the
-- 20 % a mechanism must buy (#16). Its rows go into `work_lsh` in their order, after every
-- row there: the rows and rowids a fold gave, so no later decision changes.
INSERT INTO work_lsh (band_key, record_rowid, work_id)
    SELECT band_key, record_rowid, work_id FROM work_lsh_day ORDER BY rowid;
DROP TABLE work_lsh_day;
