-- The workspace's policy for a message whose send outcome stayed unknown
-- through the dispatcher's confirmation window: '' (resend, the default)
-- or 'fail'.
ALTER TABLE workspaces ADD COLUMN unconfirmed_sends TEXT NOT NULL DEFAULT '';
