-- Schema version 1 of the messaging PostgreSQL store: workspaces, API keys,
-- contacts, templates, messages (with their dispatch queue) and the webhook
-- outbox.
--
-- Timestamps are BIGINT nanoseconds since the Unix epoch: the store keeps
-- Go times exactly (timestamptz keeps microseconds only). The zero time is
-- stored as the smallest BIGINT. To read one in psql:
--   to_timestamp(created_at / 1e9)
--
-- Text that is ordered or searched by range is COLLATE "C" (byte order, the
-- order of code points in UTF-8), so ordering does not depend on the
-- database's locale and prefix searches are plain btree range scans.

CREATE TABLE workspaces (
    id         text COLLATE "C" PRIMARY KEY,
    name       text NOT NULL,
    created_at bigint NOT NULL
);

CREATE TABLE workspace_channels (
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel      text COLLATE "C" NOT NULL,
    connected_at bigint NOT NULL,
    PRIMARY KEY (workspace_id, channel)
);

CREATE TABLE api_keys (
    id           text COLLATE "C" PRIMARY KEY,
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    prefix       text COLLATE "C" NOT NULL,
    hash         bytea UNIQUE,
    scopes       text[],
    expires_at   bigint,
    revoked_at   bigint,
    created_at   bigint NOT NULL
);
CREATE INDEX api_keys_prefix ON api_keys (prefix);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at, id);

CREATE TABLE contacts (
    id           text COLLATE "C" PRIMARY KEY,
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    first_name   text NOT NULL,
    last_name    text NOT NULL,
    full_name    text NOT NULL,
    phone        text COLLATE "C" NOT NULL,
    email        text NOT NULL,
    email_key    text COLLATE "C" NOT NULL,
    company      text NOT NULL,
    job_title    text NOT NULL,
    website      text NOT NULL,
    notes        text NOT NULL,
    source       text NOT NULL,
    tags         text[] NOT NULL,
    lifecycle    text NOT NULL,
    version      bigint NOT NULL,
    created_at   bigint NOT NULL,
    updated_at   bigint NOT NULL,
    -- Search columns, computed in Go with messaging.SearchFold and
    -- messaging.PhoneDigits. A search is a union of prefix range scans on
    -- their indexes (col >= prefix AND col < successor(prefix)).
    first_fold   text COLLATE "C" NOT NULL,
    last_fold    text COLLATE "C" NOT NULL,
    full_fold    text COLLATE "C" NOT NULL,
    phone_digits text COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX contacts_phone ON contacts (workspace_id, phone) WHERE phone <> '';
-- contacts_email_key also serves the email prefix search.
CREATE UNIQUE INDEX contacts_email_key ON contacts (workspace_id, email_key) WHERE email_key <> '';
CREATE INDEX contacts_created ON contacts (workspace_id, created_at DESC, id DESC);
CREATE INDEX contacts_first_fold ON contacts (workspace_id, first_fold);
CREATE INDEX contacts_last_fold ON contacts (workspace_id, last_fold);
CREATE INDEX contacts_full_fold ON contacts (workspace_id, full_fold);
CREATE INDEX contacts_phone_digits ON contacts (workspace_id, phone_digits) WHERE phone_digits <> '';

CREATE TABLE templates (
    id            text COLLATE "C" PRIMARY KEY,
    workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name          text COLLATE "C" NOT NULL,
    category      text COLLATE "C" NOT NULL,
    language      text COLLATE "C" NOT NULL,
    status        text COLLATE "C" NOT NULL,
    components    jsonb,
    status_reason text NOT NULL,
    created_at    bigint NOT NULL,
    updated_at    bigint NOT NULL,
    UNIQUE (workspace_id, name, language)
);

CREATE TABLE messages (
    id                  text COLLATE "C" PRIMARY KEY,
    workspace_id        text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    conversation_id     text COLLATE "C" NOT NULL,
    channel             text NOT NULL,
    recipient           text NOT NULL,
    direction           text NOT NULL,
    status              text NOT NULL,
    failure_reason      text NOT NULL,
    type                text NOT NULL,
    text                text NOT NULL,
    media_url           text NOT NULL,
    caption             text NOT NULL,
    filename            text NOT NULL,
    template_name       text NOT NULL,
    language            text NOT NULL,
    components          jsonb,
    idempotency_key     text COLLATE "C" NOT NULL,
    request_hash        text NOT NULL,
    provider_message_id text COLLATE "C" NOT NULL,
    created_at          bigint NOT NULL,
    updated_at          bigint NOT NULL,
    -- Dispatch: a queued message is due at due_at; while a dispatcher
    -- holds it, due_at is the end of its lease.
    due_at              bigint NOT NULL,
    lease_owner         text NOT NULL,
    attempts            integer NOT NULL,
    last_error          text NOT NULL
);
CREATE UNIQUE INDEX messages_idempotency ON messages (workspace_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX messages_conversation ON messages (workspace_id, conversation_id, created_at);
-- The dispatch queue: only queued messages are in it, so a claim never
-- walks sent ones.
CREATE INDEX messages_due ON messages (due_at, id) WHERE status = 'queued';
CREATE INDEX messages_provider_id ON messages (provider_message_id) WHERE provider_message_id <> '';

-- Webhook endpoints and the outbox of their deliveries. A delivery row is
-- written in the same transaction as the status change it announces;
-- finished deliveries are deleted, so the outbox holds only pending work.
CREATE TABLE webhook_endpoints (
    id            text COLLATE "C" PRIMARY KEY,
    workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    url           text NOT NULL,
    secret_sealed bytea NOT NULL,
    disabled_at   bigint,
    created_at    bigint NOT NULL
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, created_at, id);

CREATE TABLE webhook_deliveries (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id  text COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    workspace_id text COLLATE "C" NOT NULL,
    message_id   text COLLATE "C" NOT NULL,
    event_id     text NOT NULL,
    payload      bytea NOT NULL,
    state        text NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    due_at       bigint NOT NULL,
    lease_owner  text NOT NULL DEFAULT '',
    last_status  integer NOT NULL DEFAULT 0,
    last_error   text NOT NULL DEFAULT '',
    created_at   bigint NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at, seq) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, message_id, seq) WHERE state = 'pending';
