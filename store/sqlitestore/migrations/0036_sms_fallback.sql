-- The SMS fallbacks of WhatsApp template sends (record.SMSFallback): the
-- SMS to send when the message fails as undeliverable or is not
-- delivered by due_at, then what became of it. Written with the message,
-- in its transaction.
CREATE TABLE message_fallbacks (
    message_id              TEXT NOT NULL PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    workspace_id            TEXT NOT NULL,
    text                    TEXT NOT NULL,
    partner_id              TEXT NOT NULL,
    shortcode               TEXT NOT NULL,
    after_ns                INTEGER NOT NULL,
    status                  TEXT NOT NULL,
    reason                  TEXT NOT NULL,
    sms_message_id          TEXT NOT NULL,
    sms_provider_message_id TEXT NOT NULL,
    due_at                  TEXT,  -- NULL once settled
    lease_owner             TEXT NOT NULL,
    updated_at              TEXT NOT NULL
) STRICT;
-- The pending fallbacks by due time, for the sweeper's claims.
CREATE INDEX message_fallbacks_due ON message_fallbacks (due_at) WHERE status = 'pending';

-- The SMS accounts (by partner id) a workspace may send fallbacks
-- through, linked by the operator.
CREATE TABLE workspace_sms_accounts (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    partner_id   TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, partner_id)
) STRICT;
