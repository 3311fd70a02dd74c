-- The suppression list: the opt-out state of each recipient on each
-- channel of a workspace, whether or not a contact has the recipient's
-- number. Looked up by recipient (a send, a contact's phone).
CREATE TABLE suppressions (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    recipient    TEXT NOT NULL,
    channel      TEXT NOT NULL,
    opted_out    INTEGER NOT NULL,
    source       TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, recipient, channel)
);
