-- Status reports of the channel provider about a provider message id that
-- no message carries yet (Meta can report delivered before the dispatcher
-- has recorded sent and the id), kept until the id is recorded or they
-- expire. See messaging.Store.PendingReportSave and PendingReportTake.
-- seq keeps the order of arrival; received_at is BIGINT nanoseconds like
-- every timestamp of the store.

CREATE TABLE pending_reports (
    seq                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    provider_message_id text COLLATE "C" NOT NULL,
    status              text NOT NULL,
    provider_code       text NOT NULL,
    provider_text       text NOT NULL,
    received_at         bigint NOT NULL
);
-- The reports of one id, for the per-id limit and the take.
CREATE INDEX pending_reports_provider_id ON pending_reports (provider_message_id, received_at);
-- The oldest reports, for the sweep of expired ones.
CREATE INDEX pending_reports_received ON pending_reports (received_at);
