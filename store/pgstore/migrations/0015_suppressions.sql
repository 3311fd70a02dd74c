-- The suppression list: the opt-out state of each recipient on each
-- channel of a workspace, whether or not a contact has the recipient's
-- number. Looked up by recipient (a send, a contact's phone).
CREATE TABLE suppressions (
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    recipient    text COLLATE "C" NOT NULL,
    channel      text NOT NULL,
    opted_out    boolean NOT NULL,
    source       text NOT NULL,
    message_id   text COLLATE "C" NOT NULL,
    updated_at   bigint NOT NULL,
    PRIMARY KEY (workspace_id, recipient, channel)
);
