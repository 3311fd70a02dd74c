-- When a scheduled outbound message is to be handed over
-- (messaging.Message.SendAt, the send's send_at, in Unix nanoseconds);
-- NULL for a message sent as soon as possible. The accept also sets
-- due_at to it, so the claim, through messages_due, passes it over until
-- then: no new index is needed, and a canceled message ('canceled', a new
-- status) leaves that partial index as every message that leaves 'queued'
-- does.
ALTER TABLE messages ADD COLUMN send_at bigint;
