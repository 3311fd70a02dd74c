-- Dashboard sessions (see messaging.Session), found by the hex SHA-256 of
-- their token (the token itself is never stored); expired ones are swept
-- in expires_at order.
CREATE TABLE sessions (
    hash       text COLLATE "C" PRIMARY KEY,
    id         text COLLATE "C" NOT NULL UNIQUE,
    subject    text NOT NULL,
    operator   boolean NOT NULL,
    workspaces text[] NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);
