-- The mark of a hand-over whose outcome is unknown (sms.Message.UnconfirmedSince):
-- set by the claim (SMSClaimDue), cleared when an outcome is recorded;
-- Unix nanoseconds, NULL when none.
ALTER TABLE sms_messages ADD COLUMN unconfirmed_since bigint;
