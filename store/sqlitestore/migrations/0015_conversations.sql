-- Conversations: one row per conversation (workspace, conversation_id),
-- kept by a trigger in the statement that inserts a message, so that it is
-- always in step with the messages: the newest message (by created_at,
-- then id), and the created_at of the newest inbound one ('' when none).
-- Conversations are listed newest activity first through
-- conversations_activity.
CREATE TABLE conversations (
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    id              TEXT NOT NULL,
    channel         TEXT NOT NULL,
    recipient       TEXT NOT NULL,
    last_message_id TEXT NOT NULL,
    last_message_at TEXT NOT NULL,
    last_inbound_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX conversations_activity ON conversations (workspace_id, last_message_at, id);

INSERT INTO conversations (workspace_id, id, channel, recipient, last_message_id, last_message_at, last_inbound_at)
SELECT m.workspace_id, m.conversation_id, m.channel, m.recipient, m.id, m.created_at,
    COALESCE((SELECT max(i.created_at) FROM messages i
        WHERE i.workspace_id = m.workspace_id AND i.conversation_id = m.conversation_id AND i.direction = 'inbound'), '')
FROM messages m
WHERE m.id = (SELECT l.id FROM messages l WHERE l.workspace_id = m.workspace_id AND l.conversation_id = m.conversation_id
    ORDER BY l.created_at DESC, l.id DESC LIMIT 1);

CREATE TRIGGER messages_conversation AFTER INSERT ON messages
BEGIN
    INSERT INTO conversations (workspace_id, id, channel, recipient, last_message_id, last_message_at, last_inbound_at)
    VALUES (NEW.workspace_id, NEW.conversation_id, NEW.channel, NEW.recipient, NEW.id, NEW.created_at,
        CASE WHEN NEW.direction = 'inbound' THEN NEW.created_at ELSE '' END)
    ON CONFLICT (workspace_id, id) DO UPDATE SET
        last_message_id = CASE WHEN (excluded.last_message_at, excluded.last_message_id) > (last_message_at, last_message_id)
            THEN excluded.last_message_id ELSE last_message_id END,
        last_message_at = max(last_message_at, excluded.last_message_at),
        last_inbound_at = max(last_inbound_at, excluded.last_inbound_at);
END;

-- A conversation's messages are listed newest first through this index
-- (messages_conversation lacks the id that breaks ties), so that a page of
-- GET /v1/conversations/{id}/messages costs the same however many other
-- messages the workspace has.
CREATE INDEX messages_conversation_created ON messages (workspace_id, conversation_id, created_at, id);
