-- When the business marked an inbound message read at the provider
-- (messaging.Message.ReadAt); NULL until then. The first mark is kept.
ALTER TABLE messages ADD COLUMN read_at TEXT;

-- The files uploaded to a provider through a workspace's connection
-- (record.UploadedMedia): what each is and the provider's id (or a
-- template sample's upload handle) to send it by. Kept after the provider
-- forgets them (expires_at), so that an id still reads back.
CREATE TABLE media (
    id                TEXT NOT NULL PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel           TEXT NOT NULL,
    purpose           TEXT NOT NULL,
    kind              TEXT NOT NULL,
    mime_type         TEXT NOT NULL,
    size              INTEGER NOT NULL,
    filename          TEXT NOT NULL,
    sha256            TEXT NOT NULL,
    provider_media_id TEXT NOT NULL,
    animated          INTEGER NOT NULL,
    created_at        TEXT NOT NULL,
    expires_at        TEXT NOT NULL
) STRICT;
-- A workspace's media, for its deletion's cascade and scoped lookups.
CREATE INDEX media_workspace ON media (workspace_id, id);
