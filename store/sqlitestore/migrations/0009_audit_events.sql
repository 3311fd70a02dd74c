-- Audit events: every management change of a workspace (see
-- messaging.AuditEvent), newest first by seq.
CREATE TABLE audit_events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    actor        TEXT NOT NULL,
    action       TEXT NOT NULL,
    target       TEXT NOT NULL,
    at           TEXT NOT NULL
) STRICT;
CREATE INDEX audit_events_workspace ON audit_events (workspace_id, seq);
