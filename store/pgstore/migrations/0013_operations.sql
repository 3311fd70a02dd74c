-- Operations: the trace context of the span that accepted a message, so the
-- dispatcher's span continues its trace; and an index for the dispatch
-- queue figures of one workspace (MessageQueueStats), holding only queued
-- messages like messages_due.
ALTER TABLE messages ADD COLUMN trace_parent text NOT NULL DEFAULT '';
CREATE INDEX messages_queue_workspace ON messages (workspace_id, due_at) WHERE status = 'queued';
