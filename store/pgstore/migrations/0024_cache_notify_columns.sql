-- The record of an API key's use (APIKeyTouch sets last_used_at, about
-- once a minute per active key and instance) is no change a Service must
-- see at once: only an UPDATE that sets another column of api_keys sends
-- the notice of migration 0023. A statement-level UPDATE OF trigger fires
-- when the statement's SET names one of the listed columns, whether or not
-- a value changes; a column added to api_keys later is added to the list
-- by a migration that recreates the trigger again.
DROP TRIGGER api_keys_cache ON api_keys;
CREATE TRIGGER api_keys_cache
    AFTER INSERT OR DELETE OR UPDATE OF id, workspace_id, prefix, hash, scopes, expires_at, revoked_at, created_at, name
    ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION messaging_cache_changed();
