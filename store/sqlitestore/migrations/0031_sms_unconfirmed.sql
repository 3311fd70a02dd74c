-- The mark of a hand-over whose outcome is unknown (sms.Message.UnconfirmedSince):
-- set by the claim (SMSClaimDue), cleared when an outcome is recorded;
-- a time as the other columns store it, NULL when none.
ALTER TABLE sms_messages ADD COLUMN unconfirmed_since TEXT;
-- A message left sending by an earlier version may have been handed over:
-- its lease end stands for the mark.
UPDATE sms_messages SET unconfirmed_since = due_at WHERE status = 'sending';
