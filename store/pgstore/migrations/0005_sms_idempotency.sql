-- SMS idempotency keys: what the first request with a key was (the hash
-- of its fields) and what it was answered, per account, written in the
-- transaction that debits and stores the request's messages.
--
-- answer is package sms's encoding of the answer, kept as it is; numbers,
-- balances and refused are the accept results of the request's messages,
-- in order (refused: refused for credit). A record counts until
-- expires_at; an expired one is replaced when its key is used again, and
-- deleted a few at a time by the writes that add records (through the
-- index on expires_at).

CREATE TABLE sms_idempotency (
    partner_id   text COLLATE "C" NOT NULL REFERENCES sms_accounts (partner_id),
    idem_key     text COLLATE "C" NOT NULL,
    request_hash bytea NOT NULL,
    answer       bytea NOT NULL,
    numbers      bigint[] NOT NULL,
    balances     bigint[] NOT NULL,
    refused      boolean[] NOT NULL,
    created_at   bigint NOT NULL,
    expires_at   bigint NOT NULL,
    PRIMARY KEY (partner_id, idem_key)
);

CREATE INDEX sms_idempotency_expiry ON sms_idempotency (expires_at);
