-- A connection's sending limits and account health: the messages per
-- second the service may send through it (0: never set, read as the
-- default of 80), and the provider's messaging limit tier and quality
-- rating of the account (empty: unknown), each with when it last changed.
-- None of them is read by a sender, so the cache trigger (migration 0034)
-- does not list them.
ALTER TABLE channel_connections
    ADD COLUMN throughput integer NOT NULL DEFAULT 0,
    ADD COLUMN messaging_tier text NOT NULL DEFAULT '',
    ADD COLUMN tier_changed_at bigint,
    ADD COLUMN quality_rating text NOT NULL DEFAULT '',
    ADD COLUMN quality_changed_at bigint;
