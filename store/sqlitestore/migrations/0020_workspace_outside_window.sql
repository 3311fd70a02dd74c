-- The workspace's policy for free-form sends outside the customer-service
-- window: '' (provider, the default) or 'reject'.
ALTER TABLE workspaces ADD COLUMN outside_window TEXT NOT NULL DEFAULT '';
