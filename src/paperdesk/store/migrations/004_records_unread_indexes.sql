-- Drop the two `records` indexes that no query reads: `arxiv_id` and `doi` look-ups go
-- through the works identity registry (`work_keys`), never through `records`. Every arXiv
-- record paid an insert into `records_arxiv` in the ingest writer, the pipeline's
-- bottleneck. A future query that needs them recreates them in its own migration.
DROP INDEX IF EXISTS records_arxiv;
DROP INDEX IF EXISTS records_doi;
