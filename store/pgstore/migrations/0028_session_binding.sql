-- A dashboard session may be bound to the secret that opened it (see
-- messaging.SessionParams.Binding): an HMAC of the binding keyed by the
-- session's token, hex; empty for a session that is not bound, as are the
-- sessions started before.
ALTER TABLE sessions ADD COLUMN binding text NOT NULL DEFAULT '';
