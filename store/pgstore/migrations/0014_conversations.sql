-- Conversations: one row per conversation (workspace, conversation_id),
-- kept by a trigger in the statement that inserts a message, so that it is
-- always in step with the messages: the newest message (by created_at,
-- then id), and the created_at of the newest inbound one (NULL when none).
-- Conversations are listed newest activity first through
-- conversations_activity.
CREATE TABLE conversations (
    workspace_id    text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    id              text COLLATE "C" NOT NULL,
    last_message_id text COLLATE "C" NOT NULL,
    last_message_at bigint NOT NULL,
    last_inbound_at bigint,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX conversations_activity ON conversations (workspace_id, last_message_at, id);

INSERT INTO conversations (workspace_id, id, last_message_id, last_message_at, last_inbound_at)
SELECT DISTINCT ON (workspace_id, conversation_id) workspace_id, conversation_id, id, created_at,
    max(created_at) FILTER (WHERE direction = 'inbound') OVER (PARTITION BY workspace_id, conversation_id)
FROM messages
ORDER BY workspace_id, conversation_id, created_at DESC, id DESC;

CREATE FUNCTION messages_conversation() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO conversations (workspace_id, id, last_message_id, last_message_at, last_inbound_at)
    VALUES (NEW.workspace_id, NEW.conversation_id, NEW.id, NEW.created_at,
        CASE WHEN NEW.direction = 'inbound' THEN NEW.created_at END)
    ON CONFLICT (workspace_id, id) DO UPDATE SET
        last_message_id = CASE WHEN (excluded.last_message_at, excluded.last_message_id) > (conversations.last_message_at, conversations.last_message_id)
            THEN excluded.last_message_id ELSE conversations.last_message_id END,
        last_message_at = GREATEST(conversations.last_message_at, excluded.last_message_at),
        last_inbound_at = GREATEST(conversations.last_inbound_at, excluded.last_inbound_at);
    RETURN NULL;
END
$$;

CREATE TRIGGER messages_conversation AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION messages_conversation();

-- A conversation's messages are listed newest first through this index
-- (messages_conversation lacks the id that breaks ties), so that a page of
-- GET /v1/conversations/{id}/messages costs the same however many other
-- messages the workspace has.
CREATE INDEX messages_conversation_created ON messages (workspace_id, conversation_id, created_at, id);
