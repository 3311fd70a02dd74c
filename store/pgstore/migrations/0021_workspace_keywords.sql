-- The workspace's opt-out and opt-in keywords, folded: '{}' means the
-- defaults.
ALTER TABLE workspaces ADD COLUMN opt_out_keywords text[] NOT NULL DEFAULT '{}';
ALTER TABLE workspaces ADD COLUMN opt_in_keywords text[] NOT NULL DEFAULT '{}';
