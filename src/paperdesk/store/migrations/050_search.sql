-- Search bookkeeping (paperdesk.store.sqlite.search). The keyword and vector indexes live in files
-- next to the database (`<db>.index/`) and can always be rebuilt from these rows and the
-- records; the vectors are kept here because computing them is the expensive part.
CREATE TABLE search_docs (
    docno INTEGER PRIMARY KEY,          -- the number both indexes know a work by
    work_id TEXT NOT NULL UNIQUE,
    content_hash TEXT NOT NULL          -- of everything indexed: unchanged works are skipped
);
CREATE TABLE search_vectors (
    docno INTEGER PRIMARY KEY REFERENCES search_docs(docno) ON DELETE CASCADE,
    model TEXT NOT NULL,                -- embedder name, e.g. minilm-l6-static-full
    text_hash BLOB NOT NULL,            -- blake2b(model, embedded text): re-embed only on change
    vector BLOB NOT NULL                -- float16, little-endian, unit length
);
CREATE INDEX search_vectors_hash ON search_vectors(text_hash);
