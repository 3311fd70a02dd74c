-- Schema version 1 of the messaging SQLite store.
--
-- Timestamps are TEXT in the fixed-width UTC form
-- 2006-01-02T15:04:05.000000000Z, so they compare and sort like the times
-- they encode. JSON columns are NULL when the Go slice is nil.

CREATE TABLE workspaces (
    id         TEXT NOT NULL PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE workspace_channels (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel      TEXT NOT NULL,
    connected_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, channel)
) STRICT, WITHOUT ROWID;

CREATE TABLE api_keys (
    id           TEXT NOT NULL PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    prefix       TEXT NOT NULL,
    hash         BLOB UNIQUE,
    scopes       TEXT,  -- JSON array
    expires_at   TEXT,
    revoked_at   TEXT,
    created_at   TEXT NOT NULL
) STRICT;

CREATE INDEX api_keys_prefix ON api_keys (prefix);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at, id);

CREATE TABLE contacts (
    id           TEXT NOT NULL PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    first_name   TEXT NOT NULL,
    last_name    TEXT NOT NULL,
    full_name    TEXT NOT NULL,
    phone        TEXT NOT NULL,
    email        TEXT NOT NULL,
    email_key    TEXT NOT NULL,
    company      TEXT NOT NULL,
    job_title    TEXT NOT NULL,
    website      TEXT NOT NULL,
    notes        TEXT NOT NULL,
    source       TEXT NOT NULL,
    tags         TEXT NOT NULL,  -- JSON array
    lifecycle    TEXT NOT NULL,
    version      INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    -- Search columns, computed in Go with messaging.SearchFold and
    -- messaging.PhoneDigits. Searches are prefix range scans on them.
    first_fold   TEXT NOT NULL,
    last_fold    TEXT NOT NULL,
    full_fold    TEXT NOT NULL,
    phone_digits TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX contacts_phone ON contacts (workspace_id, phone) WHERE phone <> '';
CREATE UNIQUE INDEX contacts_email_key ON contacts (workspace_id, email_key) WHERE email_key <> '';
CREATE INDEX contacts_created ON contacts (workspace_id, created_at DESC, id DESC);
CREATE INDEX contacts_first_fold ON contacts (workspace_id, first_fold);
CREATE INDEX contacts_last_fold ON contacts (workspace_id, last_fold);
CREATE INDEX contacts_full_fold ON contacts (workspace_id, full_fold);
CREATE INDEX contacts_phone_digits ON contacts (workspace_id, phone_digits) WHERE phone_digits <> '';

CREATE TABLE templates (
    id            TEXT NOT NULL PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    category      TEXT NOT NULL,
    language      TEXT NOT NULL,
    status        TEXT NOT NULL,
    components    TEXT,  -- JSON array
    status_reason TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (workspace_id, name, language)
) STRICT;

CREATE TABLE messages (
    id                  TEXT NOT NULL PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    conversation_id     TEXT NOT NULL,
    channel             TEXT NOT NULL,
    recipient           TEXT NOT NULL,
    direction           TEXT NOT NULL,
    status              TEXT NOT NULL,
    failure_reason      TEXT NOT NULL,
    type                TEXT NOT NULL,
    text                TEXT NOT NULL,
    media_url           TEXT NOT NULL,
    caption             TEXT NOT NULL,
    filename            TEXT NOT NULL,
    template_name       TEXT NOT NULL,
    language            TEXT NOT NULL,
    components          TEXT,  -- JSON array
    idempotency_key     TEXT NOT NULL,
    request_hash        TEXT NOT NULL,
    provider_message_id TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX messages_idempotency ON messages (workspace_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX messages_conversation ON messages (workspace_id, conversation_id, created_at);
