-- As on SQLite, 101_drop_author_deltas.sql: the deltas go into the base tables as the fold
-- did (here one MERGE a table, PostgreSQL 15), and are dropped.
MERGE INTO author_profiles b USING author_profiles_delta d ON b.author_id = d.author_id
    WHEN MATCHED THEN UPDATE SET name = d.name, name_folded = d.name_folded, block = d.block, n_signatures = d.n_signatures, n_records = d.n_records, givens = d.givens, reps = d.reps, variants = d.variants, created_at = d.created_at, updated_at = d.updated_at
    WHEN NOT MATCHED THEN INSERT (author_id, name, name_folded, block, n_signatures, n_records, givens, reps, variants, created_at, updated_at) VALUES (d.author_id, d.name, d.name_folded, d.block, d.n_signatures, d.n_records, d.givens, d.reps, d.variants, d.created_at, d.updated_at);
MERGE INTO author_members b USING author_members_delta d ON b.author_id = d.author_id
    WHEN MATCHED THEN UPDATE SET ids = d.ids
    WHEN NOT MATCHED THEN INSERT (author_id, ids) VALUES (d.author_id, d.ids);
MERGE INTO author_names b USING author_names_delta d ON b.name_folded = d.name_folded AND b.author_id = d.author_id
    WHEN MATCHED AND b.n + d.n <= 0 THEN DELETE
    WHEN MATCHED THEN UPDATE SET n = b.n + d.n
    WHEN NOT MATCHED AND d.n > 0 THEN INSERT (name_folded, author_id, n) VALUES (d.name_folded, d.author_id, d.n);
MERGE INTO author_blocks b USING author_blocks_delta d ON b.block = d.block AND b.author_id = d.author_id
    WHEN MATCHED AND b.n + d.n <= 0 THEN DELETE
    WHEN MATCHED THEN UPDATE SET n = b.n + d.n
    WHEN NOT MATCHED AND d.n > 0 THEN INSERT (block, author_id, n) VALUES (d.block, d.author_id, d.n);
DROP TABLE author_profiles_delta;
DROP TABLE author_members_delta;
DROP TABLE author_names_delta;
DROP TABLE author_blocks_delta;
