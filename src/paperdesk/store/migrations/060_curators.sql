-- Local curator accounts for the web site: who may apply corrections (merge/split).
-- Passwords are stored as scrypt hashes with a per-account salt, never in clear.
CREATE TABLE curators (
    username TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,          -- scrypt$n$r$p$salt_hex$hash_hex
    created_at TEXT NOT NULL
);
