-- Follows of authors name a profile (its id in `value`), not a string every namesake
-- shares; `label` keeps the name the user followed, for display, and for a follow made
-- before profiles existed (`value` is then that name, and matched as one).
ALTER TABLE follows ADD COLUMN label TEXT;
UPDATE follows SET label = value;
