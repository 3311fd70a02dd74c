-- A test event sent to an endpoint (POST /v1/webhooks/{id}/test) is kept
-- as a finished delivery of it, marked test = 1 (see
-- messaging.Store.WebhookRecordTest).
ALTER TABLE webhook_deliveries ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
