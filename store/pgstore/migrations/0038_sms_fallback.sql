-- The SMS fallbacks of WhatsApp template sends (record.SMSFallback): the
-- SMS to send when the message fails as undeliverable or is not
-- delivered by due_at, then what became of it. Written with the message,
-- in its transaction. Times in Unix nanoseconds.
CREATE TABLE message_fallbacks (
    message_id              text COLLATE "C" PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    workspace_id            text COLLATE "C" NOT NULL,
    text                    text NOT NULL,
    partner_id              text COLLATE "C" NOT NULL,
    shortcode               text NOT NULL,
    after_ns                bigint NOT NULL,
    status                  text NOT NULL,
    reason                  text NOT NULL,
    sms_message_id          text NOT NULL,
    sms_provider_message_id text NOT NULL,
    due_at                  bigint,  -- NULL once settled
    lease_owner             text NOT NULL,
    updated_at              bigint NOT NULL
);
-- The pending fallbacks by due time, for the sweeper's claims.
CREATE INDEX message_fallbacks_due ON message_fallbacks (due_at) WHERE status = 'pending';

-- The SMS accounts (by partner id) a workspace may send fallbacks
-- through, linked by the operator.
CREATE TABLE workspace_sms_accounts (
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    partner_id   text COLLATE "C" NOT NULL,
    created_at   bigint NOT NULL,
    PRIMARY KEY (workspace_id, partner_id)
);
