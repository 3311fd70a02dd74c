-- SMS API: accounts, their approved sender ids, and messages.
--
-- Credit and costs are INTEGER hundredths of a credit. A message's number
-- is the provider message id the API gives out; pending messages (scheduled,
-- queued, sending) are claimed through the partial index on due_at.

CREATE TABLE sms_accounts (
    partner_id       TEXT NOT NULL PRIMARY KEY,
    key_hash         BLOB NOT NULL,
    credit           INTEGER NOT NULL CHECK (credit >= 0),
    time_zone        TEXT NOT NULL,
    cost_per_segment INTEGER NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
) STRICT;

CREATE TABLE sms_senders (
    partner_id  TEXT NOT NULL REFERENCES sms_accounts (partner_id) ON DELETE CASCADE,
    sender      TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (partner_id, sender)
) STRICT, WITHOUT ROWID;

CREATE TABLE sms_messages (
    number             INTEGER PRIMARY KEY AUTOINCREMENT,
    id                 TEXT NOT NULL UNIQUE,
    partner_id         TEXT NOT NULL REFERENCES sms_accounts (partner_id),
    mobile             TEXT NOT NULL,
    text               TEXT NOT NULL,
    sender             TEXT NOT NULL,
    client_sms_id      TEXT NOT NULL,
    encoding           TEXT NOT NULL,
    segments           INTEGER NOT NULL,
    cost               INTEGER NOT NULL,
    status             TEXT NOT NULL,
    due_at             TEXT NOT NULL,
    attempts           INTEGER NOT NULL,
    claim_token        TEXT NOT NULL,
    gateway_message_id TEXT NOT NULL,
    network_id         TEXT NOT NULL,
    failure_reason     TEXT NOT NULL,
    dlr_status         INTEGER,
    dlr_description    TEXT,
    dlr_network_id     TEXT,
    dlr_time           TEXT,
    sent_at            TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
) STRICT;

CREATE INDEX sms_messages_due ON sms_messages (due_at, number)
    WHERE status IN ('scheduled', 'queued', 'sending');
