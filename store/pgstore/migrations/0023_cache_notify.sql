-- Every change to what a Service caches (API keys, workspaces, their
-- channels, channel connections) sends a notice on the channel
-- messaging_cache, delivered to every listening connection when the
-- change commits, with the schema as payload: Services on other instances
-- empty their caches at once (Store.ListenChanges). One notice per
-- statement; PostgreSQL folds equal notices of one transaction into one.
CREATE FUNCTION messaging_cache_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM pg_notify('messaging_cache', current_schema());
    RETURN NULL;
END $$;

CREATE TRIGGER api_keys_cache AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION messaging_cache_changed();
CREATE TRIGGER workspaces_cache AFTER INSERT OR UPDATE OR DELETE ON workspaces
    FOR EACH STATEMENT EXECUTE FUNCTION messaging_cache_changed();
CREATE TRIGGER workspace_channels_cache AFTER INSERT OR UPDATE OR DELETE ON workspace_channels
    FOR EACH STATEMENT EXECUTE FUNCTION messaging_cache_changed();
CREATE TRIGGER channel_connections_cache AFTER INSERT OR UPDATE OR DELETE ON channel_connections
    FOR EACH STATEMENT EXECUTE FUNCTION messaging_cache_changed();
