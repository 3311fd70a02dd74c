-- A connection's sending limits and account health: the messages per
-- second the service may send through it (0: never set, read as the
-- default of 80), and the provider's messaging limit tier and quality
-- rating of the account (empty: unknown), each with when it last changed.
-- None of them is read by a sender, so no cache notice is needed.
ALTER TABLE channel_connections ADD COLUMN throughput INTEGER NOT NULL DEFAULT 0;
ALTER TABLE channel_connections ADD COLUMN messaging_tier TEXT NOT NULL DEFAULT '';
ALTER TABLE channel_connections ADD COLUMN tier_changed_at TEXT;
ALTER TABLE channel_connections ADD COLUMN quality_rating TEXT NOT NULL DEFAULT '';
ALTER TABLE channel_connections ADD COLUMN quality_changed_at TEXT;
