-- Message listing and status history: messages are listed newest first
-- through an index on (workspace_id, created_at, id), and each status
-- change is appended to history ("status unix-nanoseconds;" entries).
ALTER TABLE messages ADD COLUMN history text NOT NULL DEFAULT '';
CREATE INDEX messages_created ON messages (workspace_id, created_at, id);
