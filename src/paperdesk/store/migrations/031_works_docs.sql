-- Matcher features of the records in work_lsh, so an incremental resolve scores new
-- records against stored candidates without re-reading and re-normalising them.
CREATE TABLE work_docs (
    record_rowid INTEGER PRIMARY KEY,
    doc BLOB NOT NULL                      -- paperdesk.resolve.works_match.pack_doc
);
