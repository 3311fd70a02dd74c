-- Webhook management (see messaging.Store.WebhookEndpointUpdate): an
-- endpoint's event types (space separated, sorted; '' for every type), its
-- description, why it is disabled ('gone' after a 410, 'operator'), and
-- the secret its last rotation replaced, which signs too until it expires.
ALTER TABLE webhook_endpoints ADD COLUMN events TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_sealed BLOB;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at TEXT;
UPDATE webhook_endpoints SET disabled_reason = 'gone' WHERE disabled_at IS NOT NULL;

-- Finished deliveries are kept (the newest of each endpoint, see
-- messaging.WebhookRecordParams.Keep) to be listed and redelivered.
ALTER TABLE webhook_deliveries ADD COLUMN event_type TEXT NOT NULL DEFAULT 'message.status_updated';
ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_at TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN delivered_at TEXT;
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (endpoint_id, seq) WHERE state <> 'pending';
