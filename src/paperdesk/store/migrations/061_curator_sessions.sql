-- Web sessions of signed-in curators, kept server-side so that signing out, a password
-- change or a reset ends them: the cookie holds a random token, this table its sha256.
CREATE TABLE curator_sessions (
    token_hash TEXT PRIMARY KEY,          -- sha256 hex of the cookie's token
    username TEXT NOT NULL REFERENCES curators (username) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL              -- ISO 8601 UTC; expired rows are ignored and pruned
);
CREATE INDEX curator_sessions_by_user ON curator_sessions (username);
