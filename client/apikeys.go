package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// APIKeys lists, creates, reads and revokes the API keys of the workspace
// (scope manage:keys).
type APIKeys struct{ c *Client }

// List returns the workspace's API keys (GET /v1/api-keys).
func (s *APIKeys) List(ctx context.Context) ([]*APIKey, error) {
	out, err := get[struct {
		Data []*APIKey `json:"data"`
	}](ctx, s.c, "/v1/api-keys", nil)
	if err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Create creates an API key (POST /v1/api-keys); its Key is shown this
// once.
func (s *APIKeys) Create(ctx context.Context, p *APIKeyCreateParams) (*APIKeyCreated, error) {
	return send[APIKeyCreated](ctx, s.c, http.MethodPost, "/v1/api-keys", p, false)
}

// Get returns an API key (GET /v1/api-keys/{id}).
func (s *APIKeys) Get(ctx context.Context, id string) (*APIKey, error) {
	path, err := pathf("/v1/api-keys/%s", id)
	if err != nil {
		return nil, err
	}
	return get[APIKey](ctx, s.c, path, nil)
}

// Revoke revokes an API key (DELETE /v1/api-keys/{id}).
func (s *APIKeys) Revoke(ctx context.Context, id string) (*APIKey, error) {
	path, err := pathf("/v1/api-keys/%s", id)
	if err != nil {
		return nil, err
	}
	return send[APIKey](ctx, s.c, http.MethodDelete, path, nil, true)
}

// AuditEvents lists the management changes of the workspace, newest first
// (scope manage:keys).
type AuditEvents struct{ c *Client }

// List returns one page of audit events (GET /v1/audit-events). p may be
// nil.
func (s *AuditEvents) List(ctx context.Context, p *CursorParams) (*AuditPage, error) {
	return get[AuditPage](ctx, s.c, "/v1/audit-events", p.query())
}

// All iterates over the audit events of every page from p.Cursor on.
func (s *AuditEvents) All(ctx context.Context, p *CursorParams) iter.Seq2[*AuditEvent, error] {
	return cursorSeq(p, func(q *CursorParams) ([]*AuditEvent, *string, error) {
		page, err := s.List(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		return page.Data, page.NextCursor, nil
	})
}

func (p *CursorParams) query() url.Values {
	q := url.Values{}
	if p == nil {
		return q
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// cursorSeq iterates over the items of the pages fetch returns, following
// their next cursors from p's.
func cursorSeq[T any](p *CursorParams, fetch func(*CursorParams) ([]T, *string, error)) iter.Seq2[T, error] {
	var start CursorParams
	if p != nil {
		start = *p
	}
	return func(yield func(T, error) bool) {
		q := start
		for {
			items, next, err := fetch(&q)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil || *next == "" || *next == q.Cursor {
				return
			}
			q.Cursor = *next
		}
	}
}
