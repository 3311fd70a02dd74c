-- Dashboard sessions (see messaging.Session), found by the hex SHA-256 of
-- their token (the token itself is never stored); expired ones are swept
-- in expires_at order.
CREATE TABLE sessions (
    hash       TEXT PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    subject    TEXT NOT NULL,
    operator   INTEGER NOT NULL,
    workspaces TEXT NOT NULL,  -- JSON array
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_expires ON sessions (expires_at);
