package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// Contacts creates, lists, reads and updates the contacts of the
// workspace.
type Contacts struct{ r *restClient }

// ContactListParams are the query of GET /v1/contacts: Page (1-based,
// default 1), Limit (default 25, at most 100) and Search (name, phone or
// email). Zero values take the server's defaults.
type ContactListParams struct {
	Page   int
	Limit  int
	Search string
}

func (p *ContactListParams) query() url.Values {
	q := url.Values{}
	if p == nil {
		return q
	}
	if p.Page != 0 {
		q.Set("page", strconv.Itoa(p.Page))
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Search != "" {
		q.Set("search", p.Search)
	}
	return q
}

// Create creates a contact (POST /v1/contacts). A phone or email another
// contact has is a conflict.
func (s *Contacts) Create(ctx context.Context, p *ContactCreateParams) (*Contact, error) {
	return send[Contact](ctx, s.r, http.MethodPost, p, false, "/v1/contacts")
}

// List returns one page of contacts (GET /v1/contacts). p may be nil.
func (s *Contacts) List(ctx context.Context, p *ContactListParams) (*ContactPage, error) {
	return get[ContactPage](ctx, s.r, p.query(), "/v1/contacts")
}

// All iterates over the contacts of every page from p.Page on (p may be
// nil), fetching a page when the previous one is used up. An error ends
// the iteration after it is yielded. Contacts created or deleted while
// iterating may shift the pages, so a contact may be seen twice or missed.
func (s *Contacts) All(ctx context.Context, p *ContactListParams) iter.Seq2[*ContactListItem, error] {
	var start ContactListParams
	if p != nil {
		start = *p
	}
	if start.Page == 0 {
		start.Page = 1
	}
	return func(yield func(*ContactListItem, error) bool) {
		q := start
		for {
			page, err := s.List(ctx, &q)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, c := range page.Items {
				if !yield(c, nil) {
					return
				}
			}
			if len(page.Items) == 0 || page.Page >= page.TotalPages {
				return
			}
			q.Page = page.Page + 1
		}
	}
}

// Get returns a contact with every field (GET /v1/contacts/{id}).
func (s *Contacts) Get(ctx context.Context, id string) (*Contact, error) {
	return get[Contact](ctx, s.r, nil, "/v1/contacts/%s", id)
}

// Update changes the fields p sets (PATCH /v1/contacts/{id}): a nil field
// is left unchanged, a pointer to "" (or to an empty Tags) clears it.
// The answer is the updated contact; a key without read:contacts gets a
// receipt, of which only ID and UpdatedAt are set.
func (s *Contacts) Update(ctx context.Context, id string, p *ContactUpdateParams) (*Contact, error) {
	return sendParams[Contact](ctx, s.r, "Contacts.Update", http.MethodPatch, p, false, "/v1/contacts/%s", id)
}

// ContactCreateParams is the body of POST /v1/contacts (schema
// ContactCreate): a first name and a phone (E.164) or an email are
// required.
type ContactCreateParams struct {
	FirstName string   `json:"firstName"`
	LastName  string   `json:"lastName,omitempty"`
	Phone     string   `json:"phone,omitempty"`
	Email     string   `json:"email,omitempty"`
	Company   string   `json:"company,omitempty"`
	JobTitle  string   `json:"jobTitle,omitempty"`
	Website   string   `json:"website,omitempty"`
	Notes     string   `json:"notes,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Lifecycle string   `json:"lifecycle,omitempty"`
}

// ContactUpdateParams is the body of PATCH /v1/contacts/{id} (schema
// ContactPatch): a nil field is left unchanged (and not sent), a pointer
// to "" (or to an empty or nil Tags) clears it. The contact's opt-outs
// are not changed this way: only the recipient opts back in, or the
// operator (AdminClient).
type ContactUpdateParams struct {
	FirstName *string   `json:"firstName,omitempty"`
	LastName  *string   `json:"lastName,omitempty"`
	Phone     *string   `json:"phone,omitempty"`
	Email     *string   `json:"email,omitempty"`
	Company   *string   `json:"company,omitempty"`
	JobTitle  *string   `json:"jobTitle,omitempty"`
	Website   *string   `json:"website,omitempty"`
	Notes     *string   `json:"notes,omitempty"`
	Tags      *[]string `json:"tags,omitempty"`
	Lifecycle *string   `json:"lifecycle,omitempty"`
}

// MarshalJSON implements json.Marshaler: an object of the members p
// sets, in name order, with a Tags pointing to a nil slice written []
// (clear the tags), never null.
func (p ContactUpdateParams) MarshalJSON() ([]byte, error) {
	body := map[string]any{}
	for name, v := range map[string]*string{
		"firstName": p.FirstName, "lastName": p.LastName, "phone": p.Phone, "email": p.Email, "company": p.Company,
		"jobTitle": p.JobTitle, "website": p.Website, "notes": p.Notes, "lifecycle": p.Lifecycle,
	} {
		if v != nil {
			body[name] = *v
		}
	}
	if p.Tags != nil {
		tags := *p.Tags
		if tags == nil {
			tags = []string{}
		}
		body["tags"] = tags
	}
	return json.Marshal(body)
}
