-- Channel ownership: a connection holds its account only once the
-- provider proved that its credentials control it (verified_at). The
-- unique index reserves an account for the connection that holds it, not
-- for whoever stored the id first. Connections stored before this
-- migration were never verified: they become pending_verification, their
-- channels stop sending until the service's checks verify them, and
-- they receive nothing meanwhile.
ALTER TABLE channel_connections ADD COLUMN verified_at TEXT;
DROP INDEX channel_connections_account;
CREATE UNIQUE INDEX channel_connections_account ON channel_connections (channel, account_id)
    WHERE status <> 'disconnected' AND verified_at IS NOT NULL;
UPDATE channel_connections SET status = 'pending_verification',
    status_reason = 'stored before connections were verified with the provider'
    WHERE status = 'connected';
DELETE FROM workspace_channels WHERE EXISTS (SELECT 1 FROM channel_connections c
    WHERE c.workspace_id = workspace_channels.workspace_id AND c.channel = workspace_channels.channel
    AND c.status <> 'disconnected');
