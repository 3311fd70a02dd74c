-- Channel connections: what the provider needs to send for a workspace on
-- a channel, one row per workspace and channel, kept (status
-- 'disconnected') when the channel is disconnected. See
-- messaging.Store.ConnectionPut. A connection that is not disconnected
-- owns its account: the partial unique index refuses a second one on the
-- same channel and account id (the primary key makes it another
-- workspace's). The WABA id is checked by ConnectionPut itself (writes are
-- serialized), with the index below to find it.
CREATE TABLE channel_connections (
    workspace_id         TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel              TEXT NOT NULL,
    account_id           TEXT NOT NULL,
    waba_id              TEXT NOT NULL,
    display_phone_number TEXT NOT NULL,
    token_sealed         BLOB,
    token_hint           TEXT NOT NULL,
    status               TEXT NOT NULL,
    status_reason        TEXT NOT NULL,
    generation           INTEGER NOT NULL,
    templates_synced_at  TEXT,
    template_sync_error  TEXT NOT NULL,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    PRIMARY KEY (workspace_id, channel)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX channel_connections_account ON channel_connections (channel, account_id)
    WHERE status <> 'disconnected';
CREATE INDEX channel_connections_waba ON channel_connections (waba_id) WHERE waba_id <> '';

-- The provider's id of a template and its quality rating.
ALTER TABLE templates ADD COLUMN provider_template_id TEXT NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN quality TEXT NOT NULL DEFAULT '';

-- Named leases (messaging.Store.LeaseAcquire).
CREATE TABLE leases (
    name  TEXT NOT NULL PRIMARY KEY,
    owner TEXT NOT NULL,
    until TEXT NOT NULL
) STRICT, WITHOUT ROWID;
