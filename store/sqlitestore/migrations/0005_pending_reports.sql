-- Status reports of the channel provider about a provider message id that
-- no message carries yet (Meta can report delivered before the dispatcher
-- has recorded sent and the id), kept until the id is recorded or they
-- expire. See messaging.Store.PendingReportSave and PendingReportTake.
-- seq keeps the order of arrival and is never reused.
CREATE TABLE pending_reports (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    provider_message_id TEXT NOT NULL,
    status              TEXT NOT NULL,
    provider_code       TEXT NOT NULL,
    provider_text       TEXT NOT NULL,
    received_at         TEXT NOT NULL
) STRICT;
-- The reports of one id, for the per-id limit and the take.
CREATE INDEX pending_reports_provider_id ON pending_reports (provider_message_id, received_at);
-- The oldest reports, for the sweep of expired ones.
CREATE INDEX pending_reports_received ON pending_reports (received_at);
