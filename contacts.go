package messaging

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// ContactCreateParams are the fields accepted when creating a contact.
type ContactCreateParams struct {
	FirstName string
	LastName  string
	Phone     string
	Email     string
	Company   string
	JobTitle  string
	Website   string
	Notes     string
	Tags      []string
	Lifecycle string
}

// ContactUpdateParams is a partial update: a nil field is left unchanged, a
// pointer to a value sets it, and a pointer to "" (or to an empty slice for
// Tags) clears it. FirstName cannot be cleared, and phone and email cannot
// both end up empty.
type ContactUpdateParams struct {
	FirstName *string
	LastName  *string
	Phone     *string
	Email     *string
	Company   *string
	JobTitle  *string
	Website   *string
	Notes     *string
	Tags      *[]string
	Lifecycle *string
	// IfVersion, when non-zero, is the Version of the contact the caller
	// read before editing it: the update is refused with CodeConflict if
	// the contact has changed since (a form that would otherwise
	// overwrite someone else's edit). It is not a field: an update
	// setting only IfVersion sets nothing.
	IfVersion int64
	// OptedOut is refused whatever its value: only the recipient opts
	// back in (by replying an opt-in keyword of the workspace, START by
	// default), or the operator (Service.ClearOptOut).
	OptedOut *bool
}

// ContactPage is one page of a contact listing.
type ContactPage struct {
	Items      []*Contact
	Total      int
	Page       int
	Limit      int
	TotalPages int
}

// ContactListParams select a page of contacts. Zero Page means 1; zero
// Limit means DefaultPageSize.
type ContactQuery struct {
	Page  int
	Limit int
	// Search matches contacts whose first name, last name, full name or
	// email starts with it (case-insensitive, surrounding and repeated
	// spaces ignored), or, when it looks like a phone number (optional '+',
	// digits, spaces, dots, dashes, parentheses), whose phone digits start
	// with its digits. "+2547", "2547" and "254 7" all match +254712345678.
	Search string
}

// Contacts manages the contacts of one workspace.
type Contacts struct {
	svc *Service
	ws  string
}

// contactFields validates and normalizes a full set of contact fields.
func validateContact(c *Contact) error {
	c.FirstName = strings.TrimSpace(c.FirstName)
	c.LastName = strings.TrimSpace(c.LastName)
	if c.FirstName == "" {
		return validationError("firstName", "is required")
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{
		{"firstName", c.FirstName, record.MaxNameLen}, {"lastName", c.LastName, record.MaxNameLen},
		{"company", c.Company, record.MaxCompanyLen}, {"jobTitle", c.JobTitle, record.MaxCompanyLen},
		{"notes", c.Notes, record.MaxNotesLen},
	} {
		if err := checkLen(record.FieldPath(f.name), f.v, f.max); err != nil {
			return err
		}
	}
	if c.Phone == "" && c.Email == "" {
		return validationError("phone", "at least one of phone or email is required")
	}
	if c.Phone != "" {
		if _, err := NormalizePhone(c.Phone); err != nil {
			return err
		}
	}
	if c.Email != "" && !ValidEmail(c.Email) {
		return validationError("email", "must be a valid email address such as name@example.com")
	}
	if c.Website != "" {
		if err := validateHTTPURL(record.FieldPath("website"), c.Website); err != nil {
			return err
		}
	}
	if c.Lifecycle != "" && !slices.Contains(record.Lifecycles(), c.Lifecycle) {
		return validationError("lifecycle", "must be one of %s (got %q)", strings.Join(record.Lifecycles(), ", "), c.Lifecycle)
	}
	tags, err := normalizeTags(c.Tags)
	if err != nil {
		return err
	}
	c.Tags = tags
	c.EmailKey = strings.ToLower(c.Email)
	c.FullName = strings.TrimSpace(c.FirstName + " " + c.LastName)
	return nil
}

func normalizeTags(in []string) ([]string, error) {
	if len(in) > record.MaxTags {
		return nil, validationError("tags", "must hold at most %d tags", record.MaxTags)
	}
	out := make([]string, 0, len(in))
	for _, t := range in {
		t = strings.TrimSpace(t)
		if t == "" {
			return nil, validationError("tags", "must not hold empty tags")
		}
		if err := checkLen(record.FieldPath("tags"), t, record.MaxTagLen); err != nil {
			return nil, err
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Create creates a contact with source "api". A contact of the workspace
// with the same phone, or the same email (case-insensitive), is a conflict.
func (cs *Contacts) Create(ctx context.Context, p *ContactCreateParams) (*Contact, error) {
	if err := requireStorable(p, "body", contactCreateTexts); err != nil {
		return nil, err
	}
	now := cs.svc.now()
	c := &Contact{
		ID: record.NewID("ct"), WorkspaceID: cs.ws,
		FirstName: p.FirstName, LastName: p.LastName, Phone: p.Phone, Email: p.Email,
		Company: p.Company, JobTitle: p.JobTitle, Website: p.Website, Notes: p.Notes,
		Tags: p.Tags, Lifecycle: p.Lifecycle, Source: record.SourceAPI, Version: 1,
		CreatedAt: now, UpdatedAt: now,
	}
	if err := validateContact(c); err != nil {
		return nil, err
	}
	if err := cs.svc.store.ContactCreate(ctx, c); err != nil {
		return nil, cs.storeError(ctx, err, c)
	}
	if err := cs.svc.fillOptedOut(ctx, cs.ws, c); err != nil {
		return nil, err
	}
	return c, nil
}

// storeError turns a store error on writing c into an *Error; a conflict
// names the field (phone or email) that another contact already holds.
func (cs *Contacts) storeError(ctx context.Context, err error, c *Contact) error {
	if !errors.Is(err, ErrConflict) {
		return wrapStoreError(err, "contact", c.ID)
	}
	field := "email"
	if c.Phone != "" {
		others, _, lerr := cs.svc.store.ContactList(ctx, &driver.ContactListParams{WorkspaceID: cs.ws, PhoneDigits: driver.PhoneDigits(c.Phone), Search: driver.PhoneDigits(c.Phone), Limit: record.MaxPageSize})
		if lerr == nil && slices.ContainsFunc(others, func(o *Contact) bool { return o.Phone == c.Phone && o.ID != c.ID }) {
			field = "phone"
		}
	}
	return errorOn(CodeConflict, field, fmt.Sprintf("%s: another contact of the workspace already has this %s", field, field), err)
}

// Get returns a contact of the workspace.
func (cs *Contacts) Get(ctx context.Context, id string) (*Contact, error) {
	c, err := getRecord(ctx, cs.svc.store.ContactGet, cs.ws, "contact", id)
	if err != nil {
		return nil, err
	}
	if err := cs.svc.fillOptedOut(ctx, cs.ws, c); err != nil {
		return nil, err
	}
	return c, nil
}

// fillOptedOut sets the OptedOut of each contact from the suppression
// list, with one store call.
func (s *Service) fillOptedOut(ctx context.Context, ws string, cs ...*Contact) error {
	phones := make([]string, 0, len(cs))
	for _, c := range cs {
		phones = append(phones, c.Phone)
	}
	opted, err := s.optedOut(ctx, ws, phones)
	if err != nil {
		return err
	}
	for _, c := range cs {
		c.OptedOut = map[string]time.Time{}
		if c.Phone != "" {
			for ch, at := range opted[c.Phone] {
				c.OptedOut[ch] = at
			}
		}
	}
	return nil
}

// maxUpdateAttempts bounds the optimistic retries of Contacts.Update.
const maxUpdateAttempts = 1000

// Update applies a partial update (see ContactUpdateParams) and returns the
// updated contact; UpdatedAt moves. An update with no field set is a
// validation error. Concurrent updates of different fields do not lose each
// other's changes.
func (cs *Contacts) Update(ctx context.Context, id string, p *ContactUpdateParams) (*Contact, error) {
	if p == nil || *p == (ContactUpdateParams{IfVersion: p.IfVersion}) {
		return nil, validationError("body", "must set at least one field")
	}
	if p.IfVersion < 0 {
		return nil, validationError("version", "must be a positive version of the contact (got %d)", p.IfVersion)
	}
	if err := refuseUnstorable(p, contactUpdateTexts); err != nil {
		return nil, err
	}
	if p.OptedOut != nil {
		if !*p.OptedOut {
			return nil, validationError("opted_out", "cannot be cleared through the contact: only the recipient can opt back in, by replying an opt-in keyword of the workspace (START, UNSTOP or ANZA by default; or the operator, with an audited management call)")
		}
		return nil, validationError("opted_out", "is set by the recipient replying STOP, not through the contact")
	}
	for attempt := 0; ; attempt++ {
		cur, err := cs.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if p.IfVersion != 0 && cur.Version != p.IfVersion {
			return nil, &Error{Code: CodeConflict, Err: driver.ErrStale,
				Message: fmt.Sprintf("contact: was changed by someone else since you read it (version %d, now %d); reload it and apply your changes again", p.IfVersion, cur.Version)}
		}
		c := *cur
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&c.FirstName, p.FirstName)
		set(&c.LastName, p.LastName)
		set(&c.Phone, p.Phone)
		set(&c.Email, p.Email)
		set(&c.Company, p.Company)
		set(&c.JobTitle, p.JobTitle)
		set(&c.Website, p.Website)
		set(&c.Notes, p.Notes)
		set(&c.Lifecycle, p.Lifecycle)
		if p.Tags != nil {
			c.Tags = *p.Tags
		}
		if err := validateContact(&c); err != nil {
			return nil, err
		}
		c.Version = cur.Version + 1
		c.UpdatedAt = cs.svc.now()
		if !c.UpdatedAt.After(cur.UpdatedAt) {
			c.UpdatedAt = cur.UpdatedAt.Add(time.Microsecond)
		}
		err = cs.svc.store.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: &c, PrevVersion: cur.Version})
		if errors.Is(err, driver.ErrStale) {
			// Another update won the race: retry on the new version. Each
			// loss means another update succeeded, so retries are bounded
			// only loosely; giving up is a conflict, never an internal error.
			if attempt < maxUpdateAttempts && ctx.Err() == nil {
				continue
			}
			return nil, &Error{Code: CodeConflict, Err: err,
				Message: "contact: was modified by too many concurrent requests; retry"}
		}
		if err != nil {
			return nil, cs.storeError(ctx, err, &c)
		}
		if err := cs.svc.fillOptedOut(ctx, cs.ws, &c); err != nil {
			return nil, err
		}
		return &c, nil
	}
}

// List returns a page of contacts, newest first, optionally filtered by
// Search (see ContactQuery).
func (cs *Contacts) List(ctx context.Context, q *ContactQuery) (*ContactPage, error) {
	query := opt(q)
	if err := new(texts).at(nil, "search", query.Search).result(); err != nil {
		return nil, err
	}
	if query.Page == 0 {
		query.Page = 1
	}
	if query.Limit == 0 {
		query.Limit = defaults.DefaultPageSize
	}
	if query.Page < 1 || query.Page > record.MaxPage {
		return nil, validationError("page", "must be an integer from 1 to %d", record.MaxPage)
	}
	if query.Limit < 1 || query.Limit > record.MaxPageSize {
		return nil, validationError("limit", "must be an integer from 1 to %d", record.MaxPageSize)
	}
	if err := checkLen(record.FieldPath("search"), query.Search, record.MaxSearchLen); err != nil {
		return nil, err
	}
	search, digits := driver.ContactSearchQuery(query.Search)
	items, total, err := cs.svc.store.ContactList(ctx, &driver.ContactListParams{
		WorkspaceID: cs.ws, Search: search, PhoneDigits: digits,
		Offset: (query.Page - 1) * query.Limit, Limit: query.Limit,
	})
	if err != nil {
		return nil, wrapStoreError(err, "contact", "")
	}
	if items == nil {
		items = []*Contact{}
	}
	return &ContactPage{Items: items, Total: total, Page: query.Page, Limit: query.Limit,
		TotalPages: (total + query.Limit - 1) / query.Limit}, nil
}
