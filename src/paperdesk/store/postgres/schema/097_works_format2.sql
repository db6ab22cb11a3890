-- Works format 2 (generic titles, title kinds and related links, opening-sentence keys:
-- `work_docs` and the band keys changed). A store that has resolved anything keeps format
-- 1 and is rebuilt by its next run; one that has not (a new store) holds nothing of format
-- 1 and starts at 2, so that its first run is an ordinary incremental one.
UPDATE derived_formats SET version = 2
 WHERE name = 'works' AND version = 1 AND NOT EXISTS (SELECT 1 FROM work_records);
