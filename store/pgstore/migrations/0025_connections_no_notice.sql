-- A Service caches API keys and workspaces with their connected channels
-- and settings, and nothing of channel_connections: connecting and
-- disconnecting a channel change workspace_channels, whose own trigger
-- sends the notice. The notice of every change to channel_connections
-- (each template sync and credentials check, about hourly per connection)
-- only made every instance empty its cache for nothing.
DROP TRIGGER channel_connections_cache ON channel_connections;
