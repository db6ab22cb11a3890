-- The context keys of each record that came with arXiv subjects: its authors' folded names
-- (`a:…`) and its venue (`v:…`), see paperdesk/subjects/context.py. The classifier reads
-- the given subjects of the records sharing a key with a paper it predicts (the authors'
-- earlier subjects). Derived by the subjects stage; replaced with the record's subjects.
CREATE TABLE record_context (
    key TEXT NOT NULL,
    record_key TEXT NOT NULL,
    PRIMARY KEY (key, record_key)
) WITHOUT ROWID;
CREATE INDEX record_context_record ON record_context(record_key);
