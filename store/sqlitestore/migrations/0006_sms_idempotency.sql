-- SMS idempotency keys: what the first request with a key was (the hash
-- of its fields) and what it was answered, per account, written in the
-- transaction that debits and stores the request's messages.
--
-- answer is package sms's encoding of the answer, kept as it is; results
-- is the store's JSON array of the accept results of the request's
-- messages, in order ({"n": number, "b": balance, "r": true when refused
-- for credit}). A record counts until expires_at; an expired one is
-- replaced when its key is used again, and deleted a few at a time by the
-- writes that add records (through the index on expires_at).

CREATE TABLE sms_idempotency (
    partner_id   TEXT NOT NULL REFERENCES sms_accounts (partner_id),
    idem_key     TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    answer       BLOB NOT NULL,
    results      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    PRIMARY KEY (partner_id, idem_key)
) STRICT;

CREATE INDEX sms_idempotency_expiry ON sms_idempotency (expires_at);
