-- Channel connections: what the provider needs to send for a workspace on
-- a channel, one row per workspace and channel, kept (status
-- 'disconnected') when the channel is disconnected. See
-- messaging.Store.ConnectionPut. A connection that is not disconnected
-- owns its account: the partial unique index refuses a second one on the
-- same channel and account id (the primary key makes it another
-- workspace's). ConnectionPut checks the WABA id itself, under a
-- transaction-scoped advisory lock that serialises the puts, with the
-- index below to find it.
CREATE TABLE channel_connections (
    workspace_id         text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel              text COLLATE "C" NOT NULL,
    account_id           text COLLATE "C" NOT NULL,
    waba_id              text COLLATE "C" NOT NULL,
    display_phone_number text NOT NULL,
    token_sealed         bytea,
    token_hint           text NOT NULL,
    status               text COLLATE "C" NOT NULL,
    status_reason        text NOT NULL,
    generation           bigint NOT NULL,
    templates_synced_at  bigint,
    template_sync_error  text NOT NULL,
    created_at           bigint NOT NULL,
    updated_at           bigint NOT NULL,
    PRIMARY KEY (workspace_id, channel)
);
CREATE UNIQUE INDEX channel_connections_account ON channel_connections (channel, account_id)
    WHERE status <> 'disconnected';
CREATE INDEX channel_connections_waba ON channel_connections (waba_id) WHERE waba_id <> '';

-- The provider's id of a template and its quality rating.
ALTER TABLE templates ADD COLUMN provider_template_id text NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN quality text NOT NULL DEFAULT '';

-- Named leases (messaging.Store.LeaseAcquire).
CREATE TABLE leases (
    name  text COLLATE "C" PRIMARY KEY,
    owner text COLLATE "C" NOT NULL,
    until bigint NOT NULL
);
