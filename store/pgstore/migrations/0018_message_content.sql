-- The rich content of inbound messages (media, location, contacts, reply,
-- reaction, context), as JSON; NULL for outbound messages and plain texts.
ALTER TABLE messages ADD COLUMN content jsonb;
