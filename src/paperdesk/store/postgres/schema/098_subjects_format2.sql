-- Subjects format 2 (`record_context`, migration 096): a store that has classified
-- anything keeps format 1 and is re-classified whole by its next run (filling the context
-- keys); a new store starts at 2.
UPDATE derived_formats SET version = 2
 WHERE name = 'subjects' AND version = 1 AND NOT EXISTS (SELECT 1 FROM record_subjects_state);
