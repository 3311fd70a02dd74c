-- A dashboard session names the SMS accounts its subject may see besides
-- its workspaces (see messaging.Session.SMSAccounts); empty for the
-- sessions started before.
ALTER TABLE sessions ADD COLUMN sms_accounts text[] NOT NULL DEFAULT '{}';
