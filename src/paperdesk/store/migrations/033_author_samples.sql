-- What the pair features need of a profile's sampled members (`author_profiles.reps`), kept
-- when they are picked, so an incremental resolve compares new signatures with them without
-- reading and re-vectorising their records: `meta` is JSON of the signature's fields, `vec`
-- its L2-normalised text vector (int32 column indices, then float64 values).
CREATE TABLE author_samples (
    sig_id TEXT PRIMARY KEY,
    meta BLOB NOT NULL,
    vec BLOB NOT NULL
);
