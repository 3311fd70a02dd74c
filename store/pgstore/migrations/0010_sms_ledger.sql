-- The ledger of each SMS account (see sms.LedgerEntry): its opening
-- credit, top-ups, one charge per accepted message and one refund per
-- failed message, each with the balance after it, newest first by seq.
-- A top-up's reference is unique in its account (idempotent top-ups).
-- Accounts created before the ledger get an opening entry of their credit
-- then, so that an account's amounts add up to its credit.
CREATE TABLE sms_ledger (
    seq            bigserial PRIMARY KEY,
    partner_id     text COLLATE "C" NOT NULL REFERENCES sms_accounts (partner_id),
    kind           text COLLATE "C" NOT NULL,
    amount         bigint NOT NULL,
    balance        bigint NOT NULL,
    reference      text COLLATE "C" NOT NULL,
    message_number bigint NOT NULL,
    at             bigint NOT NULL
);
CREATE INDEX sms_ledger_account ON sms_ledger (partner_id, seq);
CREATE UNIQUE INDEX sms_ledger_reference ON sms_ledger (partner_id, reference) WHERE reference <> '';

INSERT INTO sms_ledger (partner_id, kind, amount, balance, reference, message_number, at)
    SELECT partner_id, 'opening', credit, credit, '', 0, updated_at FROM sms_accounts WHERE credit <> 0 ORDER BY partner_id;
