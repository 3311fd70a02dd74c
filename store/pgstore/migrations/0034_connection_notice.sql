-- A Service now caches what a send reads of a workspace's channel
-- connection (its account, token, status and generation: the sender), so
-- a change to those columns must reach the other instances at once, as a
-- change to API keys and workspaces does (migration 0023). The record of a
-- template sync (templates_synced_at, template_sync_error), about hourly
-- per connection, and the display fields change nothing a sender reads
-- and send no notice (migration 0025's reason). A column a sender reads
-- that is added later is added to this list by a migration that recreates
-- the trigger.
CREATE TRIGGER channel_connections_cache
    AFTER INSERT OR DELETE OR UPDATE OF workspace_id, channel, account_id, waba_id, token_sealed, status, status_reason,
        generation, verified_at
    ON channel_connections
    FOR EACH STATEMENT EXECUTE FUNCTION messaging_cache_changed();
