-- The webhook endpoint (of the SMS callbacks' workspace) that receives the
-- account's sms.delivery_report events; '' when none is registered.
ALTER TABLE sms_accounts ADD COLUMN callback_endpoint_id text NOT NULL DEFAULT '';
