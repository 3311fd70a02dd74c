-- Dispatch: queued messages carry a due time and a lease; the partial index
-- holds only queued messages, so a claim never walks sent ones.
ALTER TABLE messages ADD COLUMN due_at TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
CREATE INDEX messages_due ON messages (due_at, id) WHERE status = 'queued';
CREATE INDEX messages_provider_id ON messages (provider_message_id) WHERE provider_message_id <> '';

-- Webhook endpoints and the outbox of their deliveries. A delivery row is
-- written in the same transaction as the status change it announces.
CREATE TABLE webhook_endpoints (
    id            TEXT NOT NULL PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    url           TEXT NOT NULL,
    secret_sealed BLOB NOT NULL,
    disabled_at   TEXT,
    created_at    TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, created_at);

CREATE TABLE webhook_deliveries (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint_id  TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    payload      BLOB NOT NULL,
    state        TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    due_at       TEXT NOT NULL,
    lease_owner  TEXT NOT NULL DEFAULT '',
    last_status  INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, message_id, seq) WHERE state = 'pending';
