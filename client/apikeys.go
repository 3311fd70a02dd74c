package client

import (
	"context"
	"iter"
	"net/http"
)

// APIKeys lists, creates, reads and revokes the API keys of the workspace
// (scope manage:keys).
type APIKeys struct{ r *restClient }

// List returns the workspace's API keys (GET /v1/api-keys).
func (s *APIKeys) List(ctx context.Context) ([]*APIKey, error) {
	return getData[*APIKey](ctx, s.r, "/v1/api-keys")
}

// Create creates an API key (POST /v1/api-keys); its Key is shown this
// once.
func (s *APIKeys) Create(ctx context.Context, p *APIKeyCreateParams) (*APIKeyCreated, error) {
	return send[APIKeyCreated](ctx, s.r, http.MethodPost, p, false, "/v1/api-keys")
}

// Get returns an API key (GET /v1/api-keys/{id}).
func (s *APIKeys) Get(ctx context.Context, id string) (*APIKey, error) {
	return get[APIKey](ctx, s.r, nil, "/v1/api-keys/%s", id)
}

// Revoke revokes an API key (DELETE /v1/api-keys/{id}).
func (s *APIKeys) Revoke(ctx context.Context, id string) (*APIKey, error) {
	return send[APIKey](ctx, s.r, http.MethodDelete, nil, true, "/v1/api-keys/%s", id)
}

// AuditEvents lists the management changes of the workspace, newest first
// (scope manage:keys).
type AuditEvents struct{ r *restClient }

// List returns one page of audit events (GET /v1/audit-events). p may be
// nil.
func (s *AuditEvents) List(ctx context.Context, p *CursorParams) (*AuditPage, error) {
	return get[AuditPage](ctx, s.r, p.query(), "/v1/audit-events")
}

// All iterates over the audit events of every page from p.Cursor on.
func (s *AuditEvents) All(ctx context.Context, p *CursorParams) iter.Seq2[*AuditEvent, error] {
	return cursorSeq(p, func(q *CursorParams) (*AuditPage, error) { return s.List(ctx, q) })
}
