package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ujumbe/messaging"
)

// Templates lists, reads and manages the templates of the workspace.
type Templates struct{ c *Client }

// TemplateListParams filter GET /v1/templates; empty fields do not filter.
// Status other than approved needs the scope manage:templates.
type TemplateListParams struct {
	Status   string
	Category string
	Language string
}

// List returns the workspace's templates (GET /v1/templates): the approved
// ones unless p asks for another status. p may be nil.
func (s *Templates) List(ctx context.Context, p *TemplateListParams) ([]*Template, error) {
	q := url.Values{}
	if p != nil {
		for k, v := range map[string]string{"status": p.Status, "category": p.Category, "language": p.Language} {
			if v != "" {
				q.Set(k, v)
			}
		}
	}
	out, err := get[[]*Template](ctx, s.c, "/v1/templates", q)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Get returns a template with its send_example (GET /v1/templates/{id}).
func (s *Templates) Get(ctx context.Context, id string) (*Template, error) {
	path, err := pathf("/v1/templates/%s", id)
	if err != nil {
		return nil, err
	}
	return get[Template](ctx, s.c, path, nil)
}

// Create creates a draft template (POST /v1/templates); submit it for
// review with Submit. p.Status must be empty: the API creates drafts only
// (a status is refused naming the field).
func (s *Templates) Create(ctx context.Context, p *messaging.TemplateCreateParams) (*Template, error) {
	return send[Template](ctx, s.c, http.MethodPost, "/v1/templates", p, false)
}

// Update changes the fields of a draft that p sets (PATCH
// /v1/templates/{id}).
func (s *Templates) Update(ctx context.Context, id string, p *messaging.TemplatePatch) (*Template, error) {
	path, err := pathf("/v1/templates/%s", id)
	if err != nil {
		return nil, err
	}
	return send[Template](ctx, s.c, http.MethodPatch, path, p, false)
}

// Delete deletes a template (DELETE /v1/templates/{id}).
func (s *Templates) Delete(ctx context.Context, id string) (*Deleted, error) {
	path, err := pathf("/v1/templates/%s", id)
	if err != nil {
		return nil, err
	}
	return send[Deleted](ctx, s.c, http.MethodDelete, path, nil, true)
}

// Submit submits a draft for review (POST /v1/templates/{id}/submit).
func (s *Templates) Submit(ctx context.Context, id string) (*Template, error) {
	path, err := pathf("/v1/templates/%s/submit", id)
	if err != nil {
		return nil, err
	}
	return send[Template](ctx, s.c, http.MethodPost, path, nil, false)
}

// Sync refreshes the workspace's templates from the channel provider
// (POST /v1/templates/sync).
func (s *Templates) Sync(ctx context.Context) (*messaging.TemplateSyncResult, error) {
	return send[messaging.TemplateSyncResult](ctx, s.c, http.MethodPost, "/v1/templates/sync", nil, false)
}
