-- Payloads are looked up by an 8-byte integer, the first 8 bytes of their sha256 read as a
-- signed big-endian int64 (`digest`), instead of by the 64-character hex text under a
-- UNIQUE index. Digests are random, so every insert lands at a random place of that index:
-- the text index is ~5x larger (a 16 KiB page holds ~200 entries instead of ~1,000), and a
-- bulk ingest dirtied about one of its pages per record. The full hex `sha256` is kept and
-- compared on look-up (`known_payloads`), so a prefix shared by two payloads is harmless;
-- the writer checks it inside its write transaction, which is what keeps payloads unique.
-- The table is rebuilt (SQLite cannot drop a UNIQUE constraint): ids, rows and bodies are
-- copied unchanged. (006 drops the digest again and nothing reads it in between, so an old
-- store on its way there fills it with 0: no Python function in SQL for it any more.)
CREATE TABLE payloads_new (
    id INTEGER PRIMARY KEY,
    record_rowid INTEGER NOT NULL REFERENCES records(rowid),
    digest INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    format TEXT NOT NULL,
    origin TEXT,
    received_at TEXT NOT NULL,
    body BLOB NOT NULL
);
INSERT INTO payloads_new (id, record_rowid, digest, sha256, format, origin, received_at, body)
SELECT id, record_rowid, 0, sha256, format, origin, received_at, body
FROM payloads ORDER BY id;
DROP TABLE payloads;
ALTER TABLE payloads_new RENAME TO payloads;
CREATE INDEX payloads_record ON payloads(record_rowid);
CREATE INDEX payloads_digest ON payloads(digest);
