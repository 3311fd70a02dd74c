-- The trace context of the message a status event is about
-- (messaging.EventRecord.TraceParent), kept on each of its deliveries so
-- that the webhook sender continues the message's trace without reading
-- the message; '' when none.
ALTER TABLE webhook_deliveries ADD COLUMN trace_parent text NOT NULL DEFAULT '';
-- The deliveries queued by an earlier version take it from their message,
-- as that version's sender read it.
UPDATE webhook_deliveries d SET trace_parent = m.trace_parent
FROM messages m
WHERE m.id = d.message_id AND m.workspace_id = d.workspace_id
    AND d.event_type = 'message.status_updated' AND m.trace_parent <> '';
