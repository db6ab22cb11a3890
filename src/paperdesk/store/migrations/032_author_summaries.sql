-- Profile summaries for incremental resolve: the distinct given names a profile was written
-- with (JSON list) and a bounded, deterministic sample of its signatures (JSON list of
-- signature ids, the K with the smallest hash), so a new signature is compared with a few
-- members of each compatible profile instead of re-reading every record of its block.
ALTER TABLE author_profiles ADD COLUMN givens TEXT;
ALTER TABLE author_profiles ADD COLUMN reps TEXT;
