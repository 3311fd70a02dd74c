-- When the business marked an inbound message read at the provider
-- (messaging.Message.ReadAt, in Unix nanoseconds); NULL until then. The
-- first mark is kept.
ALTER TABLE messages ADD COLUMN read_at bigint;

-- The files uploaded to a provider through a workspace's connection
-- (record.UploadedMedia): what each is and the provider's id (or a
-- template sample's upload handle) to send it by. Kept after the provider
-- forgets them (expires_at), so that an id still reads back.
CREATE TABLE media (
    id                text COLLATE "C" PRIMARY KEY,
    workspace_id      text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel           text NOT NULL,
    purpose           text NOT NULL,
    kind              text NOT NULL,
    mime_type         text NOT NULL,
    size              bigint NOT NULL,
    filename          text NOT NULL,
    sha256            text NOT NULL,
    provider_media_id text NOT NULL,
    animated          boolean NOT NULL,
    created_at        bigint NOT NULL,
    expires_at        bigint NOT NULL
);
-- A workspace's media, for its deletion's cascade and scoped lookups.
CREATE INDEX media_workspace ON media (workspace_id, id);
