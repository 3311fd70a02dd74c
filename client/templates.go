package client

import (
	"context"
	"net/http"
	"net/url"
)

// TemplateComponent is a part of a template (schema TemplateComponent):
// Type HEADER, BODY, FOOTER or BUTTONS.
type TemplateComponent struct {
	Type string `json:"type"`
	// Format of a HEADER: TEXT, IMAGE, VIDEO or DOCUMENT.
	Format string `json:"format,omitempty"`
	// Text is the text; variables are written {{1}}, {{2}}, ...
	Text string `json:"text,omitempty"`
	// Buttons are the buttons of a BUTTONS component.
	Buttons []TemplateButton `json:"buttons,omitempty"`
	// Examples are sample values of the variables of a TEXT HEADER's or
	// the BODY's text, one per variable in the order of their numbers.
	Examples []string `json:"examples,omitempty"`
	// ExampleMedia is the sample of an IMAGE, VIDEO or DOCUMENT HEADER:
	// the id of an upload of purpose template_sample (Client.Media).
	ExampleMedia string `json:"example_media,omitempty"`
}

// TemplateButton is a button of a BUTTONS component (schema
// TemplateButton): Type QUICK_REPLY, URL, PHONE_NUMBER or COPY_CODE.
type TemplateButton struct {
	Type        string `json:"type"`
	Text        string `json:"text,omitempty"`
	URL         string `json:"url,omitempty"`
	PhoneNumber string `json:"phone_number,omitempty"`
	// Example is a sample code for a COPY_CODE button.
	Example string `json:"example,omitempty"`
}

// TemplateCreateParams is the body of POST /v1/templates (schema
// TemplateCreate).
type TemplateCreateParams struct {
	Name string `json:"name"`
	// Category is MARKETING, UTILITY or AUTHENTICATION.
	Category   string              `json:"category"`
	Language   string              `json:"language"`
	Components []TemplateComponent `json:"components"`
}

// TemplatePatch is the body of PATCH /v1/templates/{id} (schema
// TemplatePatch): nil fields are left unchanged.
type TemplatePatch struct {
	Name       *string              `json:"name,omitempty"`
	Category   *string              `json:"category,omitempty"`
	Language   *string              `json:"language,omitempty"`
	Components *[]TemplateComponent `json:"components,omitempty"`
}

// TemplateSyncResult is the answer of Templates.Sync (schema
// TemplateSyncResult): how many templates the provider listed, and how
// many were created, updated, removed and resubmitted.
type TemplateSyncResult struct {
	Listed      int `json:"listed"`
	Created     int `json:"created"`
	Updated     int `json:"updated"`
	Removed     int `json:"removed"`
	Resubmitted int `json:"resubmitted"`
}

// Templates lists, reads and manages the templates of the workspace.
type Templates struct{ r *restClient }

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
	return getArray[*Template](ctx, s.r, q, "/v1/templates")
}

// Get returns a template with its send_example (GET /v1/templates/{id}).
func (s *Templates) Get(ctx context.Context, id string) (*Template, error) {
	return get[Template](ctx, s.r, nil, "/v1/templates/%s", id)
}

// Create creates a draft template (POST /v1/templates); submit it for
// review with Submit.
func (s *Templates) Create(ctx context.Context, p *TemplateCreateParams) (*Template, error) {
	return send[Template](ctx, s.r, http.MethodPost, p, false, "/v1/templates")
}

// Update changes the fields of a draft that p sets (PATCH
// /v1/templates/{id}).
func (s *Templates) Update(ctx context.Context, id string, p *TemplatePatch) (*Template, error) {
	return send[Template](ctx, s.r, http.MethodPatch, p, false, "/v1/templates/%s", id)
}

// Delete deletes a template (DELETE /v1/templates/{id}).
func (s *Templates) Delete(ctx context.Context, id string) (*Deleted, error) {
	return send[Deleted](ctx, s.r, http.MethodDelete, nil, true, "/v1/templates/%s", id)
}

// Submit submits a draft for review (POST /v1/templates/{id}/submit).
func (s *Templates) Submit(ctx context.Context, id string) (*Template, error) {
	return send[Template](ctx, s.r, http.MethodPost, nil, false, "/v1/templates/%s/submit", id)
}

// Sync refreshes the workspace's templates from the channel provider
// (POST /v1/templates/sync).
func (s *Templates) Sync(ctx context.Context) (*TemplateSyncResult, error) {
	return send[TemplateSyncResult](ctx, s.r, http.MethodPost, nil, false, "/v1/templates/sync")
}
