-- A message claimed for sending is marked possibly sent by the claim
-- (unconfirmed_since, the start of the hand-over whose outcome is not
-- recorded, in Unix nanoseconds), so that a later claim knows "never
-- tried" from "maybe sent". Messages leased when this migration runs were
-- claimed by an earlier version and may have been sent: their lease end
-- stands for the mark.
ALTER TABLE messages ADD COLUMN unconfirmed_since BIGINT;
UPDATE messages SET unconfirmed_since = due_at WHERE status = 'queued' AND lease_owner <> '';
