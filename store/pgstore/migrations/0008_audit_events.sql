-- Audit events: every management change of a workspace (see
-- messaging.AuditEvent), newest first by seq.
CREATE TABLE audit_events (
    seq          bigserial PRIMARY KEY,
    id           text COLLATE "C" NOT NULL UNIQUE,
    workspace_id text COLLATE "C" NOT NULL,
    actor        text NOT NULL,
    action       text COLLATE "C" NOT NULL,
    target       text NOT NULL,
    at           bigint NOT NULL
);
CREATE INDEX audit_events_workspace ON audit_events (workspace_id, seq);
