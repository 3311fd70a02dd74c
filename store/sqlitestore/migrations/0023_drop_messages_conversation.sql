-- messages_conversation (workspace_id, conversation_id, created_at) is a
-- prefix of messages_conversation_created (the same columns and id), which
-- serves every query the narrower index served. Each insert of a message
-- wrote both, at random places (conversations are spread over the key
-- space); one is enough.
DROP INDEX messages_conversation;
