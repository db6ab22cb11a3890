-- The changed records are read in (seq, rowid) order by keyset pages
-- (`(seq, rowid) > (%s, %s) ORDER BY seq, rowid LIMIT n`). SQLite's index on seq holds the
-- rowid too, so its pages come straight from the index; here an index on seq alone made
-- every page an index scan of the whole seq group and a top-N sort of its rows, data
-- included (a 2,000-record day's first page: 0.3-1.3 s). The pair indexes both the
-- order and the row comparison.
CREATE INDEX records_seq_rowid ON records(seq, rowid);
DROP INDEX records_seq;
