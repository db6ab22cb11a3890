-- Works format 3: a record whose title ends in a generic front-matter phrase ("… : guest
-- editor's introduction") also goes by that phrase as its short title (ebe85f3), which
-- changes its stored keys. A store that has resolved anything keeps format 2 and is
-- rebuilt by its next run; a new store starts at 3.
UPDATE derived_formats SET version = 3
 WHERE name = 'works' AND version = 2 AND NOT EXISTS (SELECT 1 FROM work_records);
