-- Operations: the trace context of the span that accepted a message, so the
-- dispatcher's span continues its trace; and an index for the dispatch
-- queue figures of one workspace (MessageQueueStats), covering what they
-- read, holding only queued messages like messages_due.
ALTER TABLE messages ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
CREATE INDEX messages_queue_workspace ON messages (workspace_id, due_at) WHERE status = 'queued';
