-- Payloads are found by their record instead of by a random 8-byte digest (migration 003):
-- "is this payload stored?" is asked as "does the record with this key hold a payload with
-- this sha256?" (`known_payloads`), through the `records` key index and `payloads_record`,
-- both written nearly in order by a bulk ingest. The digest index was written at a random
-- place for every payload: at a million records a bulk ingest rewrote most of its pages in
-- every transaction (the ingest writer's user CPU fell by ~10-15 µs a record without it).
-- The same payload stored for two records (which no parser makes: a payload's key comes
-- from its bytes) is kept for each. `sha256` stays; the column is rewritten without
-- `digest`, every other value unchanged.
DROP INDEX IF EXISTS payloads_digest;
ALTER TABLE payloads DROP COLUMN digest;
