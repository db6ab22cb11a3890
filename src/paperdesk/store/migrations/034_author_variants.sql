-- A profile's name variants with their counts (JSON list of [name, folded, given, block,
-- count]), so an incremental resolve updates the row of a profile that gained signatures
-- from the stored counts plus the new ones, instead of re-reading all its signatures.
-- Existing profiles get theirs from their signatures here, once (a row left NULL is
-- recounted from its signatures when next touched).
ALTER TABLE author_profiles ADD COLUMN variants TEXT;
UPDATE author_profiles SET variants = (
    SELECT json_group_array(json_array(name, name_folded, given, block, n))
    FROM (
        SELECT name, name_folded, given, block, COUNT(*) AS n FROM author_signatures s
        WHERE s.author_id = author_profiles.author_id
        GROUP BY name, name_folded, given, block
    )
);
