-- The workspace's opt-out and opt-in keywords, folded, as a JSON array of
-- strings: '[]' means the defaults.
ALTER TABLE workspaces ADD COLUMN opt_out_keywords TEXT NOT NULL DEFAULT '[]';
ALTER TABLE workspaces ADD COLUMN opt_in_keywords TEXT NOT NULL DEFAULT '[]';
