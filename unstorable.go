package messaging

import (
	"context"
	"maps"
	"slices"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging/internal/textcheck"
)

// The text rule of every write: no string of a call's parameters may hold
// text that no store can keep, a NUL character or bytes that are not UTF-8
// (see textcheck). Every write of the service checks its parameters first
// with the function of their type below, so Go callers and REST callers
// meet the same rule on every store. Each function names its fields
// explicitly, in their order, with the paths the validation errors carry.

// texts checks strings one after another and keeps the validation error
// of the first that no store can keep.
type texts struct{ err *Error }

// at checks fields, alternate member names and values, the members of
// base (nil for the top level).
func (t *texts) at(base Path, fields ...string) *texts {
	for i := 0; t.err == nil && i+1 < len(fields); i += 2 {
		if rule := textcheck.Rule(fields[i+1]); rule != "" {
			t.err = validationErrorAt(base.Member(fields[i]), "%s", rule)
		}
	}
	return t
}

// list checks the strings of the list member name of base.
func (t *texts) list(base Path, name string, list []string) *texts {
	for i := 0; t.err == nil && i < len(list); i++ {
		if rule := textcheck.Rule(list[i]); rule != "" {
			t.err = validationErrorAt(base.Member(name).Index(i), "%s", rule)
		}
	}
	return t
}

// result returns the error found, nil when every string checked is fine.
func (t *texts) result() error {
	if t.err == nil {
		return nil
	}
	return t.err
}

// refuseUnstorable returns the validation error of the first string of
// the parameters p, checked by check (the function of their type), that no
// store can keep; nil when every string is fine or p is nil.
func refuseUnstorable[T any](p *T, check func(*T) error) error {
	if p == nil {
		return nil
	}
	return check(p)
}

// requireStorable refuses a nil p as a validation error naming name ("is
// required") and otherwise returns refuseUnstorable's verdict on p.
func requireStorable[T any](p *T, name string, check func(*T) error) error {
	if p == nil {
		return validationError(name, "is required")
	}
	return check(p)
}

// opt is the value p points to, the zero value for nil.
func opt[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// badID reports whether an id cannot name any record (it holds text no
// store keeps): such an id is not found, without asking the store.
func badID(id string) bool { return textcheck.Rule(id) != "" }

// getRecord reads the record id, a what ("contact", ...), of workspace ws
// with get: an id no store can keep is not_found without asking the store,
// and a store error is wrapped naming what and id.
func getRecord[T any](ctx context.Context, get func(ctx context.Context, workspaceID, id string) (T, error), ws, what, id string) (T, error) {
	if badID(id) {
		var zero T
		return zero, notFound(what, id)
	}
	r, err := get(ctx, ws, id)
	if err != nil {
		var zero T
		return zero, wrapStoreError(err, what, id)
	}
	return r, nil
}

func sendTexts(p *SendParams) error {
	t := new(texts).at(nil, "channel", p.Channel, "to", p.To, "type", p.Type, "text", p.Text, "media_url", p.MediaURL,
		"media_id", p.MediaID, "caption", p.Caption, "filename", p.Filename)
	if in := p.Interactive; in != nil {
		at := record.FieldPath("interactive")
		t.at(at, "type", in.Type, "body", in.Body, "footer", in.Footer)
		if h := in.Header; h != nil {
			t.at(at.Member("header"), "type", h.Type, "text", h.Text, "media_url", h.MediaURL, "filename", h.Filename)
			if h.Media != nil {
				t.at(at.Member("header"), "media_id", h.Media.ID)
			}
		}
		for i, b := range in.Buttons {
			t.at(at.Member("buttons").Index(i), "id", b.ID, "title", b.Title)
		}
		if l := in.List; l != nil {
			t.at(at.Member("list"), "button", l.Button)
			for i, sec := range l.Sections {
				sp := at.Member("list").Member("sections").Index(i)
				t.at(sp, "title", sec.Title)
				for j, r := range sec.Rows {
					t.at(sp.Member("rows").Index(j), "id", r.ID, "title", r.Title, "description", r.Description)
				}
			}
		}
		if c := in.CTA; c != nil {
			t.at(at.Member("cta_url"), "display_text", c.DisplayText, "url", c.URL)
		}
	}
	if l := p.Location; l != nil {
		t.at(record.FieldPath("location"), "name", l.Name, "address", l.Address, "url", l.URL)
	}
	for i, c := range p.Contacts {
		at := record.FieldPath("contacts").Index(i)
		t.at(at, "formatted_name", c.FormattedName, "first_name", c.FirstName, "last_name", c.LastName, "organization", c.Organization)
		for j, ph := range c.Phones {
			t.at(at.Member("phones").Index(j), "phone", ph.Phone, "wa_id", ph.WaID, "type", ph.Type)
		}
		for j, e := range c.Emails {
			t.at(at.Member("emails").Index(j), "email", e.Email, "type", e.Type)
		}
	}
	if r := p.Reaction; r != nil {
		t.at(record.FieldPath("reaction"), "message_id", r.MessageID, "emoji", r.Emoji)
	}
	t.at(record.FieldPath("context"), "message_id", p.ReplyTo)
	return t.at(nil, "idempotency_key", p.IdempotencyKey).result()
}

func sendTemplateTexts(p *SendTemplateParams) error {
	t := new(texts).at(nil, "to", p.To, "template_name", p.TemplateName, "language", p.Language)
	for i, c := range p.Components {
		at := record.FieldPath("components").Index(i)
		t.at(at, "type", c.Type, "sub_type", c.SubType)
		for j, q := range c.Parameters {
			t.at(at.Member("parameters").Index(j), "type", q.Type, "text", q.Text, "link", q.Link, "filename", q.Filename,
				"coupon_code", q.CouponCode, "payload", q.Payload)
		}
	}
	if f := p.Fallback; f != nil && f.SMS != nil {
		t.at(fallbackPath(""), "text", f.SMS.Text, "partner_id", f.SMS.PartnerID, "shortcode", f.SMS.Shortcode)
	}
	return t.at(nil, "idempotency_key", p.IdempotencyKey).result()
}

func templateTexts(p *TemplateCreateParams) error {
	t := new(texts).at(nil, "name", p.Name, "category", p.Category, "language", p.Language)
	for i, c := range p.Components {
		at := record.FieldPath("components").Index(i)
		t.at(at, "type", c.Type, "format", c.Format, "text", c.Text, "example_media", c.ExampleMedia)
		for j, b := range c.Buttons {
			t.at(at.Member("buttons").Index(j), "type", b.Type, "text", b.Text, "url", b.URL, "phone_number", b.PhoneNumber,
				"example", b.Example)
		}
		t.list(at, "examples", c.Examples)
	}
	return t.at(nil, "status", p.Status).result()
}

func templateFilterTexts(f *TemplateFilter) error {
	return new(texts).at(nil, "status", f.Status, "category", f.Category, "language", f.Language).result()
}

func templateEventTexts(ev *TemplateEvent) error {
	return new(texts).at(nil, "workspaceID", ev.WorkspaceID, "ownerID", ev.OwnerID, "providerTemplateID", ev.ProviderTemplateID,
		"name", ev.Name, "language", ev.Language, "event", ev.Event, "reason", ev.Reason, "quality", ev.Quality).result()
}

func channelQualityEventTexts(ev *ChannelQualityEvent) error {
	return new(texts).at(nil, "channel", ev.Channel, "accountID", ev.AccountID, "ownerID", ev.OwnerID,
		"displayPhoneNumber", ev.DisplayPhoneNumber, "event", ev.Event, "qualityRating", ev.QualityRating,
		"messagingTier", ev.MessagingTier).result()
}

func contactCreateTexts(p *ContactCreateParams) error {
	return new(texts).at(nil, "firstName", p.FirstName, "lastName", p.LastName, "phone", p.Phone, "email", p.Email,
		"company", p.Company, "jobTitle", p.JobTitle, "website", p.Website, "notes", p.Notes).
		list(nil, "tags", p.Tags).at(nil, "lifecycle", p.Lifecycle).result()
}

func contactUpdateTexts(p *ContactUpdateParams) error {
	return new(texts).at(nil, "firstName", opt(p.FirstName), "lastName", opt(p.LastName), "phone", opt(p.Phone),
		"email", opt(p.Email), "company", opt(p.Company), "jobTitle", opt(p.JobTitle), "website", opt(p.Website),
		"notes", opt(p.Notes)).list(nil, "tags", opt(p.Tags)).at(nil, "lifecycle", opt(p.Lifecycle)).result()
}

func messageQueryTexts(q *MessageQuery) error {
	return new(texts).at(nil, "direction", q.Direction, "status", q.Status, "channel", q.Channel, "to", q.To,
		"conversationID", q.ConversationID, "cursor", q.Cursor).result()
}

func statusUpdateTexts(u *StatusUpdate) error {
	return new(texts).at(nil, "workspaceID", u.WorkspaceID, "messageID", u.MessageID, "status", u.Status,
		"providerCode", u.ProviderCode, "providerText", u.ProviderText, "providerMessageID", u.ProviderMessageID).result()
}

func providerStatusTexts(p *ProviderStatus) error {
	return new(texts).at(nil, "providerMessageID", p.ProviderMessageID, "status", p.Status, "code", p.Code, "text", p.Text,
		"workspaceID", p.WorkspaceID, "messageID", p.MessageID).result()
}

func inboundTexts(in *InboundMessage) error {
	t := new(texts).at(nil, "workspaceID", in.WorkspaceID, "channel", in.Channel, "from", in.From,
		"providerMessageID", in.ProviderMessageID, "type", in.Type, "text", in.Text, "mediaURL", in.MediaURL, "caption", in.Caption)
	if c := in.Content; c != nil {
		inboundContentTexts(t, record.FieldPath("content"), c)
	}
	return t.result()
}

// inboundContentTexts checks the strings of c, the member at base.
func inboundContentTexts(t *texts, base Path, c *InboundContent) {
	if m := c.Media; m != nil {
		t.at(base.Member("media"), "provider_media_id", m.ProviderMediaID, "mime_type", m.MimeType, "sha256", m.SHA256,
			"caption", m.Caption, "filename", m.Filename)
	}
	if l := c.Location; l != nil {
		t.at(base.Member("location"), "name", l.Name, "address", l.Address, "url", l.URL)
	}
	for i, sc := range c.Contacts {
		at := base.Member("contacts").Index(i)
		t.at(at, "formatted_name", sc.FormattedName, "first_name", sc.FirstName, "last_name", sc.LastName,
			"organization", sc.Organization)
		for j, ph := range sc.Phones {
			t.at(at.Member("phones").Index(j), "phone", ph.Phone, "wa_id", ph.WaID, "type", ph.Type)
		}
		for j, em := range sc.Emails {
			t.at(at.Member("emails").Index(j), "email", em.Email, "type", em.Type)
		}
	}
	if r := c.Reply; r != nil {
		t.at(base.Member("interactive"), "type", r.Kind, "id", r.ID, "title", r.Title, "description", r.Description)
	}
	if r := c.Reaction; r != nil {
		t.at(base.Member("reaction"), "message_id", r.MessageID, "provider_message_id", r.ProviderMessageID, "emoji", r.Emoji)
	}
	if r := c.Context; r != nil {
		t.at(base.Member("context"), "message_id", r.MessageID, "provider_message_id", r.ProviderMessageID)
	}
	t.at(base, "unsupported_type", c.RawType)
}

// credentialTexts names each field of the credentials as the management
// API does (phone_number_id, waba_id, ...), in the order of their names,
// then access_token.
func credentialTexts(c *ChannelCredentials) error {
	t := new(texts)
	for _, name := range slices.Sorted(maps.Keys(c.Fields)) {
		t.at(nil, name, c.Fields[name])
	}
	return t.at(nil, tokenField, c.AccessToken).result()
}

func createWorkspaceTexts(p *CreateWorkspaceParams) error {
	return new(texts).at(nil, "id", p.ID, "name", p.Name).list(nil, "channels", p.Channels).
		at(nil, "outsideWindow", p.OutsideWindow, "unconfirmedSends", p.UnconfirmedSends).
		list(nil, "optOutKeywords", p.OptOutKeywords).list(nil, "optInKeywords", p.OptInKeywords).result()
}

func workspaceSettingsTexts(p *WorkspaceSettings) error {
	return new(texts).at(nil, "outsideWindow", opt(p.OutsideWindow), "unconfirmedSends", opt(p.UnconfirmedSends)).
		list(nil, "optOutKeywords", opt(p.OptOutKeywords)).list(nil, "optInKeywords", opt(p.OptInKeywords)).result()
}

func keyCreateTexts(p *KeyCreateParams) error {
	t := new(texts).at(nil, "name", p.Name).list(nil, "scopes", p.Scopes).at(nil, "key", p.Key)
	if c := p.Creator; c != nil {
		t.at(record.FieldPath("creator"), "workspaceID", c.WorkspaceID, "keyID", c.KeyID).list(record.FieldPath("creator"), "scopes", c.Scopes)
	}
	return t.result()
}

func sessionTexts(p *SessionParams) error {
	return new(texts).at(nil, "subject", p.Subject).list(nil, "workspaces", p.Workspaces).
		list(nil, "smsAccounts", p.SMSAccounts).at(nil, "binding", p.Binding).result()
}

func webhookCreateTexts(p *WebhookCreateParams) error {
	return new(texts).at(nil, "url", p.URL).list(nil, "events", p.Events).
		at(nil, "description", p.Description, "secret", p.Secret).result()
}

func webhookUpdateTexts(p *WebhookUpdateParams) error {
	return new(texts).at(nil, "url", opt(p.URL)).list(nil, "events", opt(p.Events)).
		at(nil, "description", opt(p.Description), "secret", opt(p.Secret)).result()
}

// refuseUnstorableWorkspace refuses a workspace id (of a handle) that no
// store keeps, naming the field workspaceID as the params did when they
// carried the workspace.
func refuseUnstorableWorkspace(ws string) error {
	return new(texts).at(nil, "workspaceID", ws).result()
}
