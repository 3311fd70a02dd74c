-- An account's messages newest first (SMS.Messages, the dashboard's SMS
-- page) read through an index, so other accounts' traffic costs nothing.
CREATE INDEX sms_messages_account ON sms_messages (partner_id, number);
