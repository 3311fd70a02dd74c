-- SMS API: accounts, their approved sender ids, and messages.
--
-- Credit and costs are BIGINT hundredths of a credit; the CHECK makes a
-- negative balance impossible whatever the code does. A message's number
-- is the provider message id the API gives out; pending messages
-- (scheduled, queued, sending) are claimed through the partial index on
-- due_at.

CREATE TABLE sms_accounts (
    partner_id       text COLLATE "C" PRIMARY KEY,
    key_hash         bytea NOT NULL,
    credit           bigint NOT NULL CHECK (credit >= 0),
    time_zone        text NOT NULL,
    cost_per_segment bigint NOT NULL,
    created_at       bigint NOT NULL,
    updated_at       bigint NOT NULL
);

CREATE TABLE sms_senders (
    partner_id  text COLLATE "C" NOT NULL REFERENCES sms_accounts (partner_id) ON DELETE CASCADE,
    sender      text COLLATE "C" NOT NULL,
    approved_at bigint NOT NULL,
    PRIMARY KEY (partner_id, sender)
);

CREATE TABLE sms_messages (
    number             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                 text COLLATE "C" NOT NULL UNIQUE,
    partner_id         text COLLATE "C" NOT NULL REFERENCES sms_accounts (partner_id),
    mobile             text NOT NULL,
    text               text NOT NULL,
    sender             text NOT NULL,
    client_sms_id      text NOT NULL,
    encoding           text NOT NULL,
    segments           integer NOT NULL,
    cost               bigint NOT NULL,
    status             text NOT NULL,
    due_at             bigint NOT NULL,
    attempts           integer NOT NULL,
    claim_token        text NOT NULL,
    gateway_message_id text NOT NULL,
    network_id         text NOT NULL,
    failure_reason     text NOT NULL,
    dlr_status         integer,
    dlr_description    text,
    dlr_network_id     text,
    dlr_time           bigint,
    sent_at            bigint,
    created_at         bigint NOT NULL,
    updated_at         bigint NOT NULL
);
CREATE INDEX sms_messages_due ON sms_messages (due_at, number)
    WHERE status IN ('scheduled', 'queued', 'sending');
