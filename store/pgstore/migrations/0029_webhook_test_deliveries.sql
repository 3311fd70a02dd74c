-- A test event sent to an endpoint (POST /v1/webhooks/{id}/test) is kept
-- as a finished delivery of it, marked test (see
-- messaging.Store.WebhookRecordTest).
ALTER TABLE webhook_deliveries ADD COLUMN test boolean NOT NULL DEFAULT false;
