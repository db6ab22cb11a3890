-- The day each record appeared, for the daily pages (issue #21): the source's feed day,
-- else its publication day, else its submission day (a whole YYYY-MM-DD only), else the
-- day the store first received it. Before, the daily pages knew only `feed_date`, so a
-- store of OpenReview, Crossref, BibTeX or plain-list records showed no day at all. The
-- writer fills it the same way (`sqlite.source_day`, else the insert's day); a stored
-- record keeps its received day until its source gives one.
ALTER TABLE records ADD COLUMN appeared TEXT;
UPDATE records SET appeared = COALESCE(
    (SELECT substr(d, 1, 10) FROM (
        SELECT feed_date AS d, 0 AS o
        UNION ALL SELECT json_extract(CAST(data AS TEXT), '$.published'), 1
        UNION ALL SELECT json_extract(CAST(data AS TEXT), '$.submitted'), 2
    ) WHERE d GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]*'
        AND substr(d, 6, 2) BETWEEN '01' AND '12' AND substr(d, 9, 2) BETWEEN '01' AND '31'
    ORDER BY o LIMIT 1),
    substr(created_at, 1, 10)
);
CREATE INDEX records_appeared ON records(appeared);
