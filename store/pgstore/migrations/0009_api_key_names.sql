-- API keys get a name (empty for keys made without one) and the time of
-- their last use, recorded at most once a minute (messaging.APIKey).
ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at bigint;
